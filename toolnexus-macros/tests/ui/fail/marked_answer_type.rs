use toolnexus::tool;

/// Echoes its input
#[tool]
async fn echo(text: String, #[answer] reply: String) -> String {
    text + &reply
}

fn main() {}
