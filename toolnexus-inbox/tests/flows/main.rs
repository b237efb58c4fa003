//! Approval flows driven through a real inbox (`toolnexus_inbox::testing`): the inbox's
//! rules judge the scripted people — responders, quorums, delegations, deadlines by its
//! clock — and the inbox resumes the run; each shown working, and each shown failing on a
//! wrong expectation.

use std::future::IntoFuture;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use serde_json::json;
use toolnexus::testing::{Approvers, Decision, MockLlm, Reply};
use toolnexus::{tool, LlmClient, RunStatus, Toolkit};
use toolnexus_inbox::testing::{self, DriveError, TestClock};
use toolnexus_inbox::{Inbox, InboxError, Person};

static WIRED: AtomicUsize = AtomicUsize::new(0);
// Orders, not a count: the tests run at once, and each must see only its own refunds.
static REFUNDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn refunds_of(order: &str) -> usize {
    REFUNDED
        .lock()
        .map_or(0, |done| done.iter().filter(|o| *o == order).count())
}

/// Wires money to a vendor
#[tool(approval(prompt = "Wire {amount} euros?", responders = ["group:finance"], quorum = 2))]
async fn wire(amount: u64) -> String {
    WIRED.fetch_add(1, Ordering::SeqCst);
    format!("wired {amount} euros")
}

/// Refunds an order
#[tool(approval(prompt = "Refund order {order}?", responders = ["group:finance"]))]
async fn refund(order: String) -> String {
    if let Ok(mut done) = REFUNDED.lock() {
        done.push(order.clone());
    }
    format!("refunded {order}")
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(Wire)
        .tool(Refund)
        .build()
        .expect("the tools are valid")
}

/// A model that calls `tool` with `args`, then reports what came of it.
async fn model(tool: &'static str, args: serde_json::Value) -> MockLlm {
    MockLlm::with_fn(move |req| match req.tool_results().pop() {
        None => Reply::tool_call("call_1", tool, args.clone()),
        Some((_, output)) => Reply::text(format!("Done: {output}")),
    })
    .await
    .expect("the mock starts")
}

fn client(model: &MockLlm) -> LlmClient {
    model.client().build().expect("the client builds")
}

fn ada() -> Person {
    Person::new("ada@shop.example").groups(["finance"])
}

fn carol() -> Person {
    Person::new("carol@shop.example").groups(["finance"])
}

/// Runs `f`, which must panic, and returns its message.
async fn panics<F: std::future::Future>(f: F) -> String {
    match AssertUnwindSafe(f).catch_unwind().await {
        Ok(_) => panic!("expected a panic"),
        Err(panic) => match panic.downcast::<String>() {
            Ok(text) => *text,
            Err(panic) => panic
                .downcast::<&str>()
                .map(|s| (*s).to_owned())
                .unwrap_or_default(),
        },
    }
}

#[tokio::test]
async fn a_responder_approves_through_the_inbox_and_the_inbox_resumes_the_run() {
    let model = model("refund", json!({"order": "A-7"})).await;
    let (client, tk) = (client(&model), toolkit());
    let finance = Approvers::as_person("ada@shop.example").tool("refund", Decision::approve());
    let done = testing::drive(&finance, &client, &tk, "refund A-7")
        .person(ada())
        .await
        .expect("the run ends");
    assert_eq!((done.result.status, done.halts), (RunStatus::Done, 1));
    assert_eq!(done.text(), "Done: refunded A-7");
    assert_eq!(refunds_of("A-7"), 1);
    finance.asked_exactly(["Refund order A-7?"]);
    let asked = &done.questions[0];
    assert_eq!(asked.asked, ["group:finance"]);
    assert_eq!(asked.answered_by, ["ada@shop.example"]);
    assert_eq!(
        asked.to_string(),
        "approval by refund \"Refund order A-7?\" (asked group:finance) -> approved by ada@shop.example"
    );

    // A wrong expectation fails, showing who was asked and who answered.
    let failed = panics(async { finance.asked_exactly(["Refund order A-8?"]) }).await;
    assert!(
        failed.contains("(asked group:finance) -> approved by ada@shop.example"),
        "{failed}"
    );
}

#[tokio::test]
async fn a_person_not_among_the_responders_is_refused_and_the_test_sees_why() {
    let model = model("refund", json!({"order": "B-1"})).await;
    let (client, tk) = (client(&model), toolkit());
    let bob = Approvers::new().tool("refund", Decision::approve().by("bob@shop.example"));
    let refused = testing::drive(&bob, &client, &tk, "refund B-1")
        .await
        .expect_err("bob is not in finance");
    assert!(
        matches!(refused.refusal(), Some(InboxError::NotAllowed { who: Some(who), .. }) if who == "bob@shop.example"),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .starts_with("the inbox refused bob@shop.example's answer"),
        "{refused}"
    );
    bob.asked_exactly(["Refund order B-1?"]);
    assert!(
        bob.questions()[0].answered_by.is_empty(),
        "nothing was recorded"
    );

    // Nobody named is an answer from nobody in particular: refused too.
    let anyone = Approvers::new().otherwise(Decision::approve());
    let refused = testing::drive(&anyone, &client, &tk, "refund B-1")
        .await
        .expect_err("an anonymous answer is not known to come from finance");
    assert!(matches!(
        refused.refusal(),
        Some(InboxError::NotAllowed { who: None, .. })
    ));
}

#[tokio::test]
async fn a_quorum_takes_two_people_and_a_delegate_counts_for_the_giver() {
    let model = model("wire", json!({"amount": 90_000})).await;
    let (client, tk) = (client(&model), toolkit());
    let two = Approvers::new().tool(
        "wire",
        Decision::approve()
            .by("ada@shop.example")
            .by("carol@shop.example"),
    );
    let before = WIRED.load(Ordering::SeqCst);
    let done = testing::drive(&two, &client, &tk, "wire 90k")
        .person(ada())
        .person(carol())
        .await
        .expect("two of finance approve");
    assert_eq!(done.text(), "Done: wired 90000 euros");
    assert_eq!(WIRED.load(Ordering::SeqCst) - before, 1);
    assert_eq!(
        done.questions[0].answered_by,
        ["ada@shop.example", "carol@shop.example"]
    );

    // One approval is not enough: the drive says the request still waits.
    let one = Approvers::new().tool("wire", Decision::approve().by("ada@shop.example"));
    let waiting = testing::drive(&one, &client, &tk, "wire 90k")
        .person(ada())
        .await
        .expect_err("one approval of two");
    assert!(
        matches!(waiting, DriveError::StillWaiting { .. }),
        "{waiting}"
    );
    assert!(
        waiting.to_string().contains("1 of 2 approvals"),
        "{waiting}"
    );

    // Bob answers for Ada under her delegation, so Ada's own approval is counted already.
    let inbox = Inbox::open("sqlite::memory:")
        .await
        .expect("the inbox opens");
    let until = SystemTime::now() + Duration::from_secs(86_400);
    inbox
        .delegate(ada(), "bob@shop.example", until)
        .await
        .expect("delegated");
    let twice = Approvers::new().tool(
        "wire",
        Decision::approve()
            .by("bob@shop.example")
            .by("ada@shop.example"),
    );
    let refused = testing::drive(&twice, &client, &tk, "wire 90k")
        .inbox(&inbox)
        .person(ada())
        .await
        .expect_err("Ada counted once");
    assert!(
        matches!(refused.refusal(), Some(InboxError::AlreadyCounted { .. })),
        "{refused}"
    );
    assert_eq!(
        twice.questions()[0].answered_by,
        ["bob@shop.example for ada@shop.example"]
    );
}

#[tokio::test]
async fn an_expiry_follows_the_inbox_clock_and_a_request_without_deadline_never_expires() {
    let model = model("refund", json!({"order": "C-3"})).await;
    let (client, tk) = (client(&model), toolkit());
    let away = Approvers::new().tool("refund", Decision::expire());
    let clock = TestClock::new();
    let inbox = Inbox::builder("sqlite::memory:")
        .clock(clock.reader())
        .expire_after("approval", Duration::from_secs(24 * 3600))
        .open()
        .await
        .expect("the inbox opens");
    let start = clock.now();
    let done = testing::drive(&away, &client, &tk, "refund C-3")
        .inbox(&inbox)
        .clock(&clock)
        .await
        .expect("the run ends");
    assert_eq!(
        done.output("refund"),
        Some("declined/expired: Refund order C-3? (reason: expired)")
    );
    assert_eq!(refunds_of("C-3"), 0, "nothing was refunded");
    assert!(clock.now() >= start + Duration::from_secs(24 * 3600));
    assert_eq!(
        away.questions()[0].answered_by,
        ["someone"],
        "the inbox's own answer"
    );

    let never = testing::drive(&away, &client, &tk, "refund C-3")
        .await
        .expect_err("no deadline");
    assert!(matches!(never, DriveError::NoDeadline { .. }), "{never}");
    let unmovable = testing::drive(&away, &client, &tk, "refund C-3")
        .inbox(&inbox)
        .await
        .expect_err("no clock given");
    assert!(
        matches!(unmovable, DriveError::NoClock { .. }),
        "{unmovable}"
    );
}

#[tokio::test]
async fn a_question_no_rule_answers_fails_the_drive_naming_it() {
    let model = model("refund", json!({"order": "D-4"})).await;
    let (client, tk) = (client(&model), toolkit());
    let nobody = Approvers::new().tool("wire", Decision::approve());
    let failed = panics(testing::drive(&nobody, &client, &tk, "refund D-4").into_future()).await;
    assert!(
        failed.contains("no approver answers the approval request \"Refund order D-4?\", asked by tool `refund`"),
        "{failed}"
    );
}
