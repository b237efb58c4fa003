//! A receipt is bound to one call: a durable resume whose answer carries a receipt issued
//! for another call or request is refused with nothing run, and the right receipt reaches
//! the tool through its context.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::receipt::{ReceiptAnswer, Statement};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    call_digest, Answer, Approval, ClientError, NativeTool, Receipt, Request, RunResult, Style,
    Tool, ToolContext, ToolResult, Toolkit,
};

use crate::support::on;

/// `refund`: asks for a confirmation itself when its arguments say `"confirm": true` and
/// no answer came yet; when it runs, it records its arguments and the receipts its
/// context carries.
#[derive(Clone, Default)]
struct Refunds {
    ran: Arc<Mutex<Vec<Ran>>>,
}

/// A refund that ran: its arguments and the receipts its context carried.
type Ran = (Value, Vec<Receipt>);

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
                    ran.lock()
                        .unwrap()
                        .push((args.clone(), ctx.receipts().to_vec()));
                    ToolResult::ok(format!("refunded {}", args["amount"]))
                }
            },
        )
    }

    fn toolkit(&self) -> Toolkit {
        Toolkit::builder().tool(self.tool()).build().unwrap()
    }

    fn gated(&self) -> Toolkit {
        Toolkit::builder()
            .tool(self.tool())
            .approval(Approval::tools(["refund"]))
            .build()
            .unwrap()
    }

    fn ran(&self) -> Vec<Ran> {
        self.ran.lock().unwrap().clone()
    }
}

/// The arguments of the refund that asks for its own confirmation.
fn asked() -> Value {
    json!({"order": "A-1", "amount": 40, "confirm": true})
}

/// A receipt as an inbox would issue it for `request` and the call of `refund` with
/// `args`; the core checks what it binds, never its signature.
fn receipt(request: &str, args: &Value) -> Receipt {
    let answer = Answer::ok(request);
    let statement = Statement::new(
        request,
        "run-1",
        call_digest("refund", args),
        ReceiptAnswer::of(&answer),
        "bob@example.com",
        "2026-01-02T03:04:05.678Z",
        "responders",
    )
    .on_behalf_of("ada@example.com");
    Receipt::new(statement, "ed25519:0123456789abcdef", "signature")
}

fn with_receipt(mut answer: Answer, receipt: Receipt) -> Answer {
    answer.receipts.push(receipt);
    answer
}

/// A run halted on `toolkit`'s refund with `args`, as a host stores it.
async fn halted(style: Style, toolkit: &Toolkit, args: Value) -> RunResult {
    let mock = MockLlm::start([Reply::tool_call("c1", "refund", args)])
        .await
        .unwrap();
    let halted = on(&mock, style)
        .build()
        .unwrap()
        .run("refund", toolkit)
        .await;
    let halted = halted.unwrap();
    assert_eq!(halted.waiting.len(), 1);
    halted
}

/// Resumes `halted` with `answer` against a fresh stub; a refused resume asks the model
/// nothing.
async fn resume(
    style: Style,
    toolkit: &Toolkit,
    halted: &RunResult,
    answer: Answer,
) -> Result<RunResult, ClientError> {
    let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
    let client = on(&mock, style).build().unwrap();
    let stored = serde_json::from_str(&serde_json::to_string(&halted.messages).unwrap()).unwrap();
    let resumed = client
        .run_with_answer(stored, &halted.waiting[0], answer, toolkit)
        .await;
    if resumed.is_err() {
        assert_eq!(mock.calls(), 0, "{style:?}: a refused resume asks nothing");
    }
    resumed
}

#[tokio::test]
async fn a_receipt_for_another_call_is_refused_and_nothing_runs() {
    for style in [Style::OpenAi, Style::Anthropic] {
        let refunds = Refunds::default();
        let toolkit = refunds.toolkit();
        let halted = halted(style, &toolkit, asked()).await;
        let id = &halted.waiting[0].id;
        let other_call = receipt(id, &json!({"order": "A-1", "amount": 4000}));
        let err = resume(
            style,
            &toolkit,
            &halted,
            with_receipt(Answer::ok(id), other_call),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, ClientError::ReceiptMismatch { request, call, .. }
                if request == id && call == "c1"),
            "{style:?}: {err:?}"
        );
        assert!(err.to_string().contains("nothing was run"), "{err}");

        // A receipt of the very call, issued for another request, is refused too.
        let other_request = receipt("another-request", &asked());
        let err = resume(
            style,
            &toolkit,
            &halted,
            with_receipt(Answer::ok(id), other_request),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, ClientError::ReceiptMismatch { reason, .. } if reason.contains("another-request")),
            "{style:?}: {err:?}"
        );
        assert!(refunds.ran().is_empty(), "{style:?}: no refund was paid");
    }
}

#[tokio::test]
async fn the_right_receipt_runs_and_the_tool_reads_it() {
    for style in [Style::OpenAi, Style::Anthropic] {
        let refunds = Refunds::default();
        let toolkit = refunds.toolkit();
        let halted = halted(style, &toolkit, asked()).await;
        let id = &halted.waiting[0].id;
        let issued = receipt(id, &asked());
        let resumed = resume(
            style,
            &toolkit,
            &halted,
            with_receipt(Answer::ok(id), issued.clone()),
        )
        .await
        .unwrap();
        assert_eq!(resumed.text, "done", "{style:?}");
        assert_eq!(refunds.ran(), [(asked(), vec![issued])], "{style:?}");
    }
}

#[tokio::test]
async fn a_receipt_names_the_arguments_a_person_edited() {
    let refunds = Refunds::default();
    let toolkit = refunds.gated();
    let proposed = json!({"order": "A-1", "amount": 40});
    let halted = halted(Style::OpenAi, &toolkit, proposed.clone()).await;
    let id = halted.waiting[0].id.clone();
    let edited = json!({"order": "A-1", "amount": 30});
    let approve = || Answer::ok(&id).with_args(edited.clone());

    // Issued for the model's arguments, while the edited ones would run: refused.
    let err = resume(
        Style::OpenAi,
        &toolkit,
        &halted,
        with_receipt(approve(), receipt(&id, &proposed)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ClientError::ReceiptMismatch { .. }),
        "{err:?}"
    );
    assert!(refunds.ran().is_empty());

    // Issued for the edited call: it runs, with the edits.
    let resumed = resume(
        Style::OpenAi,
        &toolkit,
        &halted,
        with_receipt(approve(), receipt(&id, &edited)),
    )
    .await
    .unwrap();
    assert_eq!(resumed.text, "done");
    let ran: Vec<Value> = refunds.ran().into_iter().map(|(args, _)| args).collect();
    assert_eq!(ran, [edited]);
}
