//! What the parent and its workers share: the scripted model's turns, the toolkit of the
//! resumed run, and the ledger where each effect is written the moment it happens, outside
//! the process that may be killed right after.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{Approval, NativeTool, ToolContext, ToolResult, Toolkit};

use crate::worker::hook;

/// The prompt every run starts from: the same for all, so every finished transcript must
/// equal the uninterrupted one.
pub const PROMPT: &str = "stock the lab";

/// The items the model buys in one turn, and whether the person approves each.
pub const ITEMS: [(&str, bool); 3] = [("gpu", true), ("desk", false), ("cable", true)];

/// The call id the model gives the purchase of `item`, and of the notice after them.
pub fn call_of(item: &str) -> String {
    format!("call_{item}")
}
pub const NOTICE: &str = "call_notice";

/// The model turns of a resumed run, in order: after the purchases (it sends the notice),
/// after the notice (it reports). Turn 0 is the one that halted on the approvals.
pub const TURNS: usize = 3;

/// Which turn a request to the model is: 0 before any result, 1 with the purchases'
/// results, 2 with the notice's.
pub fn turn_of(req: &RecordedRequest) -> usize {
    let messages = req.messages();
    let notified = messages
        .iter()
        .any(|m| m["role"] == "tool" && m["tool_call_id"] == NOTICE);
    match (messages.iter().any(|m| m["role"] == "tool"), notified) {
        (_, true) => 2,
        (true, false) => 1,
        (false, false) => 0,
    }
}

/// The scripted model: three purchases in one turn, then a notice of what they gave, then
/// a report of it.
pub fn script(req: &RecordedRequest) -> Reply {
    let results: Vec<String> = req
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect();
    match turn_of(req) {
        0 => Reply::tool_calls(
            ITEMS.map(|(item, _)| (call_of(item), "purchase", json!({ "item": item }))),
        ),
        1 => Reply::tool_call(NOTICE, "notify", json!({ "text": results.join("; ") })),
        _ => Reply::text(format!("report: {}", results.join(" | "))),
    }
}

/// The file each effect appends a line to (`<call id>\t<idempotency key>`) as it happens.
#[derive(Clone)]
pub struct Ledger(Arc<PathBuf>);

impl Ledger {
    pub fn new(path: impl Into<PathBuf>) -> Ledger {
        Ledger(Arc::new(path.into()))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes one effect: a single append, so a kill leaves it whole or absent.
    pub fn write(&self, ctx: &ToolContext) {
        let call = ctx.call_id.as_deref().unwrap_or("?");
        let key = ctx.idempotency_key().unwrap_or_else(|| "none".to_owned());
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path())
            .expect("the ledger opens");
        file.write_all(format!("{call}\t{key}\n").as_bytes())
            .expect("the ledger takes the effect");
    }

    /// Every effect so far: for each call id, the idempotency key of each time it ran.
    pub fn read(&self) -> Effects {
        let text = std::fs::read_to_string(self.path()).unwrap_or_default();
        let mut ran: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in text.lines() {
            let (call, key) = line.split_once('\t').expect("a ledger line");
            ran.entry(call.to_owned()).or_default().push(key.to_owned());
        }
        Effects(ran)
    }
}

/// The ledger read back.
#[derive(Clone, Debug, Default)]
pub struct Effects(pub BTreeMap<String, Vec<String>>);

impl Effects {
    /// How often the call's effect ran.
    pub fn runs(&self, call: &str) -> usize {
        self.0.get(call).map_or(0, Vec::len)
    }

    /// The orders the call placed: its effect's distinct idempotency keys, as a shop that
    /// takes an order once per key counts them.
    pub fn orders(&self, call: &str) -> usize {
        self.0
            .get(call)
            .map_or(0, |keys| keys.iter().collect::<BTreeSet<_>>().len())
    }
}

/// `purchase(item)` behind a declared approval and the ungated `notify(text)`; each writes
/// its effect to `ledger` between two kill points.
pub fn toolkit(ledger: &Ledger) -> Toolkit {
    let effect = |name: &'static str, ledger: Ledger| {
        move |args: serde_json::Value, ctx: ToolContext| {
            let ledger = ledger.clone();
            async move {
                let what = args["item"].as_str().unwrap_or(name).to_owned();
                hook(&format!("{name} {what} begins"));
                ledger.write(&ctx);
                hook(&format!("{name} {what} took effect"));
                ToolResult::ok(format!("{name}: {what}"))
            }
        }
    };
    let purchase = NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        effect("purchase", ledger.clone()),
    );
    let notify = NativeTool::of(
        "notify",
        "Tells the lab",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        effect("notify", ledger.clone()),
    );
    Toolkit::builder()
        .tool(purchase)
        .tool(notify)
        .approval(Approval::tools(["purchase"]))
        .build()
        .expect("two distinct tools")
}
