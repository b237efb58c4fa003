//! Approvals that need several people: a quorum of distinct people, one refusal declining
//! it, approvals racing, and answering rights delegated for a window of the inbox's clock.

use std::sync::Mutex;
use std::time::Duration;
use toolnexus_test_support::names::unique;

use toolnexus::{tool, Answer, ClientError, Receipt, ToolContext, Toolkit};
use toolnexus_inbox::receipt::{self, ReceiptKey};
use toolnexus_inbox::{AuditKind, Event, Inbox, InboxError, ParkedState, Person, Webhook};
use toolnexus_test_support::receipts::python_verdicts;

use crate::receiver::Receiver;
use crate::support::{both_engines, client, halted, model, InboxDb, TestDb};

both_engines!(
    two_of_three_finance_members_resume_the_run_once,
    racing_approvals_resume_once_with_one_effect,
    one_refusal_declines_a_quorum,
    a_delegate_counts_as_the_giver_within_the_window,
    webhooks_tell_of_each_approval_and_of_the_last,
);

/// Each item bought, with the receipts its call ran under (items are unique to a test and
/// engine).
static PURCHASES: Mutex<Vec<(String, Vec<Receipt>)>> = Mutex::new(Vec::new());

fn purchases(item: &str) -> usize {
    let bought = PURCHASES.lock().unwrap();
    bought.iter().filter(|(i, _)| i == item).count()
}

/// The receipts the purchase of `item` ran under.
fn receipts_of(item: &str) -> Vec<Receipt> {
    let bought = PURCHASES.lock().unwrap();
    let found = bought.iter().find(|(i, _)| i == item);
    found.map(|(_, r)| r.clone()).unwrap_or_default()
}

/// Buys an item; two people of finance must approve first.
#[tool(approval(
    prompt = "Buy {item}?",
    responders = ["group:finance"],
    quorum = 2,
))]
async fn approve_purchase(item: String, ctx: &ToolContext) -> String {
    let receipts = ctx.receipts().to_vec();
    PURCHASES.lock().unwrap().push((item.clone(), receipts));
    format!("approved: {item}")
}

/// Checks `receipts` with the inbox's public key alone, here and with the verifier written
/// apart (Python's `cryptography`); one with a byte changed fails both.
fn verified(inbox: &Inbox, receipts: &[Receipt]) {
    assert!(!receipts.is_empty());
    let public = inbox
        .receipt_public_key()
        .expect("the inbox signs receipts");
    for r in receipts {
        receipt::verify(r, &public).expect("the receipt checks out");
    }
    let wire: Vec<serde_json::Value> = receipts
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    let verdicts = python_verdicts(&public.to_pem(), &wire);
    assert!(verdicts.iter().all(Result::is_ok), "{verdicts:?}");
    let mut forged = wire[0].clone();
    forged["by"] = serde_json::json!(format!("{}x", forged["by"].as_str().unwrap()));
    assert!(python_verdicts(&public.to_pem(), std::slice::from_ref(&forged))[0].is_err());
    let forged: Receipt = serde_json::from_value(forged).unwrap();
    assert!(receipt::verify(&forged, &public).is_err());
}

fn finance(id: &str) -> Person {
    Person::new(id).groups(["finance"])
}

fn toolkit() -> Toolkit {
    Toolkit::builder().tool(ApprovePurchase).build().unwrap()
}

/// An inbox with one purchase of `item` parked on its quorum; the request id.
async fn parked(db: &TestDb, item: &str) -> (Inbox, String, toolnexus::testing::MockLlm) {
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = db.builder().receipt_key(key).open().await.unwrap();
    let llm = model().await;
    let id = inbox
        .park(&halted(&client(&llm), &toolkit(), item).await)
        .await
        .unwrap();
    (inbox, id, llm)
}

async fn resume(inbox: &Inbox, llm: &toolnexus::testing::MockLlm) -> Option<String> {
    let resumed = inbox.resume_next(&client(llm), &toolkit()).await.unwrap()?;
    Some(resumed.result.text)
}

async fn two_of_three_finance_members_resume_the_run_once(db: TestDb) {
    let server = unique("server");
    let (inbox, id, llm) = parked(&db, &server).await;
    let request = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(request.quorum, 2);
    assert_eq!(request.approvals().unwrap().to_string(), "0 of 2 approvals");

    inbox
        .answer_as(Answer::ok(&id), finance("ada@example.com"))
        .await
        .unwrap();
    let after_one = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        after_one.state,
        ParkedState::Waiting,
        "one approval is not two"
    );
    assert_eq!(
        after_one.approvals().unwrap().to_string(),
        "1 of 2 approvals (ada@example.com)"
    );
    assert!(
        resume(&inbox, &llm).await.is_none(),
        "nothing to resume yet"
    );

    // The same person again, from another tab or door: counted once.
    let twice = inbox
        .answer_as(Answer::ok(&id), finance("ADA@example.com"))
        .await;
    assert!(
        matches!(&twice, Err(InboxError::AlreadyCounted { who, .. }) if who == "ADA@example.com"),
        "{twice:?}"
    );
    // Someone outside finance does not count at all.
    let outsider = inbox
        .answer_as(Answer::ok(&id), Person::new("dave@example.com"))
        .await;
    assert!(
        matches!(outsider, Err(InboxError::NotAllowed { .. })),
        "{outsider:?}"
    );
    // An approval of other arguments than the first approved is no approval of the same call.
    let edited = Answer::ok(&id).with_args(serde_json::json!({"item": "two servers"}));
    let other_call = inbox.answer_as(edited, finance("carol@example.com")).await;
    assert!(
        matches!(other_call, Err(InboxError::InvalidAnswer { .. })),
        "{other_call:?}"
    );
    assert_eq!(inbox.get(&id).await.unwrap().unwrap().votes.len(), 1);

    inbox
        .answer_as(Answer::ok(&id), finance("bob@example.com"))
        .await
        .unwrap();
    let done = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(done.state, ParkedState::Answered);
    assert_eq!(done.answered_by.as_deref(), Some("bob@example.com"));
    let text = resume(&inbox, &llm).await.expect("the run resumes");
    assert_eq!(text, format!("outcome: approved: {server}"));
    assert!(resume(&inbox, &llm).await.is_none(), "resumed exactly once");
    // The call ran under both approvals' receipts, bound to it, signed by the inbox.
    let receipts = receipts_of(&server);
    let by: Vec<&str> = receipts.iter().map(|r| r.statement.by.as_str()).collect();
    assert_eq!(by, ["ada@example.com", "bob@example.com"]);
    for r in &receipts {
        assert_eq!(
            (r.statement.request.as_str(), r.statement.run.as_str()),
            (id.as_str(), id.as_str())
        );
        assert_eq!(r.statement.rule, "group:finance");
        assert_eq!(
            r.statement.call,
            toolnexus::call_digest("approve_purchase", &serde_json::json!({"item": server}))
        );
    }
    verified(&inbox, &receipts);

    // A third approval comes too late.
    let late = inbox
        .answer_as(Answer::ok(&id), finance("carol@example.com"))
        .await;
    assert!(
        matches!(late, Err(InboxError::NotWaiting { .. })),
        "{late:?}"
    );

    // Another call resumed under this call's receipts is refused, and runs nothing.
    let printer = unique("printer");
    let other = inbox
        .park(&halted(&client(&llm), &toolkit(), &printer).await)
        .await
        .unwrap();
    for who in ["ada@example.com", "bob@example.com"] {
        inbox
            .answer_as(Answer::ok(&other), finance(who))
            .await
            .unwrap();
    }
    let (c, tk) = (client(&llm), toolkit());
    let swapped = inbox
        .resume_with(&other, |messages, mut answers| {
            answers[0].receipts = receipts.clone();
            async move { c.run_with_answers(messages, answers, &tk).await }
        })
        .await;
    assert!(
        matches!(
            &swapped,
            Err(InboxError::Resume(ClientError::ReceiptMismatch { .. }))
        ),
        "{swapped:?}"
    );
    assert_eq!(purchases(&printer), 0);

    // The trail lists each answer, with who gave it.
    let trail: Vec<(AuditKind, Option<String>)> = inbox
        .audit(&id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| matches!(e.kind, AuditKind::Approved | AuditKind::Answered))
        .map(|e| (e.kind, e.actor))
        .collect();
    assert_eq!(
        trail,
        [
            (AuditKind::Approved, Some("ada@example.com".to_owned())),
            (AuditKind::Answered, Some("bob@example.com".to_owned())),
        ]
    );
}

async fn racing_approvals_resume_once_with_one_effect(db: TestDb) {
    let item = unique("racks");
    let (inbox, id, llm) = parked(&db, &item).await;
    let people = ["ada@example.com", "bob@example.com", "carol@example.com"];
    let answers = people.map(|p| {
        let inbox = inbox.clone();
        let id = id.clone();
        tokio::spawn(async move { inbox.answer_as(Answer::ok(&id), finance(p)).await })
    });
    let mut taken = 0;
    for answer in answers {
        match answer.await.unwrap() {
            Ok(()) => taken += 1,
            Err(InboxError::NotWaiting { .. }) => {}
            Err(other) => panic!("an approval refused for another reason: {other}"),
        }
    }
    assert_eq!(
        taken, 2,
        "the first two approvals count, the third comes too late"
    );
    let request = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(request.votes.len(), 2);
    assert!(resume(&inbox, &llm).await.is_some());
    assert!(resume(&inbox, &llm).await.is_none());
    assert_eq!(purchases(&item), 1, "one purchase");
}

async fn one_refusal_declines_a_quorum(db: TestDb) {
    let (inbox, id, llm) = parked(&db, "yacht").await;
    inbox
        .answer_as(Answer::ok(&id), finance("ada@example.com"))
        .await
        .unwrap();
    let no = Answer::decline(&id, "declined").with_note("not in the budget");
    inbox
        .answer_as(no, finance("bob@example.com"))
        .await
        .unwrap();
    let request = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(request.state, ParkedState::Answered);
    let answer = request.answer.unwrap();
    assert!(!answer.ok);
    assert_eq!(answer.note(), Some("not in the budget"));
    // The decline's record carries both answers' receipts, the refusal's saying so.
    assert_eq!(answer.receipts.len(), 2);
    assert!(!answer.receipts[1].statement.answer.ok);
    verified(&inbox, &answer.receipts);
    let text = resume(&inbox, &llm).await.unwrap();
    assert!(text.contains("declined"), "{text}");
    assert!(text.contains("not in the budget"), "{text}");
}

async fn a_delegate_counts_as_the_giver_within_the_window(db: TestDb) {
    let laptop = unique("laptop");
    let (inbox, id, llm) = parked(&db, &laptop).await;
    let bob = Person::new("bob@example.com"); // not in finance himself
    let tomorrow = db.clock.now() + Duration::from_secs(24 * 3600);
    let given = inbox
        .delegate(finance("ada@example.com"), "bob@example.com", tomorrow)
        .await
        .unwrap();
    assert_eq!(
        inbox.delegations_of("bob@example.com").await.unwrap(),
        [given]
    );

    inbox.answer_as(Answer::ok(&id), bob.clone()).await.unwrap();
    let request = inbox.get(&id).await.unwrap().unwrap();
    let vote = &request.votes[0];
    assert_eq!(vote.label(), "bob@example.com for ada@example.com");
    assert_eq!(vote.counts_as(), Some("ada@example.com"));
    // Ada herself adds no second vote: Bob and Ada are one person to the quorum.
    let ada = inbox
        .answer_as(Answer::ok(&id), finance("ada@example.com"))
        .await;
    assert!(
        matches!(ada, Err(InboxError::AlreadyCounted { .. })),
        "{ada:?}"
    );
    assert!(resume(&inbox, &llm).await.is_none());
    inbox
        .answer_as(Answer::ok(&id), finance("carol@example.com"))
        .await
        .unwrap();
    assert!(resume(&inbox, &llm).await.is_some());
    let trail: Vec<Option<String>> = inbox
        .audit(&id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == AuditKind::Approved)
        .map(|e| e.actor)
        .collect();
    assert_eq!(
        trail,
        [Some("bob@example.com for ada@example.com".to_owned())]
    );

    // The other order: Ada first, then Bob under her rights.
    let llm2 = model().await;
    let second = inbox
        .park(&halted(&client(&llm2), &toolkit(), "phone").await)
        .await
        .unwrap();
    inbox
        .answer_as(Answer::ok(&second), finance("ada@example.com"))
        .await
        .unwrap();
    let bob_for_ada = inbox.answer_as(Answer::ok(&second), bob.clone()).await;
    assert!(
        matches!(bob_for_ada, Err(InboxError::AlreadyCounted { .. })),
        "{bob_for_ada:?}"
    );

    // After the window, by the inbox's clock, Bob holds no rights at all.
    db.clock.advance(Duration::from_secs(24 * 3600 + 1));
    let third = inbox
        .park(&halted(&client(&llm2), &toolkit(), "tablet").await)
        .await
        .unwrap();
    let late = inbox.answer_as(Answer::ok(&third), bob).await;
    assert!(
        matches!(late, Err(InboxError::NotAllowed { .. })),
        "{late:?}"
    );
    assert!(inbox
        .delegations_of("bob@example.com")
        .await
        .unwrap()
        .is_empty());
}

async fn webhooks_tell_of_each_approval_and_of_the_last(db: TestDb) {
    let hook = Receiver::start([]).await;
    let inbox = db
        .builder()
        .webhook(Webhook::new(&hook.url).events([Event::Approved, Event::Answered]))
        .open()
        .await
        .unwrap();
    let llm = model().await;
    let id = inbox
        .park(&halted(&client(&llm), &toolkit(), "boat").await)
        .await
        .unwrap();
    let ada = Person::new("ada@example.com").groups(["finance"]);
    let bob = Person::new("bob@example.com").groups(["finance"]);
    let deliver = || {
        let inbox = inbox.clone();
        async move { inbox.deliver_due().await.unwrap() }
    };

    inbox.answer_as(Answer::ok(&id), ada).await.unwrap();
    deliver().await;
    hook.wait_for(1).await;
    let approved = hook.of_type("request.approved");
    assert_eq!(approved.len(), 1);
    let approved = approved[0].json();
    assert_eq!(approved["data"]["request"]["id"], id.as_str());
    assert_eq!(
        approved["data"]["approvals"],
        serde_json::json!({"count": 1, "quorum": 2, "by": ["ada@example.com"]})
    );
    let text = approved["text"].as_str().unwrap();
    assert!(text.contains("1 of 2 approvals"), "{text}");

    inbox.answer_as(Answer::ok(&id), bob).await.unwrap();
    deliver().await;
    hook.wait_for(2).await;
    let answered = hook.of_type("request.answered");
    assert_eq!(answered.len(), 1);
    let answered = answered[0].json();
    assert_eq!(answered["data"]["answeredBy"], "bob@example.com");
    assert_eq!(answered["data"]["approvals"]["count"], 2);
    assert_eq!(
        answered["data"]["approvals"]["by"],
        serde_json::json!(["ada@example.com", "bob@example.com"])
    );
}
