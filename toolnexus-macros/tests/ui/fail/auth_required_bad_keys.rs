use toolnexus::{auth_required, ToolResult};

fn main() {
    let _: ToolResult = auth_required!(
        url = "https://example.com/login",
        kind = "authorization",
        url = "https://example.com/other",
    );
}
