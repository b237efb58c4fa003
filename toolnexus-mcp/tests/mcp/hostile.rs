//! A hostile caller at the MCP door, driven by the official Python SDK: a partner signed in
//! with its own token tries every way an MCP caller could settle an approval only finance
//! may give — accepting the elicitation mid-call (2025-11-25), sending `inputResponses`
//! with the first call and in a round (2026-07-28), `tasks/update` of its own kept task,
//! and reading or cancelling someone else's task. Each ends in a refusal, the payment never
//! runs, and every attempt at an answer is in the inbox's audit trail; finance's own
//! elicitation answer is recorded there (audit entry, vote, receipt) and the payment runs
//! once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolResponse;
use serde_json::{Value, json};
use toolnexus::{Answer, Approval, NativeTool, ToolContext, ToolResult, Toolkit};
use toolnexus_inbox::receipt::ReceiptKey;
use toolnexus_inbox::{AuditKind, BearerTokens, Inbox, ParkedState, Person};
use toolnexus_mcp::McpServer;
use toolnexus_test_support::databases::TestDb;

use crate::support::{call, run_script, text};
use crate::tasks::{asking, serve, signed};

const TOKENS: &str = "tok-alice alice@shop.example finance\n\
                      tok-ada ada@shop.example support\n\
                      tok-mallory mallory@partner.example\n";

const MALLORY: &str = "mallory@partner.example";

/// The invoices the payment tool paid, in order.
type Paid = Arc<Mutex<Vec<u64>>>;

/// `pay_invoice`, gated for finance, recording every payment it makes. It runs a ruled
/// approval only under receipts `inbox` signed: an approval settled anywhere but in the
/// inbox would not run it.
fn toolkit(paid: Paid, inbox: &Inbox) -> Toolkit {
    let pay = NativeTool::of(
        "pay_invoice",
        "Pays a vendor's invoice",
        json!({"type": "object", "properties": {"invoice": {"type": "integer"}}, "required": ["invoice"]}),
        move |args: Value, _ctx: ToolContext| {
            let paid = paid.clone();
            async move {
                let invoice = args["invoice"].as_u64().unwrap_or_default();
                paid.lock().unwrap().push(invoice);
                ToolResult::ok(format!("paid invoice {invoice}"))
            }
        },
    );
    Toolkit::builder()
        .tool(pay)
        .approval(Approval::tools(["pay_invoice"]).responders(["group:finance"]))
        .verify_receipts(inbox.receipt_public_key().expect("the inbox signs"))
        .build()
        .unwrap()
}

/// The id of the approval the server asks for a call of `pay_invoice` with `args`: derived
/// from the call, so a caller can compute it before calling.
fn gate_id(tk: &Toolkit, args: &Value) -> String {
    let call = format!("mcp/pay_invoice/{args}");
    tk.approval_request("pay_invoice", args, &call)
        .expect("pay_invoice is gated")
        .id
}

/// The line of step `name` the script printed.
fn step<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| line["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {lines:?}"))
}

/// Who the inbox's audit trail names for the entries of `kind` about request `id`.
pub(crate) async fn actors(inbox: &Inbox, id: &str, kind: AuditKind) -> Vec<Option<String>> {
    let trail = inbox.audit(id).await.unwrap();
    trail
        .into_iter()
        .filter(|e| e.kind == kind && e.request.as_deref() == Some(id))
        .map(|e| e.actor)
        .collect()
}

toolnexus_test_support::both_engines!(a_partner_never_approves_its_own_payment_at_the_mcp_door);

async fn a_partner_never_approves_its_own_payment_at_the_mcp_door(db: TestDb) {
    let inbox = Inbox::builder(&db.url)
        .agent("mcp-shop")
        .responders("approval", ["group:finance"])
        .receipt_key(ReceiptKey::ephemeral_for_tests().unwrap())
        .open()
        .await
        .unwrap();
    let paid = Paid::default();
    let tk = toolkit(paid.clone(), &inbox);
    let server = McpServer::builder(tk.clone())
        .name("shop")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .inbox(inbox.clone())
        .identify(BearerTokens::parse(TOKENS).unwrap())
        .build()
        .unwrap();
    let url = serve(server).await;
    // The SDK's client cannot take a task for a call; rmcp's, signed in, starts them.
    let mallory = signed(&url, "tok-mallory").await;
    let (own, _) = asking(&mallory, "pay_invoice", json!({"invoice": 4})).await;
    let ada = signed(&url, "tok-ada").await;
    let (adas, _) = asking(&ada, "pay_invoice", json!({"invoice": 5})).await;

    let gate = gate_id(&tk, &json!({"invoice": 2}));
    let stdout = run_script("hostile.py", &[&url, &gate, &own, &adas]).await;
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();

    // (a), (b): the caller was asked (or answered unasked), its answer refused, and the
    // result says who must answer.
    for (name, asked) in [("a", 1), ("b_first", 0), ("b_round", 1)] {
        let line = step(&lines, name);
        let text = line["text"].as_str().unwrap_or_default();
        assert_eq!(line["error"], true, "{name}: {line}");
        assert!(text.contains("group:finance"), "{name}: {text}");
        assert!(text.contains("not taken"), "{name}: {text}");
        assert_eq!(line["elicited"], asked, "{name}: {line}");
    }
    // (c): the partner's update of its own task is refused, and the task still waits.
    let c = step(&lines, "c");
    assert_eq!(c["refused"]["code"], -32602, "{c}");
    assert_eq!(c["after"], "input_required", "{c}");

    // (d): someone else's task is as unknown to the partner as a task that does not exist.
    let others = step(&lines, "d_others");
    let task = adas.as_str();
    let unknown = &others["unknown"];
    assert!(unknown["code"].is_i64(), "{others}");
    for what in ["peek", "cancel"] {
        let refused = &others[what];
        assert_eq!(refused["code"], unknown["code"], "{what}: {others}");
        let message = refused["message"].as_str().unwrap_or_default();
        let expected = unknown["message"]
            .as_str()
            .unwrap_or_default()
            .replace("no-such-task", task);
        assert_eq!(message, expected, "{what}: {others}");
    }
    // Finance, whom its waiting request names, reads the question the starter reads.
    let approver = step(&lines, "d_approver");
    let seen = &approver["seen"]["ok"];
    assert_eq!(seen["status"], "input_required", "{approver}");
    let (_, asked) = seen["inputRequests"]
        .as_object()
        .and_then(|requests| requests.iter().next())
        .expect("the question");
    assert_eq!(
        asked["params"]["message"], approver["starter_sees"],
        "{approver}"
    );
    let done = step(&lines, "d_done");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["text"], "paid invoice 5", "{done}");
    // The result is the starter's: the approver is told no more of it.
    assert_eq!(done["approver_after"]["code"], unknown["code"], "{done}");

    // The allowed path: finance's elicitation answer ran the payment.
    for (name, invoice) in [("allowed", 6), ("allowed_round", 7)] {
        let allowed = step(&lines, name);
        assert_eq!(allowed["error"], false, "{allowed}");
        assert_eq!(
            allowed["text"],
            format!("paid invoice {invoice}"),
            "{allowed}"
        );
        assert_eq!(allowed["elicited"], 1, "{allowed}");
    }

    // Only what finance approved ran, each once.
    let mut runs = paid.lock().unwrap().clone();
    runs.sort_unstable();
    assert_eq!(runs, [5, 6, 7]);

    // Each of the partner's answers is on record as refused, and its request still waits.
    for invoice in 1..=4 {
        let id = gate_id(&tk, &json!({"invoice": invoice}));
        assert_eq!(
            actors(&inbox, &id, AuditKind::AnswerRefused).await,
            [Some(MALLORY.to_owned())],
            "invoice {invoice}"
        );
        let parked = inbox.get(&id).await.unwrap().expect("parked");
        assert_eq!(parked.state, ParkedState::Waiting, "invoice {invoice}");
        assert!(
            parked.votes.is_empty(),
            "invoice {invoice}: {:?}",
            parked.votes
        );
    }
    // Finance's answers are recorded like any other: the audit entry, the vote, the receipt.
    for invoice in [6, 7] {
        let id = gate_id(&tk, &json!({"invoice": invoice}));
        assert_eq!(
            actors(&inbox, &id, AuditKind::Answered).await,
            [Some("alice@shop.example".to_owned())]
        );
        let parked = inbox.get(&id).await.unwrap().expect("parked");
        let voters: Vec<_> = parked.votes.iter().map(|v| v.by.as_deref()).collect();
        assert_eq!(voters, [Some("alice@shop.example")]);
        let answer = parked.answer.expect("answered");
        assert_eq!(answer.receipts.len(), 1, "{answer:?}");
    }

    // Finance approves invoice 1 on the inbox's side: the partner's identical call picks the
    // approval up and the payment runs once; the next identical call asks anew.
    let first = gate_id(&tk, &json!({"invoice": 1}));
    let alice = Person::new("alice@shop.example").groups(["finance"]);
    inbox.answer_as(Answer::ok(&first), alice).await.unwrap();
    let again = || call("pay_invoice", json!({"invoice": 1}));
    let picked = mallory.call_tool_once(again()).await.unwrap();
    let CallToolResponse::Complete(picked) = picked else {
        panic!("the call's result, not {picked:?}")
    };
    assert_eq!(text(&picked), (false, "paid invoice 1".to_owned()));
    let anew = mallory.call_tool_once(again()).await.unwrap();
    assert!(
        matches!(anew, CallToolResponse::Task(_)),
        "a new approval, waiting in a task: {anew:?}"
    );
    let mut runs = paid.lock().unwrap().clone();
    runs.sort_unstable();
    assert_eq!(runs, [1, 5, 6, 7], "invoice 1 paid once");
}
