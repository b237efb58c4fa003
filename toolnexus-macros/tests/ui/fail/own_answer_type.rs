use toolnexus::tool;

/// Not the toolnexus answer: a quiz answer.
pub struct Answer {
    pub text: String,
}

/// Grades a quiz answer
#[tool]
async fn grade(question: String, answer: Option<&Answer>) -> String {
    match answer {
        Some(a) => format!("{question}: {}", a.text),
        None => question,
    }
}

fn main() {}
