use toolnexus::{tool, Answer, ToolResult};

/// Approves a purchase
#[tool]
async fn approve(item: String, answer: Option<Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok(item),
        None => ToolResult::error("no answer"),
    }
}

fn main() {}
