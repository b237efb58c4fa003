//! The three-level agent: a planner that hands refunds to a payments agent, which has an
//! approvals agent carry them out; the approvals agent's `refund` needs an approval from
//! finance (`group:finance`). Its question reaches the planner's run relayed through both
//! agents (`payments > approvals: Refund order A-7?`), so a door or an inbox shows and
//! judges it as the refund's own. The three agents share one scripted model, which tells
//! them apart by their instructions. The inbox example (`--agents`), the crash harness and
//! the A2A and AG-UI suites include this file by path.
#![allow(dead_code)] // each includer uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{
    Approval, LlmClient, NativeTool, SubAgent, Tool, ToolContext, ToolResult, Toolkit,
};

/// The planner's instructions: its client's system prompt.
pub const PLANNER: &str = "You are the planner. Hand every refund to the payments agent.";
/// The payments agent's instructions.
pub const PAYMENTS: &str =
    "You are the payments agent. Have the approvals agent carry out refunds.";
/// The approvals agent's instructions.
pub const APPROVALS: &str =
    "You are the approvals agent. Refund the order the task names, once finance approves.";

/// Who may approve a refund.
pub const FINANCE: &str = "group:finance";

/// The order a refund prompt names when it names none.
pub const DEFAULT_ORDER: &str = "A-7";

/// `refund(order)`, whose effect is `effect(order, ctx)`: it returns what the tool says
/// the refund gave. The crash harness writes it to its ledger; the suites count it.
pub fn refund(effect: impl Fn(&str, &ToolContext) -> String + Send + Sync + 'static) -> impl Tool {
    let effect = Arc::new(effect);
    NativeTool::of(
        "refund",
        "Refunds an order",
        json!({"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}),
        move |args: Value, ctx: ToolContext| {
            let effect = effect.clone();
            async move {
                let order = args["order"].as_str().unwrap_or("?");
                ToolResult::ok(effect(order, &ctx))
            }
        },
    )
}

/// The refund that counts its effects, numbering them in memory (`REFUND-1: refunded A-7`).
pub fn counting_refund(refunds: Arc<AtomicUsize>) -> impl Tool {
    refund(move |order, _ctx| {
        let n = refunds.fetch_add(1, Ordering::SeqCst) + 1;
        format!("REFUND-{n}: refunded {order}")
    })
}

/// The planner's toolkit: `payments`, an agent whose toolkit holds `approvals`, an agent
/// whose toolkit holds `refund` (a tool named `refund` taking `{"order"}`) behind finance's
/// approval. Both agents run on `client` (which must not `wait_for`, so their questions
/// reach the planner's run); build it the same way in every process that runs or resumes
/// the planner.
pub fn planner_toolkit(client: &LlmClient, refund: impl Tool + 'static) -> Toolkit {
    let refunds = Toolkit::builder()
        .tool(refund)
        .approval(
            Approval::tools(["refund"])
                .prompt(|_, args| {
                    format!("Refund order {}?", args["order"].as_str().unwrap_or("?"))
                })
                .responders([FINANCE]),
        )
        .build()
        .expect("one tool");
    let approvals = SubAgent::new(client.clone(), refunds)
        .instructions(APPROVALS)
        .into_tool("approvals", "Carries out a refund once finance approves it");
    let payments = Toolkit::builder()
        .tool(approvals)
        .build()
        .expect("one tool");
    let payments = SubAgent::new(client.clone(), payments)
        .instructions(PAYMENTS)
        .into_tool("payments", "Handles payments and refunds; say which order");
    Toolkit::builder().tool(payments).build().expect("one tool")
}

/// Which of the three agents a request to the model is from, by its instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Planner,
    Payments,
    Approvals,
}

/// The request's system text, wherever its wire style puts it.
fn system(req: &RecordedRequest) -> String {
    let body = &req.body;
    let openai = req
        .messages()
        .iter()
        .filter(|m| m["role"] == "system" || m["role"] == "developer")
        .map(|m| m["content"].to_string())
        .collect::<String>();
    [
        openai,
        body["system"].to_string(),
        body["instructions"].to_string(),
        body["systemInstruction"].to_string(),
    ]
    .concat()
}

/// The agent `req` comes from.
pub fn level(req: &RecordedRequest) -> Level {
    let said = system(req);
    if said.contains(APPROVALS) {
        Level::Approvals
    } else if said.contains(PAYMENTS) {
        Level::Payments
    } else {
        Level::Planner
    }
}

/// The orders a prompt names after the word "order" or "orders" (`refund order B-2`,
/// `refund orders A-7 and B-2`), else [`DEFAULT_ORDER`].
pub fn orders_of(prompt: &str) -> Vec<String> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| w.eq_ignore_ascii_case("order") || w.eq_ignore_ascii_case("orders"));
    let orders: Vec<String> = start
        .map(|at| &words[at + 1..])
        .unwrap_or_default()
        .iter()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .take_while(|w| w.eq_ignore_ascii_case("and") || w.chars().any(|c| c.is_ascii_digit()))
        .filter(|w| !w.eq_ignore_ascii_case("and"))
        .map(str::to_owned)
        .collect();
    if orders.is_empty() {
        vec![DEFAULT_ORDER.to_owned()]
    } else {
        orders
    }
}

/// The task naming `orders`, as the planner and payments hand it on.
fn task_of(orders: &[String]) -> String {
    match orders {
        [one] => format!("Refund order {one}"),
        many => format!("Refund orders {}", many.join(" and ")),
    }
}

/// The call id the payments agent gives its call to `approvals`.
pub const PAYMENTS_CALL: &str = "pay_1";

/// The call id the planner gives its call to `payments` for the `n`th order (from 0).
pub fn planner_call(n: usize) -> String {
    format!("plan_{}", n + 1)
}

/// The call id the approvals agent gives the refund of `order`.
pub fn refund_call(order: &str) -> String {
    format!("refund_{order}")
}

/// The scripted model of the three agents: the planner calls `payments` once for each
/// order the prompt names, all in one turn, so each refund is a call of its own that
/// finance approves or declines; payments calls `approvals` with its task, approvals calls
/// `refund` for each order the task names; once its calls answered, each agent says what
/// came of them.
pub fn script(req: &RecordedRequest) -> Reply {
    let level = level(req);
    let results = req.tool_results();
    if !results.is_empty() {
        let out: Vec<&str> = results.iter().map(|(_, out)| out.as_str()).collect();
        let out = out.join("; ");
        return Reply::text(match level {
            Level::Planner => format!("Planner: {out}"),
            Level::Payments => format!("Payments: {out}"),
            Level::Approvals => format!("Approvals: {out}"),
        });
    }
    let prompt = req.prompts().last().cloned().unwrap_or_default();
    let orders = orders_of(&prompt);
    let task = json!({ "task": task_of(&orders) });
    match level {
        Level::Planner => Reply::tool_calls(orders.iter().enumerate().map(|(n, order)| {
            let task = json!({ "task": task_of(std::slice::from_ref(order)) });
            (planner_call(n), "payments", task)
        })),
        Level::Payments => Reply::tool_call(PAYMENTS_CALL, "approvals", task),
        Level::Approvals => Reply::tool_calls(
            orders
                .iter()
                .map(|order| (refund_call(order), "refund", json!({ "order": order }))),
        ),
    }
}
