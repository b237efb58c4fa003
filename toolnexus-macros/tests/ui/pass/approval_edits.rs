use toolnexus::serde_json::json;
use toolnexus::{tool, Answer, Edits, Tool, Toolkit};

/// Pays a vendor's invoice
#[tool(approval(responders = ["group:finance"], quorum = 2, edits = ["memo"], rememberable))]
fn pay(vendor: String, amount_cents: u64, #[arg(rename = "memo")] note: String) -> String {
    format!("{vendor} {amount_cents} {note}")
}

/// Deletes a file
#[tool(approval(edits = false, not_requester))]
fn delete(path: String) -> String {
    path
}

pub fn main() {
    assert_eq!(Pay.approval_edits(), Some(&["memo"][..]));
    assert!(Pay.approval_rememberable());
    assert_eq!(Delete.approval_edits(), Some(&[][..]));
    assert!(!Delete.approval_rememberable());
    assert!(Delete.approval_not_requester());
    assert!(!Pay.approval_not_requester());

    let tk = Toolkit::builder().tool(Pay).tool(Delete).build().unwrap();
    let args = json!({"vendor": "Acme", "amount_cents": 100, "memo": "May"});
    let asked = tk.approval_request("pay", &args, "run/call").unwrap();
    let rule = asked.rule().unwrap();
    assert_eq!(rule.edits, Edits::Only(vec!["memo"]));
    assert!(rule.rememberable);
    let vendor = json!({"vendor": "Mallory", "amount_cents": 100, "memo": "May"});
    assert!(asked.check_answer(&Answer::ok(&asked.id).with_args(vendor)).is_err());

    let gone = tk.approval_request("delete", &json!({"path": "/a"}), "run/c2").unwrap();
    assert_eq!(gone.rule().unwrap().edits, Edits::None);
    assert!(gone.rule().unwrap().not_requester);
    let edit = Answer::ok(&gone.id).with_args(json!({"path": "/b"}));
    assert!(gone.check_answer(&edit).is_err());
}
