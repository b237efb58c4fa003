use toolnexus::tool;

/// Not serializable, so not a tool's result
pub struct Letters(usize);

/// Counts letters
#[tool]
async fn count(item: String) -> Letters {
    Letters(item.len())
}

fn main() {}
