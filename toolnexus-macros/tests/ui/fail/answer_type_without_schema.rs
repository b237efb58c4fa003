use toolnexus::{pending, ToolResult};

#[derive(serde::Deserialize)]
struct Shipping {
    zip: String,
}

fn main() {
    let _: ToolResult = pending!(kind = "input", prompt = "Where to?", answer = Shipping);
}
