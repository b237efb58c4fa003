//! Suspending from a tool that returns `Result<ToolResult, E>`, every `pending!` argument,
//! a typed answer form and `auth_required!`.
#![deny(warnings)]
use schemars::JsonSchema;
use serde::Deserialize;
use toolnexus::{auth_required, pending, tool, Answer, Answered, ToolResult};

#[derive(Deserialize, JsonSchema)]
struct Shipping {
    zip: String,
}

#[derive(Debug)]
struct ShopError;

impl std::fmt::Display for ShopError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("shop unavailable")
    }
}

/// Buys an item
#[tool]
async fn buy(item: String, answer: Option<&Answer>) -> Result<ToolResult, ShopError> {
    if item.is_empty() {
        return Err(ShopError);
    }
    let Some(answer) = answer else {
        return Ok(pending!(
            kind = "approval",
            prompt = format!("Buy {item}?"),
            url = "https://example.com/approve",
            data = serde_json::json!({"item": item}),
            id = "buy-1",
            expires_at = "2030-01-01T00:00:00Z",
        ));
    };
    Ok(ToolResult::ok(format!("bought {item}: {}", answer.ok)))
}

/// Ships an item
#[tool]
async fn ship(item: String, shipping: Option<Answered<Shipping>>) -> ToolResult {
    match shipping {
        Some(s) => ToolResult::ok(format!("{item} to {}", s.zip)),
        None => pending!(answer = Shipping, prompt = "Where to?", kind = "input"),
    }
}

/// Reads the calendar
#[tool]
async fn calendar(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok("3 meetings"),
        None if rand_bit() => auth_required!(url = "https://example.com/login"),
        None => auth_required!(prompt = String::from("Sign in"), url = "https://example.com/login",),
    }
}

fn rand_bit() -> bool {
    std::process::id() % 2 == 0
}

pub fn main() {
    let _ = (Buy, Ship, Calendar);
}
