use toolnexus::tool;

/// Echoes its input
#[tool]
async fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {}

/// Joins words
#[tool]
async fn join(words: Vec<&str>) -> String {
    words.join(" ")
}
