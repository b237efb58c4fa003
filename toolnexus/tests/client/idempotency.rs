//! Each call's idempotency key: the same for the call in every process that runs it again
//! (a re-run after an answer, a durable resume from stored JSON), different for every other
//! call — another call of the turn, the same call id in a later turn, the same script run
//! again.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Message, NativeTool, Request, RunResult, Style, Tool, ToolContext, ToolResult, Toolkit,
};

use crate::support::on;

/// Each attempt's invoice and the key it ran with.
type Attempts = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// `pay`: records the key of every attempt; asks for an approval on its first run.
#[derive(Clone, Default)]
struct Payments {
    keys: Attempts,
}

impl Payments {
    fn tool(&self) -> impl Tool + use<> {
        let keys = self.keys.clone();
        NativeTool::of(
            "pay",
            "Pays an invoice",
            json!({"type": "object", "properties": {"invoice": {"type": "string"}}}),
            move |args: Value, ctx: ToolContext| {
                let keys = keys.clone();
                async move {
                    let invoice = args["invoice"].as_str().unwrap_or_default().to_owned();
                    keys.lock()
                        .unwrap()
                        .push((invoice.clone(), ctx.idempotency_key()));
                    match ctx.answer {
                        Some(_) => ToolResult::ok(format!("paid {invoice}")),
                        None if invoice.starts_with("ask") => {
                            ToolResult::pending(Request::new("approval", format!("Pay {invoice}?")))
                        }
                        None => ToolResult::ok(format!("paid {invoice}")),
                    }
                }
            },
        )
    }

    fn toolkit(&self) -> Toolkit {
        Toolkit::builder().tool(self.tool()).build().unwrap()
    }

    /// The keys recorded for `invoice`, in order.
    fn keys_of(&self, invoice: &str) -> Vec<String> {
        let keys = self.keys.lock().unwrap();
        keys.iter()
            .filter(|(i, _)| i == invoice)
            .map(|(_, k)| k.clone().expect("a call from the loop has a key"))
            .collect()
    }
}

/// Turn 1 pays `a` and `ask-b` (which waits), turn 2 pays `c` under the id `call_1` again.
async fn script() -> MockLlm {
    MockLlm::start([
        Reply::tool_calls([
            ("call_1", "pay", json!({"invoice": "a"})),
            ("call_2", "pay", json!({"invoice": "ask-b"})),
        ]),
        Reply::tool_call("call_1", "pay", json!({"invoice": "c"})),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

/// The one key of a call that ran once.
fn single(keys: Vec<String>) -> String {
    assert_eq!(keys.len(), 1, "{keys:?}");
    keys.into_iter().next().unwrap()
}

fn through_json(run: &RunResult) -> Vec<Message> {
    serde_json::from_str(&serde_json::to_string(&run.messages).unwrap()).unwrap()
}

#[tokio::test]
async fn a_call_keeps_its_key_across_a_durable_resume_and_no_other_call_shares_it() {
    let payments = Payments::default();
    let mock = script().await;
    let halted = on(&mock, Style::OpenAi)
        .build()
        .unwrap()
        .run("pay them", &payments.toolkit())
        .await
        .unwrap();
    let request = halted.pending.clone().expect("ask-b waits");

    // Another process resumes it from the stored transcript.
    let elsewhere = on(&mock, Style::OpenAi).build().unwrap();
    let done = elsewhere
        .run_with_answer(
            through_json(&halted),
            &request,
            Answer::ok(&request.id),
            &payments.toolkit(),
        )
        .await
        .unwrap();
    assert_eq!(done.text, "done");

    let a = single(payments.keys_of("a"));
    let b = payments.keys_of("ask-b");
    assert_eq!(b.len(), 2, "asked, then re-run with the answer");
    assert_eq!(
        b[0], b[1],
        "the re-run in another process has the call's key"
    );
    let c = single(payments.keys_of("c"));
    assert_ne!(a, b[0], "another call of the turn");
    assert_ne!(a, c, "the same call id in a later turn");

    // The same script run again is another run: other keys.
    let again = Payments::default();
    on(&script().await, Style::OpenAi)
        .build()
        .unwrap()
        .run("pay them", &again.toolkit())
        .await
        .unwrap();
    assert_ne!(again.keys_of("a"), [a]);
}

#[tokio::test]
async fn a_re_run_by_wait_for_has_the_first_runs_key() {
    let payments = Payments::default();
    let mock = script().await;
    let client = on(&mock, Style::OpenAi)
        .wait_for(|request: Request| async move { Answer::ok(&request.id) })
        .build()
        .unwrap();
    let done = client.run("pay them", &payments.toolkit()).await.unwrap();
    assert_eq!(done.text, "done");
    let b = payments.keys_of("ask-b");
    assert_eq!(b.len(), 2);
    assert_eq!(b[0], b[1]);
}

#[test]
fn a_tool_called_directly_has_no_key() {
    assert_eq!(ToolContext::default().idempotency_key(), None);
}
