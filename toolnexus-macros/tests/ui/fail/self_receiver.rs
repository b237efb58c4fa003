use toolnexus::tool;

struct Shop;

impl Shop {
    /// Lists the catalog
    #[tool]
    async fn catalog(&self) -> String {
        String::new()
    }
}

fn main() {}
