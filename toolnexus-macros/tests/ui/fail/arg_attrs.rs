use toolnexus::{tool, Answer};

/// Looks up the weather
#[tool]
async fn weather(
    #[arg(default)] city: String,
    #[arg(rename = "")] unit: String,
    #[arg(rename = "two words")] days: u8,
    #[arg(rename = "city")] town: String,
    #[arg(default = 3)] hours: String,
    #[schemars(length(max = 5))] answer: Option<&Answer>,
) -> String {
    let _ = (city, unit, days, town, hours, answer);
    String::new()
}

fn main() {}
