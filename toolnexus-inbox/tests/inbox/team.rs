//! The inbox as a team uses it: who may answer a request (named by the tool or by the
//! inbox's rules), enforced by the store itself, and the audit trail of every change.

use toolnexus::{pending, tool, Answer, ToolResult, Toolkit};
use toolnexus_inbox::{AuditKind, InboxError, ParkedState, Person, Responder};

use crate::support::{both_engines, client, halted, model, InboxDb, Scene, TestDb};

both_engines!(
    only_the_named_responders_may_answer,
    the_inbox_rules_name_responders_by_kind_and_agent,
    the_trail_reads_parked_answered_claimed_resumed,
);

/// `approve_purchase(item)` whose approval names its responders: Ada, or finance.
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?"),
            responders = ["ada@example.com", "group:finance"],
        ),
    }
}

fn named_responders() -> Toolkit {
    Toolkit::builder().tool(ApprovePurchase).build().unwrap()
}

async fn only_the_named_responders_may_answer(db: TestDb) {
    let inbox = db.inbox().await;
    let llm = model().await;
    let (client, tk) = (client(&llm), named_responders());
    let ids = [
        inbox
            .park(&halted(&client, &tk, "gpu").await)
            .await
            .unwrap(),
        inbox
            .park(&halted(&client, &tk, "desk").await)
            .await
            .unwrap(),
    ];
    let parked = inbox.get(&ids[0]).await.unwrap().unwrap();
    assert_eq!(
        inbox.responders(&parked),
        Some(vec![
            Responder::person("ada@example.com"),
            Responder::group("finance")
        ])
    );

    let bob = Person::new("bob@example.com").groups(["sales"]);
    assert!(!inbox.may_answer(&parked, Some(&bob)));
    assert!(matches!(
        inbox.answer_as(Answer::ok(&ids[0]), bob.clone()).await,
        Err(InboxError::NotAllowed { request, who: Some(who) })
            if request == ids[0] && who == "bob@example.com"
    ));
    // No identity at all is nobody known to be allowed.
    assert!(matches!(
        inbox.answer(Answer::ok(&ids[0])).await,
        Err(InboxError::NotAllowed { who: None, .. })
    ));
    // Nothing changed: still waiting, nobody recorded; the trail has the parking and the
    // two refused attempts, bob's and the anonymous one.
    let after = inbox.get(&ids[0]).await.unwrap().unwrap();
    assert_eq!(
        (after.state, after.answered_by),
        (ParkedState::Waiting, None)
    );
    let kinds: Vec<_> = inbox
        .audit(&ids[0])
        .await
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            AuditKind::Parked,
            AuditKind::AnswerRefused,
            AuditKind::AnswerRefused
        ]
    );
    assert!(inbox.waiting_for(&bob).await.unwrap().is_empty());

    // Named by id (letter case aside), or by group.
    let carol = Person::new("carol@example.com").groups(["finance"]);
    assert_eq!(inbox.waiting_for(&carol).await.unwrap().len(), 2);
    inbox
        .answer_as(Answer::ok(&ids[0]), "Ada@Example.com")
        .await
        .unwrap();
    inbox
        .answer_as(Answer::decline(&ids[1], "no"), carol)
        .await
        .unwrap();
    let answered = inbox.get(&ids[1]).await.unwrap().unwrap();
    assert_eq!(answered.answered_by.as_deref(), Some("carol@example.com"));
}

async fn the_inbox_rules_name_responders_by_kind_and_agent(db: TestDb) {
    let by_kind = Scene::new(
        db.builder()
            .responders("approval", ["group:finance"])
            .agent_responders("default", ["nobody@example.com"])
            .open()
            .await
            .unwrap(),
    )
    .await;
    let id = by_kind.park("gpu").await;
    // The kind's rule comes before the agent's.
    let refused = by_kind
        .inbox
        .answer_as(Answer::ok(&id), "nobody@example.com")
        .await;
    assert!(
        matches!(refused, Err(InboxError::NotAllowed { .. })),
        "{refused:?}"
    );
    let finance = Person::new("fin@example.com").groups(["finance"]);
    by_kind
        .inbox
        .answer_as(Answer::ok(&id), finance)
        .await
        .unwrap();

    let by_agent = Scene::new(
        db.builder()
            .agent("purchasing")
            .agent_responders("purchasing", ["ada@example.com"])
            .open()
            .await
            .unwrap(),
    )
    .await;
    let id = by_agent.park("chair").await;
    let refused = by_agent
        .inbox
        .answer_as(Answer::ok(&id), "bob@example.com")
        .await;
    assert!(
        matches!(refused, Err(InboxError::NotAllowed { .. })),
        "{refused:?}"
    );
    assert_eq!(
        by_agent.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    by_agent
        .inbox
        .answer_as(Answer::ok(&id), "ada@example.com")
        .await
        .unwrap();

    // A handle without rules lets anyone answer, as before.
    let open = Scene::new(db.inbox().await).await;
    let id = open.park("lamp").await;
    open.inbox.answer(Answer::ok(&id)).await.unwrap();
}

async fn the_trail_reads_parked_answered_claimed_resumed(db: TestDb) {
    let s = Scene::new(db.builder().worker_name("worker-a").open().await.unwrap()).await;
    let id = s.park("gpu").await;
    s.inbox
        .answer_as(Answer::ok(&id).with_note("fine"), "ada@example.com")
        .await
        .unwrap();
    s.inbox
        .resume_next(&s.client, &s.tk)
        .await
        .unwrap()
        .unwrap();
    let trail = s.inbox.audit(&id).await.unwrap();
    let kinds: Vec<_> = trail.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            AuditKind::Parked,
            AuditKind::Answered,
            AuditKind::Claimed,
            AuditKind::Resumed
        ]
    );
    let answered = &trail[1];
    assert_eq!(answered.actor.as_deref(), Some("ada@example.com"));
    assert_eq!(answered.request.as_deref(), Some(id.as_str()));
    let answer: Answer = serde_json::from_str(answered.detail.as_deref().unwrap()).unwrap();
    assert_eq!(answer, Answer::ok(&id).with_note("fine"));
    assert_eq!(
        (trail[2].actor.as_deref(), trail[2].attempt),
        (Some("worker-a"), Some(1))
    );
    assert_eq!(trail[3].detail.as_deref(), Some("done"));
    assert!(trail.windows(2).all(|w| w[0].at <= w[1].at));
}
