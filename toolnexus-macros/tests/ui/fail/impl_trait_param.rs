use toolnexus::tool;

/// Echoes its input
#[tool]
async fn echo(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
