//! The shop agent: a purchase behind a declared approval, counting what it bought, a
//! sign-in, and the shop's shipping form, on a scripted model. The protocol examples serve
//! it (`a2a_agent` and `agui_agent`, through `mod.rs` beside it) and so do the A2A and
//! AG-UI suites, which include this file by path. Whoever includes it declares
//! `examples/shop/mod.rs` beside it as `shop`, whose form it takes.
#![allow(dead_code)] // each includer uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Approval, NativeTool, Tool, ToolContext, ToolResult, Toolkit};

use super::shop::ShipOrder;

/// The sign-in page the sign-in tool sends people to.
pub const LOGIN_URL: &str = "https://shop.example/login";

/// The agent's tools: a purchase behind a declared approval (counting what it bought), a
/// sign-in, and a shipping form.
pub fn toolkit(purchases: Arc<AtomicUsize>) -> Toolkit {
    toolkit_with(counting_purchase(purchases))
}

/// The purchase that counts what it bought, numbering its orders in memory.
pub fn counting_purchase(purchases: Arc<AtomicUsize>) -> impl Tool {
    NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args: Value, _ctx: ToolContext| {
            let purchases = purchases.clone();
            async move {
                let n = purchases.fetch_add(1, Ordering::SeqCst) + 1;
                ToolResult::ok(format!(
                    "ORDER-{n}: bought {}",
                    args["item"].as_str().unwrap_or("?")
                ))
            }
        },
    )
}

/// The agent's tools with `purchase` (a tool named `purchase` taking `{"item"}`) behind the
/// declared approval, the sign-in and the shipping form.
pub fn toolkit_with(purchase: impl Tool + 'static) -> Toolkit {
    let sign_in = NativeTool::of(
        "sign_in",
        "Signs the user in to the shop",
        json!({"type": "object", "properties": {}}),
        |_args: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(a) if a.ok => ToolResult::ok("signed in"),
                Some(_) => ToolResult::error("sign-in cancelled"),
                None => ToolResult::auth_required(LOGIN_URL, Some("Sign in to the shop")),
            }
        },
    );
    Toolkit::builder()
        .tool(purchase)
        .tool(sign_in)
        .tool(ShipOrder)
        .approval(Approval::tools(["purchase"]).prompt(|_, args| {
            format!(
                "Approve purchase of {}?",
                args["item"].as_str().unwrap_or("?")
            )
        }))
        .build()
        .expect("distinct tool names")
}

/// The scripted model: "buy a X [and a Y]" (or "buy X") calls `purchase` for each; "log
/// me in" calls `sign_in`; "ship order N" calls `ship_order`; once the tools answered, it
/// says what came of each.
pub fn script(req: &RecordedRequest) -> Reply {
    let results = req.tool_results();
    if !results.is_empty() {
        let said: Vec<String> = results
            .iter()
            .map(|(_, out)| {
                if out.contains("ORDER-") {
                    format!(
                        "Bought, order {}.",
                        &out[..out.find(':').unwrap_or(out.len())]
                    )
                } else if out.contains("declined") {
                    "The purchase was declined.".to_owned()
                } else if out == "signed in" {
                    "You are signed in.".to_owned()
                } else {
                    format!("Done: {out}.")
                }
            })
            .collect();
        return Reply::text(said.join(" "));
    }
    let prompt = req.prompts().last().cloned().unwrap_or_default();
    let said = prompt.trim().to_lowercase();
    if let Some(items) = said
        .strip_prefix("buy a ")
        .or_else(|| said.strip_prefix("buy "))
    {
        let calls: Vec<(String, &str, Value)> = items
            .split(" and a ")
            .enumerate()
            .map(|(i, item)| {
                (
                    format!("call_{i}"),
                    "purchase",
                    json!({"item": item.trim()}),
                )
            })
            .collect();
        return Reply::tool_calls(calls);
    }
    if said.contains("log me in") {
        return Reply::tool_call("call_0", "sign_in", json!({}));
    }
    if let Some(n) = said.strip_prefix("ship order ") {
        let order: u64 = n.trim().parse().unwrap_or(0);
        return Reply::tool_call("call_0", "ship_order", json!({"order": order}));
    }
    Reply::text(
        "I can buy things (\"buy a gpu\"), sign you in (\"log me in\") or ship an order \
         (\"ship order 7\").",
    )
}

/// The scripted model every agent of a test talks to.
pub async fn model() -> MockLlm {
    MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts")
}

/// `wrap`: asks at once whether to add a note and whether to wrap in gold, under ids of
/// its own (`note`, `gold`); wraps with both answers once re-run. The suites of the doors
/// show with it a call that asks several questions.
pub fn wrapping_toolkit() -> Toolkit {
    let wrap = NativeTool::of(
        "wrap",
        "Wraps a gift",
        json!({"type": "object", "properties": {}}),
        |_args: Value, ctx: ToolContext| async move {
            match ctx.answers.as_slice() {
                [] => toolnexus::pending_all![
                    (kind = "approval", prompt = "Add a note?", id = "note"),
                    (kind = "approval", prompt = "Wrap it in gold?", id = "gold"),
                ],
                [note, gold] => {
                    ToolResult::ok(format!("wrapped: note {}, gold {}", note.ok, gold.ok))
                }
                other => ToolResult::error(format!("{} answers", other.len())),
            }
        },
    );
    Toolkit::builder().tool(wrap).build().expect("a toolkit")
}

/// The model of [`wrapping_toolkit`]: calls `wrap`, then says what came of it.
pub async fn wrapping_model() -> MockLlm {
    MockLlm::with_fn(|req| match req.tool_results().pop() {
        Some((_, out)) => Reply::text(format!("Done: {out}.")),
        None => Reply::tool_call("call_0", "wrap", json!({})),
    })
    .await
    .expect("the scripted model starts")
}
