use toolnexus::tool;

/// Adds two numbers
#[tool]
async fn add((a, b): (u32, u32), _: String) -> String {
    (a + b).to_string()
}

fn main() {}
