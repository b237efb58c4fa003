//! Approvals declared with `#[tool(approval …)]`: the prompt a call asks with, formatted
//! from its arguments, and the condition that decides whether it asks at all, on free fns
//! and toolbox methods, directly and through a toolkit.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::{tool, toolbox, Answer, Approval, Tool, ToolContext, Toolbox, Toolkit};

/// Deletes a file
#[tool(approval = "Delete {path}?")]
async fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

/// Refunds an order
#[tool(approval(prompt = "Refund {amount} on order {order}?", when = amount > 100.0))]
async fn refund(order: u64, amount: f64) -> String {
    format!("refunded {amount} on {order}")
}

/// Sends money
#[tool(approval(when = to.starts_with("ext:")))]
fn transfer(to: String, cents: u64) -> String {
    format!("{cents} to {to}")
}

/// Always asks, in the default words
#[tool(approval)]
fn reboot(host: String) -> String {
    host
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Item {
    sku: String,
}

/// Buys items
#[tool(approval = "Buy {items} at {price:.2} ({{each}}), note: {note}, mode {mode}?")]
fn buy(
    items: Vec<Item>,
    price: f64,
    note: Option<String>,
    #[arg(default = "normal")] mode: String,
    answer: Option<&Answer>,
) -> String {
    let skus: Vec<&str> = items.iter().map(|i| i.sku.as_str()).collect();
    format!(
        "{skus:?} at {price} ({note:?}, {mode}, answered: {})",
        answer.is_some()
    )
}

/// Pays a vendor's invoice
#[tool(approval(
    prompt = "Pay {amount_cents} cents to {vendor}?",
    when = amount_cents > 50000,
    responders = ["group:finance", "ada@example.com"],
))]
fn pay_invoice(amount_cents: u64, vendor: String) -> String {
    format!("paid {amount_cents} to {vendor}")
}

struct Bank {
    limit: f64,
}

#[toolbox]
impl Bank {
    /// Withdraws cash
    #[tool(approval(prompt = "Withdraw {amount} from {account}?", when = amount > self.limit))]
    fn withdraw(&self, account: String, amount: f64) -> String {
        format!("{amount} from {account}")
    }

    /// Freezes an account
    #[tool(approval(responders = ["group:fraud"]))]
    fn freeze(&self, account: String) -> String {
        account
    }

    /// Closes an account
    #[tool(approval = "Close {account}?")]
    fn close(&self, account: String) -> String {
        account
    }

    /// Shows the balance
    #[tool]
    fn balance(&self, account: String) -> String {
        account
    }
}

#[test]
fn a_prompt_shows_the_arguments() {
    assert_eq!(
        DeleteFile.approval(&json!({"path": "/tmp/x"})).as_deref(),
        Some("Delete /tmp/x?")
    );
}

#[test]
fn a_condition_decides_whether_to_ask() {
    assert_eq!(
        Refund
            .approval(&json!({"order": 7, "amount": 250.5}))
            .as_deref(),
        Some("Refund 250.5 on order 7?")
    );
    assert_eq!(Refund.approval(&json!({"order": 7, "amount": 20.0})), None);
}

#[test]
fn without_a_prompt_the_default_words_show_the_tool_and_its_arguments() {
    let args = json!({"to": "ext:bob", "cents": 5});
    assert_eq!(
        Transfer.approval(&args),
        Some(format!("Allow transfer with {args}?"))
    );
    assert_eq!(Transfer.approval(&json!({"to": "alice", "cents": 5})), None);
    let args = json!({"host": "db1"});
    assert_eq!(
        Reboot.approval(&args),
        Some(format!("Allow reboot with {args}?"))
    );
}

#[test]
fn values_without_display_are_shown_as_sent_and_specs_apply() {
    let args = json!({"items": [{"sku": "a"}], "price": 12.3456, "note": "gift"});
    assert_eq!(
        Buy.approval(&args).as_deref(),
        Some(r#"Buy [{"sku":"a"}] at 12.35 ({each}), note: "gift", mode normal?"#)
    );
    let args = json!({"items": [], "price": 1, "mode": "fast"});
    assert_eq!(
        Buy.approval(&args).as_deref(),
        Some("Buy [] at 1.00 ({each}), note: null, mode fast?")
    );
}

#[test]
fn arguments_the_tool_would_refuse_ask_nothing() {
    assert_eq!(DeleteFile.approval(&json!({})), None);
    assert_eq!(DeleteFile.approval(&json!({"path": 5})), None);
    assert_eq!(DeleteFile.approval(&json!("not an object")), None);
    assert_eq!(
        Refund.approval(&json!({"order": -1, "amount": 500.0})),
        None
    );
}

#[test]
fn a_tool_without_an_approval_never_asks() {
    let bank = Arc::new(Bank { limit: 100.0 });
    assert_eq!(
        BankBalance::new(bank).approval(&json!({"account": "a"})),
        None
    );
}

#[test]
fn a_toolbox_condition_reads_the_shared_value() {
    let bank = Arc::new(Bank { limit: 100.0 });
    let withdraw = BankWithdraw::new(Arc::clone(&bank));
    assert_eq!(
        withdraw
            .approval(&json!({"account": "main", "amount": 150.0}))
            .as_deref(),
        Some("Withdraw 150 from main?")
    );
    assert_eq!(
        withdraw.approval(&json!({"account": "main", "amount": 50.0})),
        None
    );
    let strict = BankWithdraw::new(Arc::new(Bank { limit: 10.0 }));
    assert!(strict
        .approval(&json!({"account": "main", "amount": 50.0}))
        .is_some());
    assert_eq!(
        BankClose::new(bank)
            .approval(&json!({"account": "old"}))
            .as_deref(),
        Some("Close old?")
    );
}

#[tokio::test]
async fn asking_does_not_run_the_body() {
    // The prompt is decided from the arguments alone; the body still runs only when called.
    let args = json!({"path": "/tmp/x"});
    assert!(DeleteFile.approval(&args).is_some());
    let result = DeleteFile.execute(args, ToolContext::default()).await;
    assert_eq!(result.output, "deleted /tmp/x");
}

#[test]
fn a_toolkit_asks_with_the_declared_prompt_before_its_own_rules() {
    let tools: Vec<Arc<dyn Tool>> = Arc::new(Bank { limit: 100.0 }).into_tools();
    let tk = Toolkit::builder()
        .tool(DeleteFile)
        .tool(Refund)
        .tools(tools)
        .approval(Approval::tools(["refund"]).prompt(|name: &str, _: &Value| format!("{name}?")))
        .build()
        .unwrap();
    assert_eq!(
        tk.approval_prompt("delete_file", &json!({"path": "/etc/hosts"}))
            .as_deref(),
        Some("Delete /etc/hosts?")
    );
    assert_eq!(
        tk.approval_prompt("refund", &json!({"order": 1, "amount": 500.0}))
            .as_deref(),
        Some("Refund 500 on order 1?")
    );
    // The tool's own condition lets a small refund through; the toolkit's rule still asks.
    assert_eq!(
        tk.approval_prompt("refund", &json!({"order": 1, "amount": 5.0}))
            .as_deref(),
        Some("refund?")
    );
    assert_eq!(
        tk.approval_prompt("withdraw", &json!({"account": "a", "amount": 500.0}))
            .as_deref(),
        Some("Withdraw 500 from a?")
    );
    assert_eq!(
        tk.approval_prompt("balance", &json!({"account": "a"})),
        None
    );
}

#[test]
fn declared_responders_are_the_tools_and_only_an_approval_has_them() {
    assert_eq!(
        PayInvoice.approval_responders(),
        Some(&["group:finance", "ada@example.com"][..])
    );
    // An approval without responders may be answered by anyone; no approval, no gate.
    assert_eq!(Reboot.approval_responders(), Some(&[][..]));
    assert_eq!(DeleteFile.approval_responders(), Some(&[][..]));
    let bank = Arc::new(Bank { limit: 100.0 });
    assert_eq!(
        BankFreeze::new(Arc::clone(&bank)).approval_responders(),
        Some(&["group:fraud"][..])
    );
    assert_eq!(BankBalance::new(bank).approval_responders(), None);
}

#[test]
fn a_gates_request_carries_the_responders_of_the_approval_that_asked() {
    let tools: Vec<Arc<dyn Tool>> = Arc::new(Bank { limit: 100.0 }).into_tools();
    let tk = Toolkit::builder()
        .tool(PayInvoice)
        .tool(Refund)
        .tool(Reboot)
        .tools(tools)
        .approval(Approval::tools(["pay_invoice"]).responders(["group:auditors"]))
        .approval(Approval::tools(["refund"]).responders(["group:support"]))
        .build()
        .unwrap();
    let big = json!({"amount_cents": 90_000, "vendor": "Acme"});
    let asked = tk.approval_request("pay_invoice", &big, "run/1").unwrap();
    assert_eq!(asked.prompt, "Pay 90000 cents to Acme?");
    assert_eq!(
        asked.responders(),
        Some(vec!["group:finance", "ada@example.com"])
    );
    assert_eq!(asked.gated_tool(), Some("pay_invoice"));
    // The tool's condition lets a small payment through; the toolkit's rule asks, with its own.
    let small = json!({"amount_cents": 100, "vendor": "Acme"});
    let asked = tk.approval_request("pay_invoice", &small, "run/2").unwrap();
    assert_eq!(asked.responders(), Some(vec!["group:auditors"]));
    // The tool's own approval names nobody, so anyone may answer what it asks, even though
    // the toolkit's rule for the same tool names someone.
    let asked = tk
        .approval_request("refund", &json!({"order": 1, "amount": 500.0}), "run/3")
        .unwrap();
    assert_eq!(asked.responders(), None);
    let asked = tk
        .approval_request("refund", &json!({"order": 1, "amount": 5.0}), "run/4")
        .unwrap();
    assert_eq!(asked.responders(), Some(vec!["group:support"]));
    let asked = tk
        .approval_request("freeze", &json!({"account": "a"}), "run/5")
        .unwrap();
    assert_eq!(asked.responders(), Some(vec!["group:fraud"]));
    let asked = tk
        .approval_request("reboot", &json!({"host": "db"}), "run/6")
        .unwrap();
    assert_eq!(asked.responders(), None);
    assert_eq!(asked.data.unwrap().get("responders"), None);
}

#[test]
fn unrestricted_gates_are_the_tools_some_approval_lets_anyone_answer() {
    let tools: Vec<Arc<dyn Tool>> = Arc::new(Bank { limit: 100.0 }).into_tools();
    let tk = Toolkit::builder()
        .tool(PayInvoice)
        .tool(Refund)
        .tool(Transfer)
        .tools(tools)
        .approval(Approval::tools(["transfer"]).responders(["group:treasury"]))
        .approval(Approval::tools(["balance"]))
        .build()
        .unwrap();
    // pay_invoice and freeze are restricted; transfer's own approval names nobody, whatever
    // the rule says; balance is gated only by a rule naming nobody.
    assert_eq!(
        tk.unrestricted_gates(),
        ["refund", "transfer", "withdraw", "close", "balance"]
    );
    let restricted = Toolkit::builder().tool(PayInvoice).build().unwrap();
    assert!(restricted.unrestricted_gates().is_empty());
}

#[test]
fn a_rule_that_names_nobody_is_refused_when_the_toolkit_is_built() {
    for responders in [vec![], vec![""], vec!["group:"]] {
        let built = Toolkit::builder()
            .tool(Refund)
            .approval(Approval::tools(["refund"]).responders(responders.clone()))
            .build();
        let error = built.unwrap_err();
        assert_eq!(
            error,
            toolnexus::ToolkitError::NoResponders("refund".into())
        );
        assert!(error.to_string().contains("group:NAME"), "{error}");
    }
}

#[tokio::test]
async fn a_run_halted_at_a_gate_waits_on_a_request_naming_its_responders() {
    use toolnexus::testing::{MockLlm, Reply};
    use toolnexus::{LlmClient, RunStatus};

    let model = MockLlm::start([
        Reply::tool_call(
            "c1",
            "pay_invoice",
            json!({"amount_cents": 120_000, "vendor": "Acme"}),
        ),
        Reply::text("Paid."),
    ])
    .await
    .unwrap();
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model("m")
        .api_key("k")
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(PayInvoice).build().unwrap();
    let halted = client.run("pay Acme", &tk).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().unwrap();
    assert_eq!(
        request.responders(),
        Some(vec!["group:finance", "ada@example.com"])
    );
    // The responders travel with the request; an approval still runs the call.
    let done = client
        .run_with_answer(halted.messages, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls[0].output, "paid 120000 to Acme");
}
