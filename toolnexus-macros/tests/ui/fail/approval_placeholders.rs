use toolnexus::{tool, Answer};

/// Deletes a file
#[tool(approval = "Delete {pth} for {answer}?")]
async fn delete(path: String, answer: Option<&Answer>) -> String {
    let _ = answer;
    path
}

/// Renames a city
#[tool(approval(prompt = "Rename {cityName}?"))]
async fn rename(#[arg(rename = "cityName")] city: String) -> String {
    city
}

/// Pings
#[tool(approval = "Ping {host}?")]
async fn ping() -> String {
    String::new()
}

fn main() {}
