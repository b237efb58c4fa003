use std::rc::Rc;
use toolnexus::tool;

async fn fetch() {}

/// Counts something
#[tool]
async fn count(item: String) -> String {
    let shared = Rc::new(item);
    fetch().await;
    shared.to_string()
}

fn main() {}
