use toolnexus::{tool, toolbox};

struct Bank {
    limit: f64,
}

#[toolbox]
impl Bank {
    /// Withdraws cash
    #[tool(approval(when = amount > self.limit))]
    fn withdraw(amount: f64) -> String {
        amount.to_string()
    }
}

/// Pays
#[tool(approval(when = self.big))]
fn pay(amount: f64) -> String {
    amount.to_string()
}

fn main() {
    let _ = Bank { limit: 1.0 }.limit;
}
