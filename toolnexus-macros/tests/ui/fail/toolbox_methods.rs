use std::sync::Arc;
use toolnexus::{toolbox, Toolbox};

struct Counter {
    n: u32,
}

#[toolbox]
impl Counter {
    /// Adds one
    #[tool]
    async fn bump(&mut self) -> String {
        self.n += 1;
        self.n.to_string()
    }

    /// Gives the counter away
    #[tool]
    async fn consume(self) -> String {
        self.n.to_string()
    }

    /// Shows a value
    #[tool]
    async fn show<T: ToString>(&self, value: T) -> String {
        value.to_string()
    }
}

fn main() {
    // The stand-ins keep uses of the generated items from adding errors of their own.
    let _ = Arc::new(Counter { n: 0 }).into_tools();
    let _ = CounterBump::new(Arc::new(Counter { n: 0 }));
}
