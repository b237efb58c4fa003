//! An answer settles only the call a person was shown: a halted transcript whose calls were
//! changed before the resume (other arguments, swapped ids, another call's gate request
//! put in a placeholder) is refused with nothing run, while a transcript written before
//! placeholders kept a digest still resumes, and edits a person makes still run.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    call_digest, Answer, Approval, ClientError, Message, NativeTool, Request, RunResult, Style,
    Tool, ToolContext, ToolOutput, ToolResult, Toolkit,
};

use crate::support::{on, Approver, STYLES};

/// `refund`: records every call it ran with; asks for a confirmation itself when its
/// arguments say `"confirm": true` and no answer came yet.
#[derive(Clone, Default)]
struct Refunds {
    ran: Arc<Mutex<Vec<Value>>>,
}

impl Refunds {
    fn tool(&self) -> impl Tool + use<> {
        let ran = self.ran.clone();
        NativeTool::of(
            "refund",
            "Refunds an order",
            json!({"type": "object",
                   "properties": {"order": {"type": "string"}, "amount": {"type": "integer"},
                                  "confirm": {"type": "boolean"}},
                   "required": ["order", "amount"]}),
            move |args: Value, ctx: ToolContext| {
                let ran = ran.clone();
                async move {
                    if args["confirm"] == true && ctx.answer.is_none() {
                        return ToolResult::pending(Request::new("approval", "Really refund?"));
                    }
                    ran.lock().unwrap().push(args.clone());
                    ToolResult::ok(format!("refunded {}", args["amount"]))
                }
            },
        )
    }

    fn ran(&self) -> Vec<Value> {
        self.ran.lock().unwrap().clone()
    }
}

fn gated(refunds: &Refunds) -> Toolkit {
    Toolkit::builder()
        .tool(refunds.tool())
        .approval(Approval::tools(["refund"]))
        .build()
        .unwrap()
}

/// A run halted on the gates of two refunds, with its transcript as a host stores it.
async fn two_refunds(style: Style, refunds: &Refunds) -> (MockLlm, RunResult, Vec<Message>) {
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("c1", "refund", json!({"order": "A-1", "amount": 40})),
            ("c2", "refund", json!({"order": "B-2", "amount": 7})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = on(&mock, style).build().unwrap();
    let halted = client.run("refund both", &gated(refunds)).await.unwrap();
    let stored = serde_json::from_str(&serde_json::to_string(&halted.messages).unwrap()).unwrap();
    (mock, halted, stored)
}

fn calls(messages: &mut [Message]) -> &mut Vec<toolnexus::ToolCall> {
    messages
        .iter_mut()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls),
            _ => None,
        })
        .expect("the halted turn's calls")
}

fn placeholders(messages: &mut [Message]) -> &mut Vec<ToolOutput> {
    match messages.last_mut() {
        Some(Message::ToolResults { results }) => results,
        other => panic!("a halted run ends with its placeholders, not {other:?}"),
    }
}

/// Resumes `messages` answering both gates with ok, against a fresh stub and client.
async fn resume(
    style: Style,
    refunds: &Refunds,
    halted: &RunResult,
    messages: Vec<Message>,
) -> Result<RunResult, ClientError> {
    let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let answers = halted.waiting.iter().map(|r| Answer::ok(&r.id)).collect();
    let resumed = client
        .run_with_answers(messages, answers, &gated(refunds))
        .await;
    if resumed.is_err() {
        assert_eq!(
            mock.calls(),
            0,
            "{style:?}: a refused resume asks the model nothing"
        );
    }
    resumed
}

/// The refusal of the first refund, `c1`, settled through `request`.
fn first_call_changed(request: &Request) -> ClientError {
    ClientError::CallChanged {
        call: "c1".into(),
        tool: "refund".into(),
        request: request.id.clone(),
    }
}

#[tokio::test]
async fn each_placeholder_keeps_the_digest_of_the_call_it_waits_for() {
    for style in STYLES {
        let refunds = Refunds::default();
        let (_mock, _halted, mut stored) = two_refunds(style, &refunds).await;
        let digests: Vec<_> = placeholders(&mut stored)
            .iter()
            .map(|p| p.call_digest.clone())
            .collect();
        assert_eq!(
            digests,
            [
                Some(call_digest(
                    "refund",
                    &json!({"amount": 40, "order": "A-1"})
                )),
                Some(call_digest("refund", &json!({"order": "B-2", "amount": 7}))),
            ],
            "{style:?}"
        );
    }
}

#[tokio::test]
async fn changed_arguments_are_refused_and_nothing_runs() {
    for style in STYLES {
        let refunds = Refunds::default();
        let (_mock, halted, mut stored) = two_refunds(style, &refunds).await;
        calls(&mut stored)[0].args = json!({"order": "A-1", "amount": 4000});
        let err = resume(style, &refunds, &halted, stored).await.unwrap_err();
        assert_eq!(err, first_call_changed(&halted.waiting[0]), "{style:?}");
        assert!(err.to_string().contains("nothing was run"), "{err}");
        assert!(refunds.ran().is_empty(), "{style:?}: no refund was paid");
    }
}

#[tokio::test]
async fn swapped_call_ids_are_refused() {
    for style in STYLES {
        let refunds = Refunds::default();
        let (_mock, halted, mut stored) = two_refunds(style, &refunds).await;
        let turn = calls(&mut stored);
        let first = turn[0].id.clone();
        turn[0].id = turn[1].id.clone();
        turn[1].id = first;
        let err = resume(style, &refunds, &halted, stored).await.unwrap_err();
        assert!(
            matches!(err, ClientError::CallChanged { .. }),
            "{style:?}: {err:?}"
        );
        assert!(refunds.ran().is_empty(), "{style:?}");
    }
}

#[tokio::test]
async fn another_calls_gate_request_in_a_placeholder_is_refused() {
    for style in STYLES {
        let refunds = Refunds::default();
        let (_mock, halted, mut stored) = two_refunds(style, &refunds).await;
        // The small refund's request, answered, would settle the large one.
        let small = placeholders(&mut stored)[1].pending.clone();
        placeholders(&mut stored)[0].pending = small;
        placeholders(&mut stored).truncate(1);
        let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
        let client = on(&mock, style).build().unwrap();
        let err = client
            .run_with_answers(
                stored,
                vec![Answer::ok(&halted.waiting[1].id)],
                &gated(&refunds),
            )
            .await
            .unwrap_err();
        assert_eq!(err, first_call_changed(&halted.waiting[1]), "{style:?}");
        assert!(refunds.ran().is_empty(), "{style:?}");
        assert_eq!(mock.calls(), 0);
    }
}

#[tokio::test]
async fn a_self_suspended_call_is_bound_to_its_arguments_too() {
    let approver = Approver::default();
    let mock = MockLlm::start([Reply::tool_call(
        "c1",
        "approve_purchase",
        json!({"item": "gpu"}),
    )])
    .await
    .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    let mut stored = halted.messages.clone();
    calls(&mut stored)[0].args = json!({"item": "yacht"});
    let err = client
        .run_with_answer(stored, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::CallChanged { ref call, .. } if call == "c1"),
        "{err:?}"
    );
    assert_eq!(approver.runs(), 1, "only the first run, which asked");
}

#[tokio::test]
async fn a_transcript_from_before_digests_still_resumes() {
    let refunds = Refunds::default();
    let (_mock, halted, mut stored) = two_refunds(Style::OpenAi, &refunds).await;
    for placeholder in placeholders(&mut stored) {
        placeholder.call_digest = None;
    }
    let resumed = resume(Style::OpenAi, &refunds, &halted, stored)
        .await
        .unwrap();
    assert_eq!(resumed.text, "done");
    assert_eq!(
        refunds.ran(),
        [
            json!({"order": "A-1", "amount": 40}),
            json!({"order": "B-2", "amount": 7})
        ]
    );
}

#[tokio::test]
async fn edited_arguments_run_and_a_second_wait_is_bound_to_them() {
    let refunds = Refunds::default();
    let (_mock, halted, stored) = two_refunds(Style::OpenAi, &refunds).await;
    // The person lowers the first refund and asks it to confirm once more.
    let edited = json!({"order": "A-1", "amount": 30, "confirm": true});
    let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let answers = vec![
        Answer::ok(&halted.waiting[0].id).with_args(edited.clone()),
        Answer::ok(&halted.waiting[1].id),
    ];
    let again = client
        .run_with_answers(stored, answers, &gated(&refunds))
        .await
        .unwrap();
    assert_eq!(refunds.ran(), [json!({"order": "B-2", "amount": 7})]);
    let confirm = again
        .pending
        .clone()
        .expect("the edited refund asks to confirm");
    let mut stored = again.messages.clone();
    assert_eq!(
        placeholders(&mut stored)[0].call_digest,
        Some(call_digest("refund", &edited)),
        "bound to the arguments it now waits with"
    );
    let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let done = client
        .run_with_answer(stored, &confirm, Answer::ok(&confirm.id), &gated(&refunds))
        .await
        .unwrap();
    assert_eq!(done.text, "done");
    assert_eq!(refunds.ran()[1], edited);
}
