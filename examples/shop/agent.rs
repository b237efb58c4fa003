//! The shop agent the protocol servers' suites serve (toolnexus-a2a's and
//! toolnexus-agui's): a purchase behind a declared approval, counting what it bought, a
//! sign-in, and the shop's shipping form, on a scripted model. A suite includes it beside
//! `examples/shop/mod.rs` (as `mod shop`), whose form it takes.
#![allow(dead_code)] // each suite uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Approval, NativeTool, ToolContext, ToolResult, Toolkit};

use crate::shop::ShipOrder;

/// The sign-in page the sign-in tool sends people to.
pub const LOGIN_URL: &str = "https://shop.example/login";

/// The agent's tools: a purchase behind a declared approval (counting what it bought), a
/// sign-in, and a shipping form.
pub fn toolkit(purchases: Arc<AtomicUsize>) -> Toolkit {
    let purchase = NativeTool::of(
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
    );
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

/// The scripted model: "buy a X [and a Y]" calls `purchase` for each; "log me in" calls
/// `sign_in`; "ship order N" calls `ship_order`; once the tools answered, it says what came
/// of each.
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
    if let Some(items) = prompt.strip_prefix("buy a ") {
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
    if prompt == "log me in" {
        return Reply::tool_call("call_0", "sign_in", json!({}));
    }
    if let Some(n) = prompt.strip_prefix("ship order ") {
        let order: u64 = n.trim().parse().unwrap_or(0);
        return Reply::tool_call("call_0", "ship_order", json!({"order": order}));
    }
    Reply::text(format!("You said: {prompt}"))
}

/// The scripted model every agent of a test talks to.
pub async fn model() -> MockLlm {
    MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts")
}
