use toolnexus::tool;

/// Pays a vendor's invoice
#[tool(approval(when = amount_cents > 50000, responders = "group:finance"))]
fn not_a_list(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = []))]
fn empty(amount_cents: u64) -> String {
    amount_cents.to_string()
}

const FINANCE: &str = "group:finance";

/// Pays a vendor's invoice
#[tool(approval(responders = [FINANCE, 7, "ada@example.com"]))]
fn not_strings(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance", "ada@example.com", "group:finance"]))]
fn named_twice(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["", "group:"]))]
fn nameless(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], responders = ["ada@example.com"]))]
fn given_twice(amount_cents: u64) -> String {
    amount_cents.to_string()
}

fn main() {}
