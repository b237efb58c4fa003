use toolnexus::{tool, Answer};

/// Echoes its input
#[tool]
async fn echo(
    #[arg(description = "The text", example = "hi")] text: String,
    #[arg(description = "The answer")] answer: Option<&Answer>,
    #[answer] #[context] both: Option<&Answer>,
) -> String {
    let _ = (answer, both);
    text
}

fn main() {}
