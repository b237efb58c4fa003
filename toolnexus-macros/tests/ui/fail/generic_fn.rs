use toolnexus::tool;

/// Echoes its input
#[tool]
async fn echo<T: ToString>(text: T) -> String {
    text.to_string()
}

fn main() {}
