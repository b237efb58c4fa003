use toolnexus::Answer as Approval;
use toolnexus::{pending, tool, ToolResult};

/// Buys an item once a person approves
#[tool]
async fn buy(item: String, approval: Option<&Approval>) -> ToolResult {
    match approval {
        Some(a) if a.ok => ToolResult::ok(format!("bought {item}")),
        Some(_) => ToolResult::error("not approved"),
        None => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    }
}

fn main() {}
