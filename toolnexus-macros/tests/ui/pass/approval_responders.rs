//! Responders on an approval, without a warning: with a prompt and a condition, alone, on
//! a toolbox method, a trailing comma, and the names the generated code uses shadowed here.
#![deny(warnings)]
use std::sync::Arc;
use toolnexus::{tool, toolbox, Tool};

/// Shadows the prelude's `Some`: the generated code names its own by path.
#[allow(dead_code)]
enum Shadow {
    Some,
    None,
}
#[allow(unused_imports)]
use Shadow::{None, Some};

/// Pays a vendor's invoice
#[tool(approval(
    prompt = "Pay {amount_cents} cents to {vendor}?",
    when = amount_cents > 50000,
    responders = ["group:finance", "ada@example.com",],
))]
fn pay_invoice(amount_cents: u64, vendor: String) -> String {
    format!("{amount_cents} to {vendor}")
}

struct Vault;

#[toolbox]
impl Vault {
    /// Opens the vault
    #[tool(approval(responders = ["group:guards"]))]
    fn open(&self, code: u32) -> String {
        code.to_string()
    }
}

pub fn main() {
    assert_eq!(
        PayInvoice.approval_responders(),
        ::core::option::Option::Some(&["group:finance", "ada@example.com"][..])
    );
    let open = VaultOpen::new(Arc::new(Vault));
    assert_eq!(
        open.approval_responders(),
        ::core::option::Option::Some(&["group:guards"][..])
    );
}
