//! Approvals declared in front of tools: gates ask before a call runs, several calls wait
//! at once, answers settle the calls they echo, edits are checked and shown, decisions are
//! remembered for the rest of a run, and a new message supersedes what waits.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Approval, ClientError, InMemoryStore, LlmClient, Message, NativeTool, Request,
    RunResult, RunStatus, Style, Tool, Toolkit, ToolkitError,
};

use crate::support::{on, steps, Approver, STYLES};

mod asking;
mod declared;
mod edits;
mod remembered;

/// `delete`: deletes nothing, but records every path it was run with.
#[derive(Clone, Default)]
struct Deleter {
    ran: Arc<Mutex<Vec<Value>>>,
}

impl Deleter {
    fn tool(&self, name: &str) -> impl Tool + use<> {
        let ran = self.ran.clone();
        NativeTool::of(
            name.to_owned(),
            "Deletes a file",
            json!({"type": "object",
                   "properties": {"path": {"type": "string", "minLength": 1},
                                  "force": {"type": "boolean"}},
                   "required": ["path"]}),
            move |args: Value, _| {
                ran.lock().unwrap().push(args.clone());
                async move { format!("deleted {}", args["path"].as_str().unwrap_or_default()) }
            },
        )
    }

    fn runs(&self) -> Vec<Value> {
        self.ran.lock().unwrap().clone()
    }
}

/// A toolkit of `delete` gated by name.
fn gated(deleter: &Deleter) -> Toolkit {
    Toolkit::builder()
        .tool(deleter.tool("delete"))
        .approval(Approval::tools(["delete"]))
        .build()
        .unwrap()
}

/// The model deletes `/a` and `/b` in one turn, then says `done`.
async fn two_deletes() -> MockLlm {
    MockLlm::start([
        Reply::tool_calls([
            ("c1", "delete", json!({"path": "/a"})),
            ("c2", "delete", json!({"path": "/b"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

/// A run of `two_deletes` in `style`, halted on both gates: the deleter, the stub, the
/// client, the toolkit and the halted run.
async fn halted(style: Style) -> (Deleter, MockLlm, LlmClient, Toolkit, RunResult) {
    let deleter = Deleter::default();
    let mock = two_deletes().await;
    let client = on(&mock, style).build().unwrap();
    let tk = gated(&deleter);
    let run = client.run("clean up", &tk).await.unwrap();
    (deleter, mock, client, tk, run)
}

/// A halted run's transcript through JSON text, as a host stores it.
fn through_json(run: &RunResult) -> Vec<Message> {
    let text = serde_json::to_string(&run.messages).unwrap();
    serde_json::from_str(&text).unwrap()
}
