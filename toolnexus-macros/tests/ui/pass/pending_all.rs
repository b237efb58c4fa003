//! Several requests at once with `pending_all!`: every `pending!` argument in a request, a
//! typed answer form, and the answers read back from the context.
#![deny(warnings)]
use schemars::JsonSchema;
use serde::Deserialize;
use toolnexus::{pending_all, tool, Answer, ToolContext, ToolResult};

#[derive(Deserialize, JsonSchema)]
struct Note {
    text: String,
}

/// Ships an order
#[tool]
async fn ship(order: u64, answer: Option<&Answer>, ctx: &ToolContext) -> ToolResult {
    if let (Some(first), [_, note]) = (answer, ctx.answers.as_slice()) {
        let note: Note = match note.data_as() {
            Ok(note) => note,
            Err(e) => return ToolResult::error(e.to_string()),
        };
        return ToolResult::ok(format!("{order}: {} {}", first.ok, note.text));
    }
    pending_all![
        (
            kind = "approval",
            prompt = format!("Ship {order}?"),
            url = "https://example.com/approve",
            data = serde_json::json!({"order": order}),
            id = "ship-1",
            expires_at = "2030-01-01T00:00:00Z",
            responders = ["group:shipping"],
        ),
        (kind = toolnexus::RequestKind::Input, prompt = "Gift note?", answer = Note),
    ]
}

pub fn main() {
    let _ = Ship;
    let one: ToolResult = pending_all![(kind = "question", prompt = "Why?")];
    assert_eq!(ToolResult::requests_of(&one).len(), 1);
}
