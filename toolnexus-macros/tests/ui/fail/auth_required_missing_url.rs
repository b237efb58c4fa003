use toolnexus::{auth_required, ToolResult};

fn main() {
    let _: ToolResult = auth_required!(prompt = "Sign in to your calendar");
}
