use toolnexus::{pending_all, ToolResult};

fn main() {
    let _: ToolResult = pending_all![
        (kind = "approval", prompt = "Ship it?")
        (kind = "input", prompt = "Gift note?")
    ];
}
