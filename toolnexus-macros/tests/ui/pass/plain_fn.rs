//! A plain (non-async) fn is a tool too: its body runs as is when the tool is called.
#![deny(warnings)]
use toolnexus::{tool, Tool, ToolContext};

/// Echoes its input
#[tool]
fn echo(text: String) -> String {
    text
}

pub fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = serde_json::json!({"text": "hi"});
    let done = rt.block_on(Echo.execute(args, ToolContext::default()));
    assert_eq!(done.output, "hi");
    assert_eq!(echo("direct".to_owned()), "direct");
}
