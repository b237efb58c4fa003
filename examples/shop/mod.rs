//! The demo shop's tools: an approval and a typed shipping form, the two shapes of
//! suspension a person answers. `mcp_server` serves them (and the MCP tests drive them);
//! `inbox` parks the approval.
#![allow(dead_code)] // the tests use part of it

use schemars::JsonSchema;
use serde::Deserialize;
use toolnexus::{pending, tool, Answer, Answered, ToolContext, ToolResult, Toolkit};

/// Asks a person to approve buying an item, and reports the approval
#[tool]
pub async fn approve_purchase(
    #[arg(description = "What to buy")] item: String,
    answer: Option<&Answer>,
    ctx: &ToolContext,
) -> ToolResult {
    match answer {
        Some(a) if a.ok => {
            let mut bought = ToolResult::ok(format!("approved: {item}"));
            // The order goes out under the call's idempotency key (a real shop sends it as
            // the `Idempotency-Key` header), so a worker that runs this call again after
            // another one crashed mid-resume places the same order, not a second one.
            if let Some(key) = ctx.idempotency_key() {
                let mut order = toolnexus::serde_json::Map::new();
                order.insert("orderKey".to_owned(), key.into());
                bought.metadata = Some(order);
            }
            bought
        }
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

/// Where an order goes.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Shipping {
    /// The recipient's city
    pub city: String,
    /// Postal code
    pub zip: String,
    /// Next-day delivery
    pub express: bool,
}

/// Ships an order; asks the customer where to
#[tool]
pub async fn ship_order(
    #[arg(description = "The order number")] order: u64,
    shipping: Option<Answered<Shipping>>,
) -> ToolResult {
    match shipping {
        None => pending!(
            kind = "input",
            prompt = format!("Where should order {order} go?"),
            answer = Shipping
        ),
        Some(to) => {
            let speed = if to.express { ", express" } else { "" };
            ToolResult::ok(format!(
                "order {order} ships to {} {}{speed}",
                to.zip, to.city
            ))
        }
    }
}

/// The toolkit `mcp_server` serves.
pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(ApprovePurchase)
        .tool(ShipOrder)
        .build()
        .expect("two distinct tool names")
}
