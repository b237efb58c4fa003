//! A call that asks several questions at once (`pending_all!`): answered one by one through
//! `wait_for`, or halting a durable run on all of them and resumed as they are answered.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    pending_all, Answer, ClientError, LlmClient, Message, NativeTool, Request, RunResult,
    RunStatus, Style, Tool, ToolContext, ToolOutcome, ToolResult, Toolkit,
};

use crate::support::*;

/// `ship`: asks whether to ship an order and for a gift note, both at once, under ids of
/// its own; ships with both answers once re-run. Remembers every context it ran with.
#[derive(Clone, Default)]
struct Shipper {
    contexts: Arc<Mutex<Vec<ToolContext>>>,
}

impl Shipper {
    fn tool(&self) -> impl Tool + use<> {
        let contexts = self.contexts.clone();
        NativeTool::of(
            "ship",
            "Ships an order",
            item_schema(),
            move |args, ctx: ToolContext| {
                contexts.lock().unwrap().push(ctx.clone());
                async move {
                    let item = args["item"].as_str().unwrap_or("?").to_owned();
                    match ctx.answers.as_slice() {
                        [] => pending_all![
                            (
                                kind = "approval",
                                prompt = format!("Ship {item}?"),
                                id = "ship"
                            ),
                            (kind = "input", prompt = "Gift note?", id = "note"),
                        ],
                        [yes, note] => ToolResult::ok(format!(
                            "shipped {item} ({}, note: {})",
                            yes.ok,
                            note.data
                                .as_ref()
                                .map_or("none".to_owned(), |d| d.to_string())
                        )),
                        other => ToolResult::error(format!("{} answers", other.len())),
                    }
                }
            },
        )
    }

    fn contexts(&self) -> Vec<ToolContext> {
        self.contexts.lock().unwrap().clone()
    }
}

async fn ship_mock() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "ship", json!({"item": "gpu"})),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

fn through_json(run: &RunResult) -> Vec<Message> {
    serde_json::from_str(&serde_json::to_string(&run.messages).unwrap()).unwrap()
}

fn placeholder(messages: &[Message]) -> toolnexus::ToolOutput {
    match messages.last() {
        Some(Message::ToolResults { results }) => results[0].clone(),
        other => panic!("no tool results at the end: {other:?}"),
    }
}

#[tokio::test]
async fn each_request_goes_to_wait_for_and_the_call_reruns_once_with_all_answers() {
    for style in STYLES {
        let shipper = Shipper::default();
        let mock = ship_mock().await;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let client = on(&mock, style)
            .wait_for(move |req: Request| {
                seen.lock().unwrap().push(req.id.clone());
                let answer = match req.id.as_str() {
                    "note" => Answer::ok(req.id).with_data(json!({"text": "enjoy"})),
                    _ => Answer::ok(req.id),
                };
                std::future::ready(answer)
            })
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(shipper.tool()).build().unwrap();
        let result = client.run("ship a gpu", &tk).await.unwrap();

        assert_eq!(result.status, RunStatus::Done, "{style:?}");
        assert_eq!(*asked.lock().unwrap(), ["ship", "note"], "{style:?}");
        let contexts = shipper.contexts();
        assert_eq!(contexts.len(), 2, "one first run, one re-run: {style:?}");
        let ids: Vec<&str> = contexts[1].answers.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["ship", "note"], "in the order asked: {style:?}");
        assert_eq!(
            contexts[1].answer.as_ref().map(|a| a.id.as_str()),
            Some("ship")
        );
        let expected = r#"shipped gpu (true, note: {"text":"enjoy"})"#;
        assert_eq!(result.tool_calls[0].output, expected, "{style:?}");
        let (_, fed_back) = mock.requests()[1].tool_results().pop().unwrap();
        assert_eq!(fed_back, expected, "{style:?}");
    }
}

#[tokio::test]
async fn a_refusal_of_any_request_refuses_the_call_and_asks_no_further() {
    for refused in ["ship", "note"] {
        let shipper = Shipper::default();
        let mock = ship_mock().await;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let client = on(&mock, Style::OpenAi)
            .wait_for(move |req: Request| {
                seen.lock().unwrap().push(req.id.clone());
                let answer = match req.id == refused {
                    true => Answer::decline(req.id, "declined"),
                    false => Answer::ok(req.id),
                };
                std::future::ready(answer)
            })
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(shipper.tool()).build().unwrap();
        let result = client.run("ship a gpu", &tk).await.unwrap();

        assert_eq!(shipper.contexts().len(), 1, "a refused call never re-runs");
        let record = &result.tool_calls[0];
        assert!(record.is_error && !record.is_pending());
        let prompt = if refused == "ship" {
            "Ship gpu?"
        } else {
            "Gift note?"
        };
        assert_eq!(
            record.output,
            format!("declined/expired: {prompt} (reason: declined)")
        );
        let expected: &[&str] = if refused == "ship" {
            &["ship"]
        } else {
            &["ship", "note"]
        };
        assert_eq!(*asked.lock().unwrap(), expected);
    }
}

async fn halted(style: Style) -> (Shipper, MockLlm, LlmClient, Toolkit, RunResult) {
    let shipper = Shipper::default();
    let mock = ship_mock().await;
    let client = on(&mock, style).build().unwrap();
    let tk = Toolkit::builder().tool(shipper.tool()).build().unwrap();
    let halted = client.run("ship a gpu", &tk).await.unwrap();
    (shipper, mock, client, tk, halted)
}

#[tokio::test]
async fn a_durable_run_halts_on_every_request_and_resumes_once_all_are_answered() {
    for style in STYLES {
        let (shipper, mock, client, tk, halted) = halted(style).await;
        assert_eq!(halted.status, RunStatus::Pending);
        let ids: Vec<&str> = halted.waiting.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["ship", "note"], "{style:?}");
        assert_eq!(halted.pending.as_ref(), halted.waiting.first());
        assert_eq!(halted.text, "Ship gpu?");
        let record = &halted.tool_calls[0];
        assert_eq!(record.requests(), halted.waiting);
        assert_eq!(record.pending().as_ref(), halted.waiting.first());
        let parked = placeholder(&halted.messages);
        assert_eq!(
            parked.requests().cloned().collect::<Vec<_>>(),
            halted.waiting
        );

        // The note first: the call keeps waiting on the other, holding the answer given.
        let note = Answer::ok("note").with_data(json!({"text": "enjoy"}));
        let half = client
            .run_with_answers(through_json(&halted), vec![note.clone()], &tk)
            .await
            .unwrap();
        assert_eq!(half.status, RunStatus::Pending, "{style:?}");
        let ids: Vec<&str> = half.waiting.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            ["ship"],
            "only the unanswered request waits: {style:?}"
        );
        assert_eq!(placeholder(&half.messages).answered, vec![note.clone()]);
        assert_eq!(shipper.contexts().len(), 1, "nothing re-ran yet");
        assert_eq!(
            mock.calls(),
            1,
            "the model is not called while a call waits"
        );

        // The same answer again is refused: it was recorded.
        let again = client
            .run_with_answers(through_json(&half), vec![note.clone()], &tk)
            .await;
        assert!(
            matches!(again, Err(ClientError::InvalidAnswer { ref request, .. }) if request == "note"),
            "{again:?}"
        );

        let request = half.pending.clone().unwrap();
        let done = client
            .run_with_answer(through_json(&half), &request, Answer::ok("ship"), &tk)
            .await
            .unwrap();
        assert_eq!(done.status, RunStatus::Done, "{style:?}");
        let contexts = shipper.contexts();
        assert_eq!(contexts.len(), 2, "re-run once: {style:?}");
        assert_eq!(contexts[1].answers, vec![Answer::ok("ship"), note.clone()]);
        assert_eq!(
            done.tool_calls[0].output,
            r#"shipped gpu (true, note: {"text":"enjoy"})"#
        );
        match &done.messages[done.messages.len() - 2] {
            Message::ToolResults { results } => {
                assert_eq!(results.len(), 1, "the placeholder is replaced");
                assert!(results[0].pending.is_none() && results[0].answered.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(mock.calls(), 2);
    }
}

#[tokio::test]
async fn a_durable_refusal_settles_the_call_without_the_other_answer() {
    let (shipper, _mock, client, tk, halted) = halted(Style::Anthropic).await;
    let done = client
        .run_with_answers(
            through_json(&halted),
            vec![Answer::decline("note", "cancelled")],
            &tk,
        )
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(shipper.contexts().len(), 1, "a refused call never re-runs");
    assert_eq!(
        done.tool_calls[0].output,
        "declined/expired: Gift note? (reason: cancelled)"
    );
}

#[tokio::test]
async fn a_partial_answer_to_a_changed_call_is_refused_with_nothing_recorded() {
    let (_shipper, _mock, client, tk, halted) = halted(Style::OpenAi).await;
    let mut messages = through_json(&halted);
    let at = messages.len() - 2;
    if let Message::Assistant { tool_calls, .. } = &mut messages[at] {
        tool_calls[0].args = json!({"item": "tpu"});
    }
    let changed = client
        .run_with_answers(messages, vec![Answer::ok("note")], &tk)
        .await;
    assert!(
        matches!(changed, Err(ClientError::CallChanged { ref request, .. }) if request == "ship"),
        "{changed:?}"
    );
}

#[tokio::test]
async fn a_rerun_that_asks_again_is_unresolved() {
    let mock = ship_mock().await;
    let always = NativeTool::of("ship", "Ships", item_schema(), |_args, _ctx| async {
        pending_all![
            (kind = "approval", prompt = "Ship?", id = "ship"),
            (kind = "input", prompt = "Note?", id = "note"),
        ]
    });
    let client = on(&mock, Style::OpenAi)
        .wait_for(|req: Request| std::future::ready(Answer::ok(req.id)))
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(always).build().unwrap();
    let result = client.run("ship", &tk).await.unwrap();
    assert_eq!(result.tool_calls[0].output, "unresolved: Ship?");
    assert!(result.tool_calls[0].is_error);
}

#[test]
fn one_request_is_the_single_request_wire_byte_for_byte() {
    let request = Request::new("approval", "Ship?")
        .with_id("r1")
        .with_url("https://example.com/ship")
        .with_data(json!({"n": 1}));
    let one = ToolResult::pending(request.clone());
    let all = ToolResult::pending_all([request.clone()]);
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&all).unwrap()
    );
    assert!(!serde_json::to_string(&one).unwrap().contains("pendingMore"));

    let two = ToolResult::pending_all([request.clone(), Request::new("input", "Note?")]);
    assert_eq!(two.metadata.as_ref().unwrap()["pending"], json!(request));
    let more = &two.metadata.as_ref().unwrap()["pendingMore"];
    assert_eq!(more.as_array().map(Vec::len), Some(1));
    assert!(
        !more[0]["id"].as_str().unwrap().is_empty(),
        "ids are filled"
    );
    let outcome = ToolOutcome::classify(two);
    assert_eq!(outcome.requests().count(), 2);
    assert_eq!(outcome.pending(), Some(&request));
}

#[test]
fn a_malformed_or_ambiguous_suspension_is_a_failure_naming_why() {
    let mut bad = ToolResult::pending(Request::new("input", "Note?").with_id("a"));
    bad.metadata
        .as_mut()
        .unwrap()
        .insert("pendingMore".into(), json!({"not": "a list"}));
    let outcome = ToolOutcome::classify(bad);
    assert!(outcome.is_error());
    assert!(
        outcome.result().output.contains("pendingMore"),
        "{outcome:?}"
    );

    let empty = ToolResult::pending_all(std::iter::empty());
    assert!(empty.is_error && !empty.is_pending());
    assert!(empty.output.contains("at least one request"));
}

#[test]
fn a_placeholder_of_one_request_keeps_its_json() {
    let old = json!({
        "call_id": "c1", "name": "ship", "output": "Ship?", "is_error": true,
        "pending": {"id": "r1", "kind": "approval", "prompt": "Ship?"}
    });
    let read: toolnexus::ToolOutput = serde_json::from_value(old.clone()).unwrap();
    assert!(read.pending_more.is_empty() && read.answered.is_empty());
    assert_eq!(read.unanswered().count(), 1);
    assert_eq!(serde_json::to_value(&read).unwrap(), old);
}
