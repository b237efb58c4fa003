use std::sync::Arc;

use toolnexus::{tool, toolbox, Toolbox, Toolkit};

/// The natural name of what `estimate` returns, which `#[tool]` would also take.
#[derive(serde::Serialize)]
pub struct Estimate {
    pub days: u32,
}

/// Estimates how long shipping takes
#[tool]
async fn estimate(city: String) -> Estimate {
    Estimate { days: city.len() as u32 }
}

pub struct Shop;

/// Also taken: the name `Shop` + `stock` gives.
pub struct ShopStock;

#[toolbox]
impl Shop {
    /// How many are in stock
    #[tool]
    async fn stock(&self) -> u32 {
        3
    }
}

fn main() {
    let _ = Toolkit::builder().tools(Arc::new(Shop).into_tools()).build();
    let _ = ShopStock;
}
