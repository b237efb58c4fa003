//! The hooks around model calls and tool calls.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, BeforeTool, LlmCall, Message, Request, RunStatus, Style, ToolOutcome, ToolResult,
    Toolkit,
};

use crate::support::*;

#[tokio::test]
async fn before_llm_replaces_what_is_sent_but_not_the_transcript() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let turns = Arc::new(Mutex::new(Vec::new()));
    let turns2 = turns.clone();
    let client = on(&mock, Style::OpenAi)
        .before_llm(move |mut call: LlmCall| {
            turns2.lock().unwrap().push(call.turn);
            async move {
                call.messages.insert(0, Message::system("injected"));
                call.tools = Toolkit::empty();
                call
            }
        })
        .build()
        .unwrap();
    let tk = echo_toolkit();
    let result = client.run("hello", &tk).await.unwrap();

    assert_eq!(*turns.lock().unwrap(), [1]);
    let body = &mock.requests()[0].body;
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "injected"})
    );
    assert!(
        body.get("tools").is_none(),
        "the hook's empty toolkit was offered"
    );
    assert!(
        matches!(&result.messages[0], Message::User { content, .. } if content == "hello"),
        "{:?}",
        result.messages[0]
    );
    assert!(result.messages[0].run_id().is_some(), "the run's own id");
    assert_eq!(
        result.messages[1..],
        vec![Message::Assistant {
            state: None,
            content: "hi".into(),
            tool_calls: vec![]
        }]
    );
}

#[tokio::test]
async fn after_llm_sees_each_raw_response() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let raw = Arc::new(Mutex::new(Vec::<Value>::new()));
    let raw2 = raw.clone();
    let client = on(&mock, Style::OpenAi)
        .after_llm(move |body: Value| {
            let raw = raw2.clone();
            async move { raw.lock().unwrap().push(body) }
        })
        .build()
        .unwrap();
    let tk = echo_toolkit();
    client.run("go", &tk).await.unwrap();
    let raw = raw.lock().unwrap();
    assert_eq!(raw.len(), 2);
    assert_eq!(raw[0]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(raw[1]["choices"][0]["message"]["content"], "done");
}

#[tokio::test]
async fn before_tool_rewrites_arguments_or_answers_in_the_tools_place() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("call_1", "echo", json!({"item": "raw"})),
            ("call_2", "echo", json!({"item": "blocked"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .before_tool(|call| async move {
            match call.args["item"].as_str() {
                Some("raw") => BeforeTool::RewriteArgs(json!({"item": "cooked"})),
                Some("blocked") => BeforeTool::ShortCircuit(ToolResult::error("policy: blocked")),
                _ => BeforeTool::Continue,
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(echo(runs.clone())).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();

    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(result.tool_calls[0].output, "echo: cooked");
    assert_eq!(
        result.tool_calls[0].args,
        json!({"item": "raw"}),
        "the model's arguments are recorded"
    );
    assert_eq!(result.tool_calls[1].output, "policy: blocked");
    assert!(result.tool_calls[1].is_error);
    assert_eq!(
        mock.requests()[1].tool_results(),
        vec![
            ("call_1".to_owned(), "echo: cooked".to_owned()),
            ("call_2".to_owned(), "policy: blocked".to_owned()),
        ]
    );
}

#[tokio::test]
async fn after_tool_replaces_results_and_never_sees_a_suspension_as_a_failure() {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("call_1", "approve_purchase", json!({"item": "gpu"})),
            ("call_2", "missing", json!({})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen2 = seen.clone();
    let client = on(&mock, Style::OpenAi)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .after_tool(move |call, outcome| {
            let seen = seen2.clone();
            async move {
                let kind = match &outcome {
                    ToolOutcome::Success(_) => "success",
                    ToolOutcome::Failure(_) => "failure",
                    ToolOutcome::Pending { .. } => "pending",
                };
                seen.lock().unwrap().push(format!(
                    "{} {kind} answered={}",
                    call.name,
                    call.answer.is_some()
                ));
                match outcome {
                    ToolOutcome::Failure(r) => ToolResult::error(format!("[hooked] {}", r.output)),
                    other => other.into_result(),
                }
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();

    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "approve_purchase success answered=true",
            "missing failure answered=false",
        ]
    );
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert!(result.tool_calls[1]
        .output
        .starts_with("[hooked] unknown tool"));
    assert_eq!(
        mock.requests()[1].tool_results()[1].1,
        result.tool_calls[1].output
    );
}

#[tokio::test]
async fn a_suspension_raised_by_before_tool_is_resolved_like_the_tools_own() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "guarded"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let metrics = Metrics::default();
    let outcomes = Arc::new(Mutex::new(Vec::<bool>::new()));
    let outcomes2 = outcomes.clone();
    let client = on(&mock, Style::OpenAi)
        .before_tool(|call| async move {
            match call.answer {
                None => BeforeTool::ShortCircuit(ToolResult::pending(Request::new(
                    "approval",
                    format!("Allow {}?", call.name),
                ))),
                Some(_) => BeforeTool::Continue,
            }
        })
        .after_tool(move |_, outcome| {
            outcomes2
                .lock()
                .unwrap()
                .push(matches!(outcome, ToolOutcome::Failure(_)));
            async move { outcome.into_result() }
        })
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .on_metric(metrics.sink())
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(echo(runs.clone())).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();

    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "ran once, after the answer"
    );
    assert_eq!(result.tool_calls[0].output, "echo: guarded");
    assert_eq!(
        *outcomes.lock().unwrap(),
        [false],
        "the hook sees only the resolved call"
    );
    assert_eq!(
        metrics.tools(),
        [
            ("echo".to_owned(), false, true),
            ("echo".to_owned(), false, false)
        ]
    );
}

#[tokio::test]
async fn after_tool_skips_a_halted_call_and_sees_it_once_on_resume() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let seen = Arc::new(Mutex::new(Vec::<bool>::new()));
    let seen2 = seen.clone();
    let client = on(&mock, Style::OpenAi)
        .after_tool(move |call, _| {
            seen2.lock().unwrap().push(call.answer.is_some());
            async { ToolResult::ok("replaced") }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();

    assert_eq!(
        halted.status,
        RunStatus::Pending,
        "the hook cannot cancel it"
    );
    assert!(seen.lock().unwrap().is_empty(), "skipped while pending");
    let request = halted.pending.clone().unwrap();
    let answer = Answer::ok(request.id.clone());
    let done = client
        .run_with_answer(halted.messages, &request, answer, &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(*seen.lock().unwrap(), [true], "once, on the settled result");
    assert_eq!(mock.requests()[1].tool_results()[0].1, "replaced");
}
