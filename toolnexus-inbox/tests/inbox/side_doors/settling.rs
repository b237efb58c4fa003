//! The paths that settle a request or lend the right to answer it besides an answer: a
//! cancel, an expiry, a delegation and the run's own requester. Each is judged as an
//! answer would be; they sit apart from the door-and-receipt cases only to keep each file
//! short.

use super::*;

both_engines!(
    a_cancel_is_recorded_before_anything_says_so,
    an_expiry_never_completes_a_quorum,
    a_delegation_is_bounded_and_audited,
    the_requester_never_approves_their_own_run,
    a_delegate_lends_only_what_the_giver_holds_today,
);

async fn a_cancel_is_recorded_before_anything_says_so(db: TestDb) {
    let p = Payments::open(&db, false, |a| a).await;
    let vendor = unique("acme");
    let id = p.park(&vendor, 90_000).await;
    let cancelled = p
        .inbox
        .cancel(&id, Person::new("partner@vendor.example"))
        .await
        .unwrap();
    assert_eq!(cancelled, Cancelled::Now { run: id.clone() });
    // Finance approving the cancelled payment is refused, and nothing resumes.
    let late = p
        .inbox
        .answer_as(Answer::ok(&id), finance("alice@corp.example"))
        .await;
    assert!(
        matches!(late, Err(InboxError::NotWaiting { .. })),
        "{late:?}"
    );
    let none = p.inbox.resume_next(&p.client(), &p.tk).await.unwrap();
    assert!(none.is_none());
    assert!(paid(&vendor).is_empty());
    let head = p.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(head.run_state, ParkedState::Failed);
    let trail = p.trail(&id).await;
    assert!(trail.contains(&(
        AuditKind::Cancelled,
        Some("partner@vendor.example".to_owned())
    )));
    assert!(trail.contains(&(
        AuditKind::AnswerRefused,
        Some("alice@corp.example".to_owned())
    )));

    // Approved first: the cancel is too late, and the payment goes through.
    let vendor = unique("acme");
    let id = p.park(&vendor, 90_000).await;
    p.inbox
        .answer_as(Answer::ok(&id), finance("alice@corp.example"))
        .await
        .unwrap();
    let late = p.inbox.cancel(&id, "partner@vendor.example").await.unwrap();
    assert_eq!(late, Cancelled::TooLate(ParkedState::Answered));
    p.resume().await;
    assert_eq!(paid(&vendor).len(), 1);
}

async fn an_expiry_never_completes_a_quorum(db: TestDb) {
    let clock = &db.clock;
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = db
        .builder()
        .receipt_key(key)
        .expire_after("approval", Duration::from_secs(3600))
        .on_expiry("approval", Expiry::Approve)
        .open()
        .await
        .unwrap();
    let llm = MockLlm::with_fn(pay_script).await.unwrap();
    let p = Payments {
        tk: payments(None, |a| a),
        inbox,
        llm,
    };
    let vendor = unique("acme");
    let two = p.park(&vendor, 900_000).await;
    let one = p.park(&unique("acme"), 90_000).await;
    p.inbox
        .answer_as(Answer::ok(&two), finance("alice@corp.example"))
        .await
        .unwrap();
    clock.advance(Duration::from_secs(3601));
    assert_eq!(p.inbox.expire_due().await.unwrap(), 2);
    let expired = p.inbox.get(&two).await.unwrap().unwrap().answer.unwrap();
    assert!(!expired.ok, "silence is not a second approval: {expired:?}");
    let approved = p.inbox.get(&one).await.unwrap().unwrap().answer.unwrap();
    assert!(approved.ok, "a one-person rule keeps its kind's default");
}

async fn a_delegation_is_bounded_and_audited(db: TestDb) {
    let inbox = db.builder().open().await.unwrap();
    let ada = finance("ada@corp.example");
    let soon = SystemTime::now() + Duration::from_secs(3600);
    for (from, to, until) in [
        (ada.clone(), "a2a client", soon),
        (Person::stand_in("mcp client"), "bob@corp.example", soon),
        (
            ada.clone(),
            "bob@corp.example",
            SystemTime::now() + Duration::from_secs(31 * 86_400),
        ),
    ] {
        let refused = inbox.delegate(from, to, until).await;
        assert!(
            matches!(refused, Err(InboxError::InvalidDelegation(_))),
            "{refused:?}"
        );
    }
    let given = inbox
        .delegate(ada.clone(), "bob@corp.example", soon)
        .await
        .unwrap();
    let admin = Person::new("security@corp.example");
    inbox
        .revoke_delegation_as_admin(&given.id, &admin)
        .await
        .unwrap();
    assert!(inbox
        .delegations_of("bob@corp.example")
        .await
        .unwrap()
        .is_empty());
    let trail = inbox
        .audit(&format!("delegation:{}", given.id))
        .await
        .unwrap();
    let kinds: Vec<(AuditKind, Option<String>)> =
        trail.into_iter().map(|e| (e.kind, e.actor)).collect();
    assert_eq!(
        kinds,
        [
            (AuditKind::Delegated, Some("ada@corp.example".to_owned())),
            (
                AuditKind::DelegationRevoked,
                Some("security@corp.example".to_owned())
            ),
        ]
    );
}

async fn the_requester_never_approves_their_own_run(db: TestDb) {
    let p = Payments::open(&db, false, Approval::not_requester).await;
    let vendor = unique("acme");
    let run = p.halted(&vendor, 90_000).await;
    let id = p.inbox.park_as(&run, "alice@corp.example").await.unwrap();
    // Alice is in finance, but she asked for this payment.
    let own = p
        .inbox
        .answer_as(Answer::ok(&id), finance("ALICE@corp.example"))
        .await;
    assert!(
        matches!(&own, Err(InboxError::Requester { who, .. }) if who == "ALICE@corp.example"),
        "{own:?}"
    );
    // Nor through someone holding her rights.
    let soon = SystemTime::now() + Duration::from_secs(3600);
    p.inbox
        .delegate(finance("alice@corp.example"), "dave@corp.example", soon)
        .await
        .unwrap();
    let through = p
        .inbox
        .answer_as(Answer::ok(&id), Person::new("dave@corp.example"))
        .await;
    assert!(
        matches!(&through, Err(InboxError::Requester { who, .. }) if who == "alice@corp.example"),
        "{through:?}"
    );
    let trail = p.trail(&id).await;
    let refused = trail.iter().filter(|(k, _)| *k == AuditKind::AnswerRefused);
    assert_eq!(
        refused.count(),
        2,
        "both attempts are on the record: {trail:?}"
    );
    p.inbox
        .answer_as(Answer::ok(&id), finance("bob@corp.example"))
        .await
        .unwrap();
    p.resume().await;
    assert_eq!(paid(&vendor).len(), 1);

    // The inbox's own rule keeps duties apart for every request, flagged or not.
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let strict = db
        .builder()
        .receipt_key(key)
        .not_requester()
        .open()
        .await
        .unwrap();
    let vendor = unique("acme");
    let run = p.halted(&vendor, 90_000).await;
    let plain = Payments {
        inbox: strict,
        llm: MockLlm::with_fn(pay_script).await.unwrap(),
        tk: payments(None, |a| a),
    };
    let id = plain.inbox.park_as(&run, "bob@corp.example").await.unwrap();
    let own = plain
        .inbox
        .answer_as(Answer::ok(&id), finance("bob@corp.example"))
        .await;
    assert!(matches!(own, Err(InboxError::Requester { .. })), "{own:?}");
}

async fn a_delegate_lends_only_what_the_giver_holds_today(db: TestDb) {
    // The host's staff list: Ada is in finance until she moves to sales.
    let groups = std::sync::Arc::new(Mutex::new(vec!["finance".to_owned()]));
    let now = groups.clone();
    let staff = move |id: &str| {
        let groups = now.lock().unwrap().clone();
        (id == "ada@corp.example").then(|| Person::new(id).groups(groups))
    };
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = db
        .builder()
        .receipt_key(key)
        .directory(staff)
        .open()
        .await
        .unwrap();
    let p = Payments {
        inbox,
        llm: MockLlm::with_fn(pay_script).await.unwrap(),
        tk: payments(None, |a| a),
    };
    let soon = SystemTime::now() + Duration::from_secs(3600);
    p.inbox
        .delegate(finance("ada@corp.example"), "bob@corp.example", soon)
        .await
        .unwrap();
    let bob = Person::new("bob@corp.example");

    let first = p.park(&unique("acme"), 90_000).await;
    p.inbox
        .answer_as(Answer::ok(&first), bob.clone())
        .await
        .unwrap();

    // Ada leaves finance: what she handed Bob goes with her.
    *groups.lock().unwrap() = vec!["sales".to_owned()];
    let second = p.park(&unique("acme"), 90_000).await;
    let refused = p.inbox.answer_as(Answer::ok(&second), bob).await;
    assert!(
        matches!(refused, Err(InboxError::NotAllowed { .. })),
        "{refused:?}"
    );
}
