use toolnexus::tool;

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], quorum = "2"))]
fn not_a_number(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], quorum = 1))]
fn one(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], quorum = 2.5))]
fn a_fraction(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["ada@example.com", "bob@example.com"], quorum = 3))]
fn more_than_named(amount_cents: u64) -> String {
    amount_cents.to_string()
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], quorum = 99999999999))]
fn too_many(amount_cents: u64) -> String {
    amount_cents.to_string()
}

fn main() {}
