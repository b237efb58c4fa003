//! No side doors: a run trusts signed approvals, not the door an answer came through; an
//! edit is judged as the call it becomes; `remember`, a door's stand-in, a malformed rule,
//! a cancel, an expiry and a delegation each get the judgement a payments reviewer expects,
//! and every refused attempt is on the record.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use toolnexus_test_support::names::unique;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, Approval, LlmClient, NativeTool, Receipt, Request, RunResult, ToolResult, Toolkit,
};
use toolnexus_inbox::receipt::ReceiptKey;
use toolnexus_inbox::{AuditKind, Cancelled, Expiry, Inbox, InboxError, ParkedState, Person};

use crate::support::{both_engines, client, last_prompt, InboxDb, TestDb};

mod settling;

both_engines!(
    a_run_trusts_signed_approvals_not_the_door,
    an_edit_is_judged_as_the_call_it_becomes,
    a_rule_may_forbid_or_limit_edits,
    remember_is_refused_for_a_ruled_approval,
    a_stand_in_never_counts_toward_a_quorum,
    the_inboxs_rules_live_with_the_request,
    a_malformed_rule_is_refused_at_park,
);

/// Every payment made: (vendor, cents, receipts it ran under). Vendors are unique to a
/// test and engine.
static PAID: Mutex<Vec<(String, i64, Vec<Receipt>)>> = Mutex::new(Vec::new());

fn paid(vendor: &str) -> Vec<(i64, Vec<Receipt>)> {
    let paid = PAID.lock().unwrap();
    let mine = paid.iter().filter(|(v, ..)| v.starts_with(vendor));
    mine.map(|(_, cents, r)| (*cents, r.clone())).collect()
}

/// `pay_invoice`: finance approves above 50,000 cents, two of finance above 500,000.
fn payments(verify: Option<&Inbox>, rule: impl Fn(Approval) -> Approval) -> Toolkit {
    let pay = NativeTool::of(
        "pay_invoice",
        "Pays a vendor's invoice",
        json!({"type": "object", "properties": {
            "vendor": {"type": "string"}, "amount_cents": {"type": "integer"},
            "memo": {"type": "string"}
        }, "required": ["vendor", "amount_cents"]}),
        |args, ctx| async move {
            let vendor = args["vendor"].as_str().unwrap_or_default().to_owned();
            let cents = args["amount_cents"].as_i64().unwrap_or_default();
            let receipts = ctx.receipts().to_vec();
            PAID.lock().unwrap().push((vendor.clone(), cents, receipts));
            ToolResult::ok(format!("paid {cents} to {vendor}"))
        },
    );
    let cents = |args: &Value| args["amount_cents"].as_i64().unwrap_or(i64::MAX);
    let mut tk = Toolkit::builder()
        .tool(pay)
        .approval(
            Approval::tools(["pay_invoice"])
                .when(move |args: &Value| cents(args) > 500_000)
                .responders(["group:finance"])
                .quorum(2),
        )
        .approval(rule(
            Approval::tools(["pay_invoice"])
                .when(move |args: &Value| cents(args) > 50_000)
                .responders(["group:finance"]),
        ));
    if let Some(inbox) = verify {
        tk = tk.verify_receipts(inbox.receipt_public_key().expect("a receipt key"));
    }
    tk.build().unwrap()
}

/// The model: "pay VENDOR CENTS" calls `pay_invoice`; after a result it says it.
fn pay_script(req: &RecordedRequest) -> Reply {
    let messages = req.messages();
    let last = messages.last().cloned().unwrap_or_default();
    if last["role"] == "tool" {
        return Reply::text(format!(
            "outcome: {}",
            last["content"].as_str().unwrap_or("")
        ));
    }
    let prompt = last_prompt(messages);
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let (vendor, cents) = match words.as_slice() {
        [_, vendor, cents, ..] => (*vendor, cents.parse::<i64>().unwrap_or(0)),
        _ => ("nobody", 0),
    };
    Reply::tool_call(
        "call_1",
        "pay_invoice",
        json!({"vendor": vendor, "amount_cents": cents}),
    )
}

struct Payments {
    inbox: Inbox,
    llm: MockLlm,
    tk: Toolkit,
}

impl Payments {
    async fn open(db: &TestDb, verify: bool, rule: impl Fn(Approval) -> Approval) -> Payments {
        let key = ReceiptKey::ephemeral_for_tests().unwrap();
        let inbox = db.builder().receipt_key(key).open().await.unwrap();
        let tk = payments(verify.then_some(&inbox), rule);
        let llm = MockLlm::with_fn(pay_script).await.unwrap();
        Payments { inbox, llm, tk }
    }

    fn client(&self) -> LlmClient {
        client(&self.llm)
    }

    async fn halted(&self, vendor: &str, cents: i64) -> RunResult {
        let run = self
            .client()
            .run(format!("pay {vendor} {cents}"), &self.tk)
            .await
            .unwrap();
        assert!(run.pending.is_some(), "the payment waits: {run:?}");
        run
    }

    async fn park(&self, vendor: &str, cents: i64) -> String {
        let run = self.halted(vendor, cents).await;
        self.inbox.park(&run).await.unwrap()
    }

    async fn resume(&self) -> RunResult {
        let resumed = self.inbox.resume_next(&self.client(), &self.tk).await;
        resumed.unwrap().expect("an answered run").result
    }

    async fn trail(&self, run: &str) -> Vec<(AuditKind, Option<String>)> {
        let trail = self.inbox.audit(run).await.unwrap();
        trail.into_iter().map(|e| (e.kind, e.actor)).collect()
    }
}

fn finance(id: &str) -> Person {
    Person::new(id).groups(["finance"])
}

async fn a_run_trusts_signed_approvals_not_the_door(db: TestDb) {
    let p = Payments::open(&db, true, |a| a).await;
    let vendor = unique("acme");
    let run = p.halted(&vendor, 90_000).await;
    let request = run.pending.clone().unwrap();

    // A door that settles the gate itself — an approval the inbox never saw: not run.
    let bare = p
        .client()
        .run_with_answer(
            run.messages.clone(),
            &request,
            Answer::ok(&request.id),
            &p.tk,
        )
        .await
        .unwrap();
    assert!(
        paid(&vendor).is_empty(),
        "an unsigned approval paid nothing"
    );
    let said = &bare.tool_calls[0].output;
    assert!(said.contains("no receipt"), "{said}");

    // Receipts signed by another key, under this request and call: not run either.
    let stranger = ReceiptKey::ephemeral_for_tests().unwrap();
    let other = Inbox::builder("sqlite::memory:")
        .receipt_key(stranger)
        .open()
        .await
        .unwrap();
    let forged_at = other.park(&run).await.unwrap();
    other
        .answer_as(Answer::ok(&forged_at), finance("mallory@example.com"))
        .await
        .unwrap();
    let forged = other
        .get(&forged_at)
        .await
        .unwrap()
        .unwrap()
        .answer
        .unwrap();
    assert!(!forged.receipts.is_empty());
    let refused = p
        .client()
        .run_with_answer(run.messages.clone(), &request, forged, &p.tk)
        .await
        .unwrap();
    assert!(
        paid(&vendor).is_empty(),
        "another key's receipts paid nothing"
    );
    assert!(refused.tool_calls[0].output.contains("does not verify"));

    // The inbox's own path: finance approves, the run resumes and pays once, signed.
    let id = p.inbox.park(&run).await.unwrap();
    p.inbox
        .answer_as(Answer::ok(&id), finance("alice@corp.example"))
        .await
        .unwrap();
    let done = p.resume().await;
    assert!(done.text.contains("paid 90000"), "{}", done.text);
    let payments = paid(&vendor);
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0].1.len(), 1, "it ran under alice's receipt");
}

async fn an_edit_is_judged_as_the_call_it_becomes(db: TestDb) {
    let p = Payments::open(&db, true, |a| a).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    // One approver turns 60,000 to Acme into 5,000,000 to herself: the inbox takes her
    // approval of the call, but the run judges the call it would become.
    let raised = json!({"vendor": format!("{vendor}-alice"), "amount_cents": 5_000_000});
    p.inbox
        .answer_as(
            Answer::ok(&id).with_args(raised),
            finance("alice@corp.example"),
        )
        .await
        .unwrap();
    let done = p.resume().await;
    assert!(paid(&vendor).is_empty(), "nothing was paid: {}", done.text);
    assert!(
        done.text.contains("needs an approval of its own"),
        "{}",
        done.text
    );

    // An edit that lowers the amount stays within what one approver may approve.
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    let lowered = json!({"vendor": vendor, "amount_cents": 55_000});
    p.inbox
        .answer_as(
            Answer::ok(&id).with_args(lowered),
            finance("alice@corp.example"),
        )
        .await
        .unwrap();
    p.resume().await;
    let payments = paid(&vendor);
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0].0, 55_000, "it ran as edited, under its receipt");
}

async fn a_rule_may_forbid_or_limit_edits(db: TestDb) {
    let p = Payments::open(&db, false, |a| a.edits_only(["memo"])).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    let alice = finance("alice@corp.example");
    let other_vendor = json!({"vendor": "Alice Holdings", "amount_cents": 60_000});
    let refused = p
        .inbox
        .answer_as(Answer::ok(&id).with_args(other_vendor), alice.clone())
        .await;
    assert!(
        matches!(&refused, Err(InboxError::InvalidAnswer { field: Some(f), .. }) if f == "vendor"),
        "{refused:?}"
    );
    let trail = p.trail(&id).await;
    assert!(
        trail.contains(&(
            AuditKind::AnswerRefused,
            Some("alice@corp.example".to_owned())
        )),
        "the refused edit is on the record: {trail:?}"
    );
    let memo = json!({"vendor": vendor, "amount_cents": 60_000, "memo": "May"});
    p.inbox
        .answer_as(Answer::ok(&id).with_args(memo), alice)
        .await
        .unwrap();
    p.resume().await;
    assert_eq!(paid(&vendor).len(), 1);

    let p = Payments::open(&db, false, Approval::no_edits).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    let any_edit = json!({"vendor": vendor, "amount_cents": 1});
    let refused = p
        .inbox
        .answer_as(
            Answer::ok(&id).with_args(any_edit),
            finance("alice@corp.example"),
        )
        .await;
    assert!(matches!(refused, Err(InboxError::InvalidAnswer { .. })));
}

async fn remember_is_refused_for_a_ruled_approval(db: TestDb) {
    let p = Payments::open(&db, false, |a| a).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    let refused = p
        .inbox
        .answer_as(Answer::ok(&id).remember(), finance("alice@corp.example"))
        .await;
    assert!(
        matches!(&refused, Err(InboxError::InvalidAnswer { field: Some(f), .. }) if f == "remember"),
        "{refused:?}"
    );

    // A rule that allows it: remembered, and the receipt says so.
    let p = Payments::open(&db, false, Approval::rememberable).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 60_000).await;
    p.inbox
        .answer_as(Answer::ok(&id).remember(), finance("alice@corp.example"))
        .await
        .unwrap();
    let answer = p.inbox.get(&id).await.unwrap().unwrap().answer.unwrap();
    assert!(answer.remember);
    assert_eq!(answer.receipts[0].statement.remember, Some(true));
}

async fn a_stand_in_never_counts_toward_a_quorum(db: TestDb) {
    let p = Payments::open(&db, false, |a| a).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 900_000).await;
    let request = p.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(request.quorum, 2);
    // A stand-in that even carries the group: a door cannot tell two callers apart.
    let stand_in = Person::stand_in("a2a client").groups(["finance"]);
    let refused = p.inbox.answer_as(Answer::ok(&id), stand_in).await;
    assert!(
        matches!(refused, Err(InboxError::NotAllowed { .. })),
        "{refused:?}"
    );
    let trail = p.trail(&id).await;
    assert!(trail.contains(&(AuditKind::AnswerRefused, Some("a2a client".to_owned()))));
    let still = p.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(still.approvals().unwrap().to_string(), "0 of 2 approvals");
}

async fn the_inboxs_rules_live_with_the_request(db: TestDb) {
    // The deployment that parks names finance; another process opens the same database
    // with no rules at all.
    let strict = db
        .builder()
        .responders("approval", ["group:finance"])
        .open()
        .await
        .unwrap();
    let bare = db.builder().open().await.unwrap();
    let llm = MockLlm::start([Reply::tool_call("c1", "send", json!({"to": "x"}))])
        .await
        .unwrap();
    let send = NativeTool::of(
        "send",
        "Sends",
        json!({"type": "object"}),
        |_args, _ctx| async { "sent" },
    );
    let tk = Toolkit::builder()
        .tool(send)
        .approval(Approval::tools(["send"]))
        .build()
        .unwrap();
    let client = client(&llm);
    let run = client.run("send it", &tk).await.unwrap();
    let id = strict.park(&run).await.unwrap();
    let shown = bare.get(&id).await.unwrap().unwrap();
    assert_eq!(
        shown.request.responders(),
        Some(vec!["group:finance"]),
        "the rule went with the request"
    );
    let refused = bare
        .answer_as(Answer::ok(&id), Person::new("partner@vendor.example"))
        .await;
    assert!(matches!(refused, Err(InboxError::NotAllowed { .. })));
    bare.answer_as(Answer::ok(&id), finance("bob@corp.example"))
        .await
        .unwrap();
}

async fn a_malformed_rule_is_refused_at_park(db: TestDb) {
    let inbox = db.builder().open().await.unwrap();
    for (data, field) in [
        (json!({"responders": "group:finance"}), "responders"),
        (json!({"quorum": "2"}), "quorum"),
    ] {
        let asks = data.clone();
        let odd = NativeTool::of(
            "odd",
            "Asks oddly",
            json!({"type": "object"}),
            move |_a, _c| {
                let asked = Request::new("approval", "Pay?").with_data(asks.clone());
                async move { ToolResult::pending(asked) }
            },
        );
        let tk = Toolkit::builder().tool(odd).build().unwrap();
        let llm = MockLlm::start([Reply::tool_call("c1", "odd", json!({}))])
            .await
            .unwrap();
        let client = client(&llm);
        let run = client.run("ask", &tk).await.unwrap();
        let refused = inbox.park(&run).await;
        assert!(
            matches!(&refused, Err(InboxError::InvalidRule { reason, .. }) if reason.contains(field)),
            "{data}: {refused:?}"
        );
    }
}
