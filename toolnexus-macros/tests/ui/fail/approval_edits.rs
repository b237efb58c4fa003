use toolnexus::tool;

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], edits = true))]
fn allowed_anyway(vendor: String, amount_cents: u64) -> String {
    format!("{vendor} {amount_cents}")
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], edits = []))]
fn names_nothing(vendor: String, amount_cents: u64) -> String {
    format!("{vendor} {amount_cents}")
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], edits = "memo"))]
fn not_a_list(vendor: String, memo: String) -> String {
    format!("{vendor} {memo}")
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], edits = ["memo", 7, "memo"]))]
fn odd_elements(vendor: String, memo: String) -> String {
    format!("{vendor} {memo}")
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], edits = ["note"]))]
fn no_such_argument(vendor: String, #[arg(rename = "memo")] note: String) -> String {
    format!("{vendor} {note}")
}

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], rememberable = true))]
fn rememberable_is_a_flag(vendor: String) -> String {
    vendor
}

fn main() {}
