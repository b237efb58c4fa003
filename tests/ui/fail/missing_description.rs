use toolnexus::tool;

#[tool]
async fn undocumented(item: String) -> String {
    item
}

fn main() {}
