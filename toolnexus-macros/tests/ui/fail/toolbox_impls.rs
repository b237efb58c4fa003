use std::fmt;
use toolnexus::toolbox;

struct Shop;

#[toolbox]
impl fmt::Display for Shop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("shop")
    }
}

struct Store<T>(T);

#[toolbox]
impl<T: Send + Sync + 'static> Store<T> {
    /// Counts
    #[tool]
    async fn count(&self) -> String {
        String::new()
    }
}

struct Empty;

#[toolbox]
impl Empty {
    /// Not marked
    async fn forgotten(&self) -> String {
        String::new()
    }
}

fn main() {}
