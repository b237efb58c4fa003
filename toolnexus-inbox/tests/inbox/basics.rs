//! Parking, answering and resuming one run at a time, on both engines.

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{Answer, LlmClient, Message, ProviderState, RunStatus, Style};
use toolnexus_inbox::{Inbox, InboxError, Parked, ParkedState};

use crate::support::{both_engines, halted, toolkit, Effects, InboxDb, Scene, TestDb};

both_engines!(
    park_answer_resume_once,
    park_refuses_what_it_cannot_keep,
    answers_are_refused_when_they_cannot_apply,
    a_run_that_halts_again_is_parked_again,
    agents_resume_only_their_own_runs,
    a_failed_resume_is_retried_after_the_lease,
    the_last_attempt_fails_the_run,
    reopening_keeps_the_runs,
    a_newer_schema_is_refused,
    reasoning_state_survives_the_row,
    an_app_awaits_a_runs_outcome_in_any_process,
    awaiting_a_failed_run_returns_its_failure,
    notes_are_kept_replaced_and_survive_reopening,
);

async fn park_answer_resume_once(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let (inbox, client, tk, effects) = (&s.inbox, &s.client, &s.tk, &s.effects);
    let run = halted(client, tk, "gpu").await;
    let id = inbox.park(&run).await.unwrap();
    assert_eq!(id, run.pending.as_ref().unwrap().id);

    let parked = inbox.get(&id).await.unwrap().expect("parked");
    assert_eq!(parked.state, ParkedState::Waiting);
    assert_eq!(parked.request, run.pending.clone().unwrap());
    assert_eq!(parked.tool.as_deref(), Some("approve_purchase"));
    assert_eq!(parked.args, Some(json!({"item": "gpu"})));
    assert_eq!((parked.model.as_str(), parked.turns), ("scripted", 1));
    assert_eq!(parked.agent, "default");
    assert_eq!(parked.attempts, 0);
    let waiting = inbox.waiting().await.unwrap();
    assert_eq!(
        waiting.iter().map(|p| p.id()).collect::<Vec<_>>(),
        [id.as_str()]
    );

    // Nothing answered yet: nothing to resume.
    assert!(inbox.resume_next(client, tk).await.unwrap().is_none());
    assert!(matches!(
        inbox.resume(&id, client, tk).await,
        Err(InboxError::NotAnswered(i)) if i == id
    ));

    inbox
        .answer_as(Answer::ok(&id), "ada@example.com")
        .await
        .unwrap();
    let answered = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(answered.state, ParkedState::Answered);
    assert_eq!(answered.answered_by.as_deref(), Some("ada@example.com"));
    assert!(answered.answered_at.is_some());
    assert!(inbox.waiting().await.unwrap().is_empty());

    let resumed = inbox
        .resume_next(client, tk)
        .await
        .unwrap()
        .expect("one run");
    assert_eq!(resumed.id, id);
    assert_eq!(resumed.attempt, 1);
    assert_eq!(resumed.result.status, RunStatus::Done);
    assert_eq!(resumed.result.text, "outcome: approved: gpu");
    assert_eq!(effects.count("gpu"), 1);
    assert_eq!(s.llm.calls(), 2, "one call to halt, one after the answer");

    let done = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(done.state, ParkedState::Done);
    assert_eq!(done.result.as_ref(), Some(&resumed.result));
    assert_eq!(done.answer, Some(Answer::ok(&id)));
    assert_eq!(done.answered_by.as_deref(), Some("ada@example.com"));
    assert_eq!(inbox.recent(10).await.unwrap()[0].id(), id);

    // Resumed once: never again.
    assert!(inbox.resume_next(client, tk).await.unwrap().is_none());
    assert!(matches!(
        inbox.resume(&id, client, tk).await,
        Err(InboxError::Finished {
            state: ParkedState::Done,
            ..
        })
    ));
    assert!(matches!(
        inbox.answer(Answer::ok(&id)).await,
        Err(InboxError::NotWaiting {
            state: ParkedState::Done,
            ..
        })
    ));
    assert_eq!(effects.count("gpu"), 1);
}

async fn park_refuses_what_it_cannot_keep(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let (inbox, client, tk) = (&s.inbox, &s.client, &s.tk);
    let run = halted(client, tk, "gpu").await;
    let id = inbox.park(&run).await.unwrap();
    assert!(matches!(inbox.park(&run).await, Err(InboxError::AlreadyParked(i)) if i == id));

    let mut finished = run.clone();
    finished.status = RunStatus::Done;
    finished.pending = None;
    assert!(matches!(
        inbox.park(&finished).await,
        Err(InboxError::NotPending)
    ));

    let mut bad_expiry = halted(client, tk, "cpu").await;
    // `pending` is the first of `waiting`: the request is changed in both.
    let bad_id = bad_expiry.pending.as_ref().unwrap().id.clone();
    for request in bad_expiry.pending.iter_mut().chain(&mut bad_expiry.waiting) {
        request.expires_at = Some("next tuesday".into());
    }
    assert!(matches!(
        inbox.park(&bad_expiry).await,
        Err(InboxError::InvalidExpiry { value, .. }) if value == "next tuesday"
    ));
    assert!(
        inbox.get(&bad_id).await.unwrap().is_none(),
        "nothing half-written"
    );
    assert_eq!(inbox.waiting().await.unwrap().len(), 1);
}

async fn answers_are_refused_when_they_cannot_apply(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let inbox = &s.inbox;
    assert!(matches!(
        inbox.answer(Answer::ok("no-such-request")).await,
        Err(InboxError::UnknownRequest(i)) if i == "no-such-request"
    ));

    let id = s.park("gpu").await;
    inbox
        .answer(Answer::decline(&id, "declined"))
        .await
        .unwrap();
    assert!(matches!(
        inbox.answer_as(Answer::ok(&id), "mallory").await,
        Err(InboxError::NotWaiting {
            state: ParkedState::Answered,
            ..
        })
    ));
    let row = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        row.answer,
        Some(Answer::decline(&id, "declined")),
        "the first answer won"
    );
    assert_eq!(row.answered_by, None);
}

async fn a_run_that_halts_again_is_parked_again(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let (inbox, client, tk, effects) = (&s.inbox, &s.client, &s.tk, &s.effects);
    let first = s.park("twice gpu").await;
    inbox.answer(Answer::ok(&first)).await.unwrap();

    let resumed = inbox.resume(&first, client, tk).await.unwrap();
    assert_eq!(resumed.result.status, RunStatus::Pending);
    let next = resumed.next.clone().expect("halted again");
    assert_eq!(resumed.result.pending.as_ref().unwrap().id, next);

    let old = inbox.get(&first).await.unwrap().unwrap();
    assert_eq!(
        (old.state, old.next.as_deref()),
        (ParkedState::Done, Some(next.as_str()))
    );
    let new = inbox.get(&next).await.unwrap().unwrap();
    assert_eq!(new.state, ParkedState::Waiting);
    assert_eq!(new.args, Some(json!({"item": "gpu-again"})));
    assert_eq!(new.turns, 2, "turns add up over the resumes");

    inbox.answer(Answer::ok(&next)).await.unwrap();
    let last = inbox.resume_next(client, tk).await.unwrap().unwrap();
    assert_eq!(last.id, next);
    assert_eq!(last.result.text, "outcome: approved: gpu-again");
    assert_eq!((effects.count("gpu"), effects.count("gpu-again")), (1, 1));
}

async fn agents_resume_only_their_own_runs(db: TestDb) {
    let s = Scene::new(db.builder().agent("purchasing").open().await.unwrap()).await;
    let support = db.builder().agent("support").open().await.unwrap();
    let (purchasing, client, tk, effects) = (&s.inbox, &s.client, &s.tk, &s.effects);
    let id = s.park("gpu").await;
    assert_eq!(support.get(&id).await.unwrap().unwrap().agent, "purchasing");
    support.answer_as(Answer::ok(&id), "ada").await.unwrap();

    assert!(support.resume_next(client, tk).await.unwrap().is_none());
    assert!(matches!(
        support.resume(&id, client, tk).await,
        Err(InboxError::UnknownRequest(_))
    ));
    assert_eq!(effects.total(), 0);
    let resumed = purchasing.resume_next(client, tk).await.unwrap().unwrap();
    assert_eq!(resumed.id, id);
}

/// A client whose provider is down: nothing listens on the port.
async fn unreachable_client() -> LlmClient {
    let port = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    LlmClient::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .model("scripted")
        .api_key("test-key")
        .retries(0)
        .build()
        .unwrap()
}

/// Parks an approved run and resumes it while the provider is down; the row after that.
async fn park_and_fail_once(s: &Scene) -> Parked {
    let id = s.park_approved("gpu").await;
    let down = unreachable_client().await;
    assert!(matches!(
        s.inbox.resume_next(&down, &s.tk).await,
        Err(InboxError::Resume(_))
    ));
    s.inbox.get(&id).await.unwrap().unwrap()
}

async fn a_failed_resume_is_retried_after_the_lease(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let (inbox, client, tk) = (&s.inbox, &s.client, &s.tk);
    let row = park_and_fail_once(&s).await;
    let id = row.id().to_owned();
    assert_eq!((row.state, row.attempts), (ParkedState::Answered, 1));
    assert!(
        row.last_error.as_deref().unwrap().contains("reach"),
        "{row:?}"
    );
    // Backing off for the lease: not resumed at once.
    assert!(inbox.resume_next(client, tk).await.unwrap().is_none());

    let resumed = s.resume_after_lease(&db.clock).await;
    assert_eq!(resumed.attempt, 2);
    let row = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempts, row.last_error),
        (ParkedState::Done, 2, None)
    );
}

async fn the_last_attempt_fails_the_run(db: TestDb) {
    let s = Scene::new(db.builder().max_attempts(1).open().await.unwrap()).await;
    let (inbox, client, tk) = (&s.inbox, &s.client, &s.tk);
    let row = park_and_fail_once(&s).await;
    let id = row.id().to_owned();
    assert_eq!((row.state, row.attempts), (ParkedState::Failed, 1));
    assert!(matches!(
        inbox.resume(&id, client, tk).await,
        Err(InboxError::Finished {
            state: ParkedState::Failed,
            ..
        })
    ));
}

async fn reopening_keeps_the_runs(db: TestDb) {
    let id = Scene::new(db.inbox().await).await.park("gpu").await;
    // Several handles opening at once apply the migrations once.
    let (a, b) = tokio::join!(Inbox::open(&db.url), Inbox::open(&db.url));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        a.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    assert_eq!(b.waiting().await.unwrap().len(), 1);
}

async fn a_newer_schema_is_refused(db: TestDb) {
    drop(db.inbox().await);
    db.raw("UPDATE toolnexus_inbox_schema SET version = 99")
        .await;
    let err = Inbox::open(&db.url).await.unwrap_err();
    assert!(
        matches!(
            err,
            InboxError::SchemaTooNew { found: 99, supported } if supported < 99
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("upgrade toolnexus-inbox"), "{err}");
}

/// Hosts share one handle across tasks and spawn its calls (checked at compile time).
#[test]
fn handles_are_shared_and_their_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    fn shared<T: Clone + Send + Sync + 'static>() {}
    shared::<Inbox>();
    let _ = |inbox: Inbox, run: toolnexus::RunResult, client: toolnexus::LlmClient| {
        let tk = toolnexus::Toolkit::builder().build().unwrap();
        send(&inbox.park(&run));
        send(&inbox.get("id"));
        send(&inbox.waiting());
        send(&inbox.recent(5));
        send(&inbox.answer(Answer::ok("id")));
        send(&inbox.answer_as(Answer::ok("id"), "ada"));
        send(&inbox.expire_due());
        send(&inbox.resume_next(&client, &tk));
        send(&inbox.resume("id", &client, &tk));
        send(&inbox.worker(client.clone(), tk.clone()).run(async {}));
    };
}

/// A reasoning model's turn parks with its signed thinking block, and a worker elsewhere (a
/// fresh handle and client) resumes it with the block sent back as it came: the strict stub
/// refuses the resume otherwise, as Anthropic does.
async fn reasoning_state_survives_the_row(db: TestDb) {
    let llm = MockLlm::start([
        Reply::tool_call("toolu_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("Buying needs an approval."),
        Reply::text("bought"),
    ])
    .await
    .unwrap();
    let client = || {
        LlmClient::builder()
            .style(Style::Anthropic)
            .base_url(llm.base_url())
            .model("claude-x")
            .api_key("k")
            .build()
            .unwrap()
    };
    let tk = toolkit(&Effects::default());
    let halted = client().run("buy a gpu", &tk).await.unwrap();
    let id = db.inbox().await.park(&halted).await.unwrap();

    let elsewhere = db.inbox().await;
    elsewhere.answer(Answer::ok(&id)).await.unwrap();
    let resumed = elsewhere.resume(&id, &client(), &tk).await.unwrap();
    assert_eq!(resumed.result.text, "bought");
    assert!(matches!(
        resumed.result.messages.get(1).and_then(Message::state),
        Some(ProviderState::Anthropic { .. })
    ));
    let resent = &llm.requests()[1].body["messages"][1]["content"][0];
    assert_eq!(resent["type"], "thinking");
    assert_eq!(resent["thinking"], "Buying needs an approval.");
}

async fn an_app_awaits_a_runs_outcome_in_any_process(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    assert!(matches!(
        s.inbox.outcome("no-such-request").await,
        Err(InboxError::UnknownRequest(id)) if id == "no-such-request"
    ));
    let id = s.park("gpu").await;
    // One waiter on the handle that will resume it, one on another handle, as another
    // process of the app would hold.
    let elsewhere = db.inbox().await;
    let here = tokio::spawn({
        let (inbox, id) = (s.inbox.clone(), id.clone());
        async move { inbox.outcome(&id).await }
    });
    let there = tokio::spawn({
        let id = id.clone();
        async move { elsewhere.outcome(&id).await }
    });
    s.inbox.answer(Answer::ok(&id)).await.unwrap();
    assert!(
        !here.is_finished() && !there.is_finished(),
        "answered, not resumed yet"
    );
    s.resume_now().await;
    for waiter in [here, there] {
        let done = waiter.await.unwrap().unwrap();
        assert_eq!(
            (done.id(), done.run_state),
            (id.as_str(), ParkedState::Done)
        );
        assert_eq!(done.result.unwrap().text, "outcome: approved: gpu");
    }
    // A run that has ended answers at once.
    let again = s.inbox.outcome(&id).await.unwrap();
    assert_eq!(again.run_state, ParkedState::Done);
}

async fn awaiting_a_failed_run_returns_its_failure(db: TestDb) {
    let s = Scene::new(db.builder().max_attempts(1).open().await.unwrap()).await;
    let row = park_and_fail_once(&s).await;
    let failed = s.inbox.outcome(row.id()).await.unwrap();
    assert_eq!(failed.run_state, ParkedState::Failed);
    assert!(failed.last_error.is_some());
}

async fn notes_are_kept_replaced_and_survive_reopening(db: TestDb) {
    let inbox = db.inbox().await;
    assert_eq!(inbox.note("a2a-task:1").await.unwrap(), None);
    inbox.keep_note("a2a-task:1", "first").await.unwrap();
    inbox.keep_note("a2a-task:2", "other").await.unwrap();
    inbox.keep_note("a2a-task:1", "second").await.unwrap();
    drop(inbox);
    let reopened = db.inbox().await;
    assert_eq!(
        reopened.note("a2a-task:1").await.unwrap().as_deref(),
        Some("second")
    );
    assert_eq!(
        reopened.note("a2a-task:2").await.unwrap().as_deref(),
        Some("other")
    );
}
