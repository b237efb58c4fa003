use toolnexus::{pending, tool, Answered, ToolResult};

/// Decodes, but has no schema to ask with.
#[derive(serde::Deserialize)]
pub struct Size {
    pub label: String,
}

/// Asks for a size
#[tool]
async fn pick(size: Option<Answered<Size>>) -> ToolResult {
    match size {
        None => pending!(kind = "input", prompt = "Which size?"),
        Some(s) => ToolResult::ok(s.label.clone()),
    }
}

fn main() {}
