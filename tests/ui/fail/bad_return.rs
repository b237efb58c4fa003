use toolnexus::tool;

/// Counts letters
#[tool]
async fn count(item: String) -> usize {
    item.len()
}

fn main() {}
