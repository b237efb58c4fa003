use toolnexus::tool;

#[derive(serde::Deserialize)]
struct Order {
    item: String,
}

/// Places an order
#[tool]
async fn place_order(order: Order) -> String {
    order.item
}

fn main() {}
