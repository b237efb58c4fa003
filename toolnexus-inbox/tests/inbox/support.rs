//! What the inbox tests share: a fresh database per test on either engine, the scripted
//! model, and a purchase tool that counts its post-answer side effects.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Answer, Approval, LlmClient, NativeTool, Request, RunResult, ToolResult, Toolkit};
use toolnexus_inbox::{Inbox, InboxBuilder};
pub use toolnexus_test_support::both_engines;
pub use toolnexus_test_support::clock::TestClock;
pub use toolnexus_test_support::databases::TestDb;

pub use crate::pg::pg_admin_url;

/// The lease of the suite's inboxes: short, and passed by moving the database's clock on.
pub const LEASE: Duration = Duration::from_secs(1);

/// The suite's inboxes on a test's database.
pub trait InboxDb {
    /// Options with a short lease, a quick poll and the database's clock, so takeovers
    /// happen within a test once it moves the clock on.
    fn builder(&self) -> InboxBuilder;

    /// An inbox with [`builder`](Self::builder)'s options.
    async fn inbox(&self) -> Inbox;
}

impl InboxDb for TestDb {
    fn builder(&self) -> InboxBuilder {
        Inbox::builder(&self.url)
            .lease(LEASE)
            .poll_interval(Duration::from_millis(20))
            .clock(self.clock.reader())
    }

    async fn inbox(&self) -> Inbox {
        self.builder().open().await.expect("the inbox opens")
    }
}

/// How often each item's purchase went through (the tool's effect after an `ok` answer).
#[derive(Clone, Default)]
pub struct Effects(Arc<Mutex<HashMap<String, usize>>>);

impl Effects {
    pub fn count(&self, item: &str) -> usize {
        self.0.lock().unwrap().get(item).copied().unwrap_or(0)
    }

    pub fn total(&self) -> usize {
        self.0.lock().unwrap().values().sum()
    }

    fn record(&self, key: &str) {
        *self.0.lock().unwrap().entry(key.to_owned()).or_default() += 1;
    }
}

/// `approve_purchase(item)`: parks on an approval, and on an `ok` answer records the
/// purchase once in `effects`.
pub fn toolkit(effects: &Effects) -> Toolkit {
    let effects = effects.clone();
    let tool = NativeTool::of(
        "approve_purchase",
        "Requests spend approval before proceeding",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args, ctx| {
            let effects = effects.clone();
            async move {
                let item = args["item"].as_str().unwrap_or("?").to_owned();
                match ctx.answer {
                    Some(a) if a.ok => {
                        effects.record(&item);
                        ToolResult::ok(format!("approved: {item}"))
                    }
                    Some(_) => ToolResult::error("declined"),
                    None => ToolResult::pending(Request::new(
                        "approval",
                        format!("Approve purchase of {item}?"),
                    )),
                }
            }
        },
    );
    Toolkit::builder().tool(tool).build().unwrap()
}

/// The scripted model: asks to buy the item named last in the user prompt, then reports.
pub fn purchase_script(req: &RecordedRequest) -> Reply {
    let messages = req.messages();
    let last = messages.last().cloned().unwrap_or_default();
    let prompt = last_prompt(messages);
    if last["role"] == "tool" {
        let output = last["content"].as_str().unwrap_or("");
        // "buy twice X": after X is approved, the model asks again for X-again.
        if let Some(item) = output.strip_prefix("approved: ")
            && prompt.contains("twice")
            && !item.ends_with("-again")
        {
            let again = format!("{item}-again");
            return Reply::tool_call("call_2", "approve_purchase", json!({"item": again}));
        }
        return Reply::text(format!("outcome: {output}"));
    }
    let item = prompt.split_whitespace().last().unwrap_or("thing");
    Reply::tool_call("call_1", "approve_purchase", json!({"item": item}))
}

/// The text of the last user message a scripted model was sent.
pub fn last_prompt(messages: &[Value]) -> &str {
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
}

pub async fn model() -> MockLlm {
    MockLlm::with_fn(purchase_script).await.unwrap()
}

pub fn client(llm: &MockLlm) -> LlmClient {
    LlmClient::builder()
        .base_url(llm.base_url())
        .model("scripted")
        .api_key("test-key")
        .retries(0)
        .build()
        .unwrap()
}

/// A run halted on the purchase of `item`.
pub async fn halted(client: &LlmClient, tk: &Toolkit, item: &str) -> RunResult {
    let run = client.run(format!("buy {item}"), tk).await.unwrap();
    assert!(run.pending.is_some(), "the run halts on the approval");
    run
}

/// An inbox with the scripted model and the purchase tool around it.
pub struct Scene {
    pub inbox: Inbox,
    pub llm: MockLlm,
    pub client: LlmClient,
    pub tk: Toolkit,
    pub effects: Effects,
}

impl Scene {
    pub async fn new(inbox: Inbox) -> Scene {
        Scene::of(inbox, model().await, toolkit)
    }

    /// The three-deletes model and the gated `delete` instead of the purchases.
    pub async fn gated(inbox: Inbox) -> Scene {
        let llm = MockLlm::with_fn(three_deletes).await.unwrap();
        Scene::of(inbox, llm, gated_toolkit)
    }

    fn of(inbox: Inbox, llm: MockLlm, toolkit: fn(&Effects) -> Toolkit) -> Scene {
        let effects = Effects::default();
        Scene {
            inbox,
            client: client(&llm),
            tk: toolkit(&effects),
            llm,
            effects,
        }
    }

    /// A run halted on its three gated deletes in `dir` (a [`gated`](Self::gated) scene).
    pub async fn halted_on_three(&self, dir: &str) -> RunResult {
        let run = self
            .client
            .run(format!("clean up {dir}"), &self.tk)
            .await
            .unwrap();
        assert_eq!(run.waiting.len(), 3, "the three deletes wait: {run:?}");
        run
    }

    /// Parks a run halted on the purchase of `item`; its request id.
    pub async fn park(&self, item: &str) -> String {
        let run = halted(&self.client, &self.tk, item).await;
        self.inbox.park(&run).await.unwrap()
    }

    /// Moves `clock` (the one the scene's inbox reads) past the test lease, then resumes
    /// the next run, which must be there.
    pub async fn resume_after_lease(&self, clock: &TestClock) -> toolnexus_inbox::Resumed {
        clock.advance(LEASE + Duration::from_millis(100));
        self.resume_now().await
    }

    /// Resumes the next answered run, which must be there.
    pub async fn resume_now(&self) -> toolnexus_inbox::Resumed {
        let resumed = self.inbox.resume_next(&self.client, &self.tk).await;
        resumed.unwrap().expect("a run to resume")
    }

    /// Asserts that no run is ready to resume (nothing answered, or its lease runs).
    pub async fn assert_nothing_to_resume(&self) {
        let next = self
            .inbox
            .resume_next(&self.client, &self.tk)
            .await
            .unwrap();
        assert!(next.is_none(), "resumed {next:?}");
    }

    /// Parks a run and approves it.
    pub async fn park_approved(&self, item: &str) -> String {
        let id = self.park(item).await;
        self.inbox.answer(Answer::ok(&id)).await.unwrap();
        id
    }
}

/// The scripted model, taking `delay` to answer each call.
pub async fn slow_model(delay: Duration) -> MockLlm {
    MockLlm::with_fn(move |req| purchase_script(req).delayed(delay))
        .await
        .unwrap()
}

/// `delete(path, keep_days?)`, behind a declared approval: every call asks first, and each
/// call that runs is counted by its path in `effects`.
pub fn gated_toolkit(effects: &Effects) -> Toolkit {
    let effects = effects.clone();
    let delete = NativeTool::of(
        "delete",
        "Deletes a file",
        json!({"type": "object",
               "properties": {"path": {"type": "string", "minLength": 1},
                              "keep_days": {"type": "integer", "minimum": 0}},
               "required": ["path"]}),
        move |args, _ctx| {
            let effects = effects.clone();
            async move {
                let path = args["path"].as_str().unwrap_or("?").to_owned();
                effects.record(&path);
                format!("deleted {path}")
            }
        },
    );
    Toolkit::builder()
        .tool(delete)
        .approval(Approval::tools(["delete"]))
        .build()
        .unwrap()
}

/// The model: deletes `<dir>/a`, `<dir>/b` and `<dir>/c` in one turn, `dir` being the last
/// word of the prompt; once the results are in, it reports them all, in call order.
pub fn three_deletes(req: &RecordedRequest) -> Reply {
    let messages = req.messages();
    if messages.last().is_some_and(|m| m["role"] == "tool") {
        let results: Vec<&str> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str())
            .collect();
        return Reply::text(results.join(" | "));
    }
    let prompt = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let dir = prompt.split_whitespace().last().unwrap_or("tmp").to_owned();
    Reply::tool_calls(["a", "b", "c"].map(|file| {
        let path = format!("{dir}/{file}");
        (format!("call_{file}"), "delete", json!({ "path": path }))
    }))
}

/// The request ids of `parked`, in order.
pub fn ids_of(parked: &[toolnexus_inbox::Parked]) -> Vec<String> {
    parked.iter().map(|p| p.id().to_owned()).collect()
}
