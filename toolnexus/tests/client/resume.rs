//! Durable resume: a halted run continued later, possibly by another process.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{Answer, ClientError, Message, Request, RunResult, RunStatus, Style, Toolkit};

use crate::support::*;
use crate::suspension::{halting_toolkit, halting_turn};

/// Writes what a durable host would persist, and reads it back.
fn persist(result: &RunResult) -> (String, String) {
    (
        serde_json::to_string(&result.messages).unwrap(),
        serde_json::to_string(result.pending.as_ref().unwrap()).unwrap(),
    )
}

fn load(saved: &(String, String)) -> (Vec<Message>, Request) {
    (
        serde_json::from_str(&saved.0).unwrap(),
        serde_json::from_str(&saved.1).unwrap(),
    )
}

#[tokio::test]
async fn a_new_client_resumes_a_persisted_run() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let saved = {
        let client = on(&mock, Style::OpenAi)
            .system_prompt("shop")
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        persist(&halted)
    };

    // Another "process": nothing but the persisted text survives.
    let (transcript, request) = load(&saved);
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let answer = Answer::ok(request.id.clone());
    let result = client
        .run_with_answer(transcript, &request, answer, &tk)
        .await
        .unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(result.turns, 1);
    assert_eq!(mock.calls(), 2);
    assert_eq!(approver.runs(), 2);
    let rerun = approver.contexts.lock().unwrap()[1].clone();
    assert_eq!(rerun.answer.map(|a| a.id), Some(request.id.clone()));
    assert_eq!(rerun.call_id.as_deref(), Some("call_1"));
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(result.tool_calls[0].args, json!({"item": "gpu"}));

    let requests = mock.requests();
    let sent = requests[1].messages();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool"],
        "no new user turn"
    );
    assert_eq!(
        requests[1].tool_results(),
        vec![("call_1".to_owned(), "approved: gpu".to_owned())],
        "the placeholder is replaced, not kept beside the result"
    );
    assert!(result.messages.iter().all(|m| match m {
        Message::ToolResults { results } => results.iter().all(|r| r.pending.is_none()),
        _ => true,
    }));
}

#[tokio::test]
async fn a_mismatched_answer_is_refused_and_nothing_is_sent() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();

    let err = client
        .run_with_answer(halted.messages.clone(), &request, Answer::ok("forged"), &tk)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::AnswerMismatch {
            request: request.id.clone(),
            answer: "forged".into()
        }
    );
    assert!(err.to_string().contains("forged"), "{err}");

    let other = Request::new("approval", "Approve purchase of gpu?").with_id("other-id");
    let err = client
        .run_with_answer(halted.messages.clone(), &other, Answer::ok("other-id"), &tk)
        .await
        .unwrap_err();
    assert_eq!(err, ClientError::RequestMismatch("other-id".into()));

    let mut done = halted.messages.clone();
    done.truncate(2);
    let err = client
        .run_with_answer(done, &request, Answer::ok(request.id.clone()), &tk)
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidTranscript(_)), "{err}");

    assert_eq!(mock.calls(), 1, "no refused resume reached the model");
    assert_eq!(approver.runs(), 1, "no refused resume ran the tool");
}

#[tokio::test]
async fn a_resume_with_a_toolkit_lacking_the_halted_tool_is_refused_naming_it() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    let tool = tk.names().next().unwrap().to_owned();

    let err = client
        .run_with_answer(
            halted.messages.clone(),
            &request,
            Answer::ok(request.id.clone()),
            &Toolkit::empty(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidTranscript(_)), "{err}");
    assert!(err.to_string().contains(&format!("`{tool}`")), "{err}");
    assert_eq!(
        mock.calls(),
        1,
        "the refused resume never reached the model"
    );
    assert_eq!(approver.runs(), 1);

    // The right toolkit still resumes the same transcript.
    let done = client
        .run_with_answer(
            halted.messages,
            &request,
            Answer::ok(request.id.clone()),
            &tk,
        )
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
}

#[tokio::test]
async fn a_declined_resume_feeds_back_the_refusal() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    let answer = Answer::decline(request.id.clone(), "expired");
    let result = client
        .run_with_answer(halted.messages, &request, answer, &tk)
        .await
        .unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1, "a refusal does not re-run the tool");
    assert_eq!(
        mock.requests()[1].tool_results()[0].1,
        "declined/expired: Approve purchase of gpu? (reason: expired)"
    );
    assert!(result.tool_calls[0].is_error);
}

#[tokio::test]
async fn resuming_settles_every_call_of_the_turn_exactly_once() {
    let echo_runs = Arc::new(AtomicUsize::new(0));
    let mock = MockLlm::start([halting_turn(), Reply::text("finished")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = halting_toolkit(echo_runs.clone());
    let first = client.run("go", &tk).await.unwrap();
    let request_a = first.pending.clone().unwrap();
    assert_eq!(request_a.prompt, "need A");

    // Both waited from the start; answering A alone leaves B waiting on the same request.
    assert_eq!(first.waiting.len(), 2);
    let saved = persist(&first);
    let (messages, request) = load(&saved);
    let second = client
        .run_with_answer(messages, &request, Answer::ok(request.id.clone()), &tk)
        .await
        .unwrap();
    assert_eq!(second.status, RunStatus::Pending);
    let request_b = second.pending.clone().unwrap();
    assert_eq!(
        request_b, first.waiting[1],
        "B asks with the request it asked first"
    );
    assert_eq!(second.waiting.as_slice(), std::slice::from_ref(&request_b));
    assert_eq!(second.turns, 0);
    assert_eq!(
        mock.calls(),
        1,
        "the model waits until every call has a result"
    );
    assert_eq!(
        echo_runs.load(Ordering::SeqCst),
        2,
        "completed calls are not re-run"
    );
    let recorded: Vec<(&str, &str)> = second
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.output.as_str()))
        .collect();
    assert_eq!(
        recorded,
        [("call_2", "A answered true")],
        "B still waits: it is not run again"
    );

    let saved = persist(&second);
    let (messages, request) = load(&saved);
    let err = client
        .run_with_answer(
            messages.clone(),
            &request_a,
            Answer::ok(request_a.id.clone()),
            &tk,
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::RequestMismatch(request_a.id.clone()),
        "A is settled"
    );
    let done = client
        .run_with_answer(messages, &request, Answer::ok(request.id.clone()), &tk)
        .await
        .unwrap();

    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "finished");
    assert_eq!(mock.calls(), 2);
    assert_eq!(echo_runs.load(Ordering::SeqCst), 2);
    assert_eq!(
        mock.requests()[1].tool_results(),
        vec![
            ("call_1".to_owned(), "echo: one".to_owned()),
            ("call_2".to_owned(), "A answered true".to_owned()),
            ("call_3".to_owned(), "echo: three".to_owned()),
            ("call_4".to_owned(), "B answered true".to_owned()),
        ],
        "one result per call, in call order"
    );
}

#[tokio::test]
async fn anthropic_resume_sends_one_user_message_of_results() {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("tu_1", "approve_purchase", json!({"item": "gpu"})),
            ("tu_2", "approve_purchase", json!({"item": "cpu"})),
        ]),
        Reply::text("both handled"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let first = client.run("buy", &tk).await.unwrap();
    let gpu = first.pending.clone().unwrap();
    assert_eq!(gpu.prompt, "Approve purchase of gpu?");

    let second = client
        .run_with_answer(first.messages, &gpu, Answer::ok(gpu.id.clone()), &tk)
        .await
        .unwrap();
    let cpu = second.pending.clone().unwrap();
    assert_eq!(cpu.prompt, "Approve purchase of cpu?");
    let done = client
        .run_with_answer(
            second.messages,
            &cpu,
            Answer::decline(cpu.id.clone(), "declined"),
            &tk,
        )
        .await
        .unwrap();

    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.usage.prompt_tokens, 15);
    let requests = mock.requests();
    let sent = requests[1].messages();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": "approved: gpu"},
            {"type": "tool_result", "tool_use_id": "tu_2", "content": "declined/expired: Approve purchase of cpu? (reason: declined)", "is_error": true},
        ]})
    );
}
