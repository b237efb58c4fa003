//! Suspensions inside a run: resolved through `wait_for`, or halting the run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Notify;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Message, NativeTool, Refusal, Request, RunStatus, Style, Tool, ToolContext, ToolOutput,
    ToolResult, Toolkit,
};

use crate::support::*;

#[tokio::test]
async fn an_ok_answer_reruns_the_same_call_once_with_the_answer() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi)
        .wait_for(|req: Request| async move { Answer::ok(req.id).with_data(json!({"by": "ann"})) })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 2);
    let contexts = approver.contexts.lock().unwrap().clone();
    assert_eq!(contexts[0].answer, None);
    let answer = contexts[1]
        .answer
        .clone()
        .expect("the re-run gets the answer");
    assert!(answer.ok);
    assert_eq!(answer.data, Some(json!({"by": "ann"})));
    assert_eq!(contexts[1].call_id.as_deref(), Some("call_1"));
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(result.tool_calls[0].metadata, None);
}

/// What the model is sent for a refusal `wait_for` gives, in `style`.
async fn refusal_sent(
    style: Style,
    answer: impl Fn(String) -> Answer + Send + Sync + 'static,
) -> (String, bool) {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
        Reply::text("not bought"),
    ])
    .await
    .unwrap();
    let client = on(&mock, style)
        .wait_for(move |req: Request| std::future::ready(answer(req.id)))
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1, "a refusal is not re-run");
    let record = &result.tool_calls[0];
    let (_, fed_back) = mock.requests()[1].tool_results().pop().unwrap();
    assert_eq!(fed_back, record.output, "the record is what the model saw");
    (record.output.clone(), record.is_error)
}

#[tokio::test]
async fn a_refusals_reason_reaches_the_model_in_each_style() {
    for style in STYLES {
        let with_reason = |id: String| Answer::decline(id, "too risky on a Friday");
        assert_eq!(
            refusal_sent(style, with_reason).await,
            (
                "declined/expired: Approve purchase of gpu? (reason: too risky on a Friday)"
                    .to_owned(),
                true
            ),
            "{style:?}"
        );
        let expired = |id: String| Answer::decline(id, "expired");
        assert_eq!(
            refusal_sent(style, expired).await.0,
            "declined/expired: Approve purchase of gpu? (reason: expired)",
            "{style:?}: an expiry is told from a decline"
        );
        // Without a reason (none, or only blanks) the text is the other ports' exactly.
        for reason in [None, Some("  ")] {
            let answer = move |id: String| Answer {
                reason: reason.map(Refusal::from),
                ..Answer::decline(id, "")
            };
            assert_eq!(
                refusal_sent(style, answer).await,
                (
                    "declined/expired: Approve purchase of gpu?".to_owned(),
                    true
                ),
                "{style:?} {reason:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_persons_note_is_what_the_model_reads_beside_the_code() {
    let noted = |id: String| Answer::refuse(id, Refusal::Cancelled).with_note("wrong account");
    assert_eq!(
        refusal_sent(Style::OpenAi, noted).await,
        (
            "declined/expired: Approve purchase of gpu? (reason: wrong account)".to_owned(),
            true
        )
    );
    let bare = |id: String| Answer::refuse(id, Refusal::Cancelled).with_note("  ");
    assert_eq!(
        refusal_sent(Style::OpenAi, bare).await.0,
        "declined/expired: Approve purchase of gpu? (reason: cancelled)",
        "a blank note leaves the code to be read"
    );
}

#[tokio::test]
async fn a_second_suspension_on_the_rerun_is_unresolved() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let stubborn = NativeTool::of(
        "stubborn",
        "Never satisfied",
        json!({"type": "object"}),
        move |_, _| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move { ToolResult::pending(Request::new("approval", format!("Approve attempt {n}?"))) }
        },
    );
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "stubborn", json!({})),
        Reply::text("gave up"),
    ])
    .await
    .unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let asked2 = asked.clone();
    let client = on(&mock, Style::OpenAi)
        .wait_for(move |req: Request| {
            asked2.fetch_add(1, Ordering::SeqCst);
            async move { Answer::ok(req.id) }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(stubborn).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "re-run once, never looped");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert_eq!(call.output, "unresolved: Approve attempt 0?");
    assert_eq!(mock.requests()[1].tool_results()[0].1, call.output);
}

#[tokio::test]
async fn an_answer_for_another_request_is_not_trusted() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi)
        .wait_for(|_req: Request| async move { Answer::ok("someone-else") })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1, "no re-run on a mismatched answer");
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert!(
        call.output
            .starts_with("unresolved: Approve purchase of gpu?"),
        "{}",
        call.output
    );
}

#[tokio::test]
async fn several_suspensions_with_wait_for_each_resolve() {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("call_1", "approve_purchase", json!({"item": "gpu"})),
            ("call_2", "approve_purchase", json!({"item": "cpu"})),
            ("call_3", "approve_purchase", json!({"item": "ram"})),
        ]),
        Reply::text("all done"),
    ])
    .await
    .unwrap();
    let asked = Arc::new(Mutex::new(Vec::<Request>::new()));
    let asked2 = asked.clone();
    let client = on(&mock, Style::OpenAi)
        .wait_for(move |req: Request| {
            asked2.lock().unwrap().push(req.clone());
            async move {
                if req.prompt.contains("cpu") {
                    Answer::decline(req.id, "declined")
                } else {
                    Answer::ok(req.id)
                }
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    let mut prompts: Vec<String> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.prompt.clone())
        .collect();
    prompts.sort();
    assert_eq!(
        prompts,
        [
            "Approve purchase of cpu?",
            "Approve purchase of gpu?",
            "Approve purchase of ram?"
        ]
    );
    assert_eq!(
        mock.requests()[1].tool_results(),
        vec![
            ("call_1".to_owned(), "approved: gpu".to_owned()),
            (
                "call_2".to_owned(),
                "declined/expired: Approve purchase of cpu? (reason: declined)".to_owned()
            ),
            ("call_3".to_owned(), "approved: ram".to_owned()),
        ]
    );
    assert_eq!(
        approver.runs(),
        5,
        "3 first runs + 2 re-runs; the refusal is not re-run"
    );
}

#[tokio::test]
async fn without_wait_for_the_run_halts_pending() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(mock.calls(), 1, "the run does not go on");
    let request = result.pending.clone().expect("the request it halted on");
    assert_eq!(request.kind, "approval");
    assert_eq!(request.prompt, "Approve purchase of gpu?");
    assert_eq!(
        result.text, request.prompt,
        "a halted run's text is the prompt"
    );
    assert!(result.limit.is_none());
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(
        ToolResult::pending_of(&ToolResult {
            output: result.tool_calls[0].output.clone(),
            is_error: result.tool_calls[0].is_error,
            metadata: result.tool_calls[0].metadata.clone(),
        }),
        Some(request.clone())
    );
    assert_eq!(
        result.messages.last(),
        Some(&Message::ToolResults {
            results: vec![ToolOutput {
                call_id: "call_1".into(),
                name: "approve_purchase".into(),
                output: "Approve purchase of gpu?".into(),
                is_error: true,
                pending: Some(request),
                pending_more: Vec::new(),
                answered: Vec::new(),
                approval: None,
                trace: None,
                // Bound to the call as the model made it.
                call_digest: Some(toolnexus::call_digest(
                    "approve_purchase",
                    &serde_json::json!({"item": "gpu"})
                )),
                resume: None,
            }]
        })
    );
}

#[tokio::test]
async fn a_halted_placeholder_holds_the_bare_prompt_even_with_a_url() {
    let sign_in = NativeTool::of(
        "sign_in",
        "Needs a browser sign-in",
        json!({"type": "object"}),
        |_, _| async {
            ToolResult::pending(
                Request::new("oauth", "Sign in to the calendar").with_url("https://id.example/x"),
            )
        },
    );
    let mock = MockLlm::start([Reply::tool_call("call_1", "sign_in", json!({}))])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(sign_in).build().unwrap();
    let result = client.run("book", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Pending);
    let Some(Message::ToolResults { results }) = result.messages.last() else {
        panic!(
            "the transcript ends with the halted group: {:?}",
            result.messages
        );
    };
    assert_eq!(results[0].output, "Sign in to the calendar");
    let request = results[0]
        .pending
        .as_ref()
        .expect("the placeholder keeps its request");
    assert_eq!(request.url.as_deref(), Some("https://id.example/x"));
}

/// `park`: suspends with a prompt naming its `tag`; with `late: true` it first waits until
/// a sibling `park` without `late` has suspended, so the first suspension in call order is
/// the last to finish.
fn park(gate: Arc<Notify>) -> impl Tool {
    NativeTool::of(
        "park",
        "Suspends",
        json!({"type": "object"}),
        move |args: Value, ctx: ToolContext| {
            let gate = gate.clone();
            async move {
                let tag = args["tag"].as_str().unwrap_or_default().to_owned();
                if let Some(answer) = ctx.answer {
                    return ToolResult::ok(format!("{tag} answered {}", answer.ok));
                }
                if args["late"] == true {
                    gate.notified().await;
                } else {
                    gate.notify_one();
                }
                ToolResult::pending(Request::new("input", format!("need {tag}")))
            }
        },
    )
}

pub fn halting_turn() -> Reply {
    Reply::tool_calls([
        ("call_1", "echo", json!({"item": "one"})),
        ("call_2", "park", json!({"tag": "A", "late": true})),
        ("call_3", "echo", json!({"item": "three"})),
        ("call_4", "park", json!({"tag": "B"})),
    ])
}

pub fn halting_toolkit(echo_runs: Arc<AtomicUsize>) -> Toolkit {
    Toolkit::builder()
        .tool(echo(echo_runs))
        .tool(park(Arc::new(Notify::new())))
        .build()
        .unwrap()
}

#[tokio::test]
async fn several_suspensions_all_wait_in_call_order() {
    let mock = MockLlm::start([halting_turn()]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = halting_toolkit(Arc::new(AtomicUsize::new(0)));
    let result = tokio::time::timeout(Duration::from_secs(10), client.run("go", &tk))
        .await
        .expect("calls run concurrently")
        .unwrap();

    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(result.pending.as_ref().unwrap().prompt, "need A");
    let waiting: Vec<&str> = result.waiting.iter().map(|r| r.prompt.as_str()).collect();
    assert_eq!(waiting, ["need A", "need B"]);
    assert_eq!(result.pending.as_ref(), result.waiting.first());
    let Some(Message::ToolResults { results }) = result.messages.last() else {
        panic!("the transcript ends with the turn's results");
    };
    let laid: Vec<(&str, &str, bool)> = results
        .iter()
        .map(|r| (r.call_id.as_str(), r.output.as_str(), r.pending.is_some()))
        .collect();
    assert_eq!(
        laid,
        [
            ("call_1", "echo: one", false),
            ("call_2", "need A", true),
            ("call_3", "echo: three", false),
            ("call_4", "need B", true),
        ],
        "completed results in call order, and a placeholder for each waiting call"
    );
    let recorded: Vec<&str> = result.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(recorded, ["call_1", "call_2", "call_3", "call_4"]);
}
