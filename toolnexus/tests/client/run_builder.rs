//! Every way of starting a run composes from `run` and `run_with_answer`: a history, options,
//! a cancellation token and streaming, in any combination, on fresh runs, resumed runs and
//! a conversation's runs alike.

use futures::StreamExt;
use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, CancellationToken, ClientError, Message, NativeTool, RunOptions, RunStatus,
    StreamEvent, Style, Tool, ToolContext, ToolResult, Toolkit,
};

use crate::support::*;

/// The last item of a stream, which must be its `Done`.
fn done(events: &[Result<StreamEvent, ClientError>]) -> toolnexus::RunResult {
    match events.last() {
        Some(Ok(StreamEvent::Done(result))) => result.clone(),
        other => panic!("the stream did not end with Done: {other:?}"),
    }
}

/// What the user said in a request's transcript.
fn user_turns(mock: &MockLlm, request: usize) -> Vec<String> {
    mock.requests()[request].prompts()
}

struct Tenant(&'static str);

/// `whose`: says which tenant's extension reached it.
fn whose() -> impl Tool {
    NativeTool::of(
        "whose",
        "Names the tenant",
        json!({"type": "object", "properties": {}}),
        |_args, ctx: ToolContext| async move {
            match ctx.extensions.get::<Tenant>() {
                Some(tenant) => ToolResult::ok(format!("tenant {}", tenant.0)),
                None => ToolResult::error("no tenant"),
            }
        },
    )
}

#[tokio::test]
async fn a_streamed_run_continues_a_history() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("first"), Reply::text("second")])
            .await
            .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::empty();
        let before = client.run("one", &tk).await.unwrap();

        let events: Vec<_> = client
            .run("two", &tk)
            .history(before.messages.clone())
            .stream()
            .collect()
            .await;
        let result = done(&events);
        assert_eq!(result.text, "second", "{style:?}");
        assert_eq!(result.messages.len(), 4, "{style:?}: both exchanges");
        assert_eq!(result.messages[..2], before.messages[..], "{style:?}");
        assert!(mock.requests()[1].is_stream(), "{style:?}");
        assert_eq!(user_turns(&mock, 1), ["one", "two"], "{style:?}");
    }
}

#[tokio::test]
async fn history_options_and_cancel_compose_on_one_run() {
    let mock = MockLlm::start([
        Reply::text("hello"),
        Reply::tool_call("c1", "whose", json!({})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(whose()).build().unwrap();
    let before = client.run("hi", &tk).await.unwrap();

    let cancel = CancellationToken::new();
    let result = client
        .run("whose is it?", &tk)
        .cancel(cancel.clone())
        .options(RunOptions::new().extension(Tenant("acme")).temperature(0.5))
        .history(before.messages)
        .await
        .unwrap();
    assert_eq!(result.tool_calls[0].output, "tenant acme");
    assert_eq!(result.text, "done");
    assert_eq!(mock.requests()[1].body["temperature"], 0.5);
    assert_eq!(user_turns(&mock, 1), ["hi", "whose is it?"]);
    assert!(!cancel.is_cancelled());
}

#[tokio::test]
async fn a_resumed_run_streams_with_its_options() {
    for style in STYLES {
        let approver = Approver::default();
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
            Reply::tool_call("call_2", "whose", json!({})),
            Reply::text("bought"),
        ])
        .await
        .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder()
            .tool(approver.tool())
            .tool(whose())
            .build()
            .unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        let request = halted.pending.clone().unwrap();

        let events: Vec<_> = client
            .run_with_answer(halted.messages, &request, Answer::ok(&request.id), &tk)
            .options(RunOptions::new().extension(Tenant("acme")).max_tokens(64))
            .stream()
            .collect()
            .await;
        let result = done(&events);
        assert_eq!(result.status, RunStatus::Done, "{style:?}");
        let outputs: Vec<_> = result.tool_calls.iter().map(|c| &c.output[..]).collect();
        assert_eq!(outputs, ["approved: gpu", "tenant acme"], "{style:?}");
        assert!(events.iter().any(|e| matches!(
            e,
            Ok(StreamEvent::ToolResult { id, .. }) if id == "call_1"
        )));
        assert!(mock.requests()[1].is_stream(), "{style:?}");
    }
}

#[tokio::test]
async fn a_cancelled_token_stops_a_resume_before_anything_is_sent() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy a gpu", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();

    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = client
        .run_with_answer(halted.messages, &request, Answer::ok(&request.id), &tk)
        .cancel(cancel)
        .await
        .unwrap_err();
    assert_eq!(err, ClientError::Cancelled);
    assert_eq!(mock.calls(), 1, "only the halted run's request was sent");
    assert_eq!(approver.runs(), 1, "the approved call did not run again");
}

#[tokio::test]
async fn a_conversation_streams_cancels_and_takes_options() {
    let mock = MockLlm::start([
        Reply::text("noted"),
        Reply::tool_call("c1", "whose", json!({})),
        Reply::text("acme's"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::Gemini).build().unwrap();
    let tk = Toolkit::builder().tool(whose()).build().unwrap();
    let chat = client.conversation("t-1");

    let events: Vec<_> = chat.send("remember me", &tk).stream().collect().await;
    assert_eq!(done(&events).text, "noted");
    assert_eq!(chat.messages().await.unwrap().len(), 2, "the stream saved");

    let result = chat
        .send("whose is it?", &tk)
        .options(RunOptions::new().extension(Tenant("acme")))
        .await
        .unwrap();
    assert_eq!(result.tool_calls[0].output, "tenant acme");
    assert_eq!(chat.messages().await.unwrap(), result.messages);

    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = chat.send("more", &tk).cancel(cancel).await.unwrap_err();
    assert_eq!(err, ClientError::Cancelled);
    assert_eq!(
        chat.messages().await.unwrap(),
        result.messages,
        "a cancelled run saves nothing"
    );
    assert_eq!(mock.calls(), 3);
}

#[tokio::test]
async fn a_halted_thread_resumes_streamed() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::Responses).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let chat = client.conversation("shop");
    let halted = chat.send("buy a gpu", &tk).await.unwrap();
    let request = halted.pending.unwrap();

    let events: Vec<_> = chat
        .resume(&request, Answer::ok(&request.id), &tk)
        .stream()
        .collect()
        .await;
    let result = done(&events);
    assert_eq!(result.text, "bought");
    let stored: Vec<Message> = chat.messages().await.unwrap();
    assert_eq!(stored, result.messages);
}

#[tokio::test]
async fn runs_are_send_and_spawnable() {
    let mock = MockLlm::start([Reply::text("from a task"), Reply::text("streamed")])
        .await
        .unwrap();
    let client = std::sync::Arc::new(on(&mock, Style::OpenAi).build().unwrap());
    let tk = std::sync::Arc::new(Toolkit::empty());
    let (c, t) = (client.clone(), tk.clone());
    let awaited = tokio::spawn(async move { c.run("go", &t).await });
    assert_eq!(awaited.await.unwrap().unwrap().text, "from a task");
    let streamed = tokio::spawn(async move {
        let events: Vec<_> = client.stream("go", &tk).collect().await;
        done(&events).text
    });
    assert_eq!(streamed.await.unwrap(), "streamed");
}

#[test]
fn a_run_shows_its_settings_but_never_its_extensions_values() {
    let client = toolnexus::LlmClient::builder()
        .model("m")
        .api_key("sk-secret")
        .build()
        .unwrap();
    let tk = Toolkit::empty();
    let run = client
        .run("go", &tk)
        .options(RunOptions::new().extension(Tenant("acme")).temperature(0.1))
        .cancel(CancellationToken::new());
    let shown = format!("{run:?}");
    assert!(shown.contains("cancellable: true"), "{shown}");
    assert!(!shown.contains("sk-secret"), "{shown}");
    assert!(!shown.contains("acme"), "{shown}");
}
