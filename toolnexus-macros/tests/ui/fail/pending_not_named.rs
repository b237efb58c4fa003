use toolnexus::{pending, ToolResult};

fn main() {
    let _: ToolResult = pending!("approval", "Approve?");
}
