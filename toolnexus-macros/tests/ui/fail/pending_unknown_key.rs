use toolnexus::{pending, ToolResult};

fn main() {
    let _: ToolResult = pending!(kind = "approval", prompt = "Approve?", link = "https://example.com");
}
