use toolnexus::tool;

/// Echoes its input
#[tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
