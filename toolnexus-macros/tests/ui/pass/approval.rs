//! The forms an approval takes, without a warning: every form of `approval`, raw and
//! renamed parameters in a prompt, a condition reading a toolbox's value, a type without
//! `Display`, injected parameters next to it, a `self::` path in a condition.
#![deny(warnings)]
use std::sync::Arc;
use toolnexus::{tool, toolbox, Answer, Tool, ToolContext};

/// Always asks, in the default words
#[tool(approval)]
async fn reboot(host: String) -> String {
    host
}

/// Deletes a file
#[tool(approval = "Delete {path}, type {type}?")]
async fn delete(#[arg(rename = "filePath")] path: String, r#type: String) -> String {
    format!("{path} {}", r#type)
}

/// Asks for big amounts, in the default words
#[tool(approval(when = amount > LIMIT && self::big(amount),))]
fn pay(amount: u64, answer: Option<&Answer>, ctx: &ToolContext) -> String {
    let _ = (answer, ctx);
    amount.to_string()
}

const LIMIT: u64 = 10;

fn big(amount: u64) -> bool {
    amount > 1
}

/// Asks always, with an empty list
#[tool(approval())]
fn noop() -> String {
    String::new()
}

struct Vault {
    locked: bool,
}

#[toolbox]
impl Vault {
    /// Opens the vault
    #[tool(approval(prompt = "Open with {codes}?", when = self.locked || codes.is_empty()))]
    fn open(&self, codes: Vec<u32>) -> String {
        format!("{} {codes:?}", self.locked)
    }

    /// Reads a label, asking always
    #[tool(approval(when = true, prompt = "Read {label:>6}?"))]
    fn label(label: String) -> String {
        label
    }
}

pub fn main() {
    let args = toolnexus::__private::serde_json::json!({"filePath": "a", "type": "b"});
    assert_eq!(Delete.approval(&args).as_deref(), Some("Delete a, type b?"));
    let vault = VaultOpen::new(Arc::new(Vault { locked: true }));
    let codes = toolnexus::__private::serde_json::json!({"codes": [1, 2]});
    assert_eq!(vault.approval(&codes).as_deref(), Some("Open with [1,2]?"));
    let _ = (Reboot, Pay, Noop, VaultLabel);
}
