use toolnexus::{tool, Answer};

/// Refunds an order
#[tool(approval(prompt = "Refund {amount}?", when = amount + 1))]
async fn refund(amount: u32) -> String {
    amount.to_string()
}

/// Refunds an order
#[tool(approval(when = amount > "100"))]
async fn compare(amount: f64) -> String {
    amount.to_string()
}

/// Refunds an order once answered
#[tool(approval(when = answer.is_some()))]
async fn answered(amount: f64, answer: Option<&Answer>) -> String {
    let _ = answer;
    amount.to_string()
}

fn main() {}
