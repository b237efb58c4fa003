//! A parked run's stored transcript altered before it resumes — a call's arguments
//! changed (with or without its digest), two calls' ids swapped, a gate's request put in
//! another call's placeholder — is refused: nothing runs, the model is not asked, the run
//! is given up, and its audit trail records the refusal.

use sqlx::Row;
use toolnexus::{Answer, ClientError, Message};
use toolnexus_inbox::{AuditKind, InboxError, ParkedState};

use crate::support::{both_engines, InboxDb, Scene, TestDb};

both_engines!(
    changed_arguments_are_refused_and_audited,
    changed_arguments_with_their_digest_rewritten_are_refused_too,
    swapped_call_ids_are_refused,
    another_calls_gate_request_is_refused,
    an_untouched_run_still_resumes_with_edits
);

/// Rewrites the stored transcript of run `run` through `change`, as someone with write
/// access to the database could.
async fn rewrite(db: &TestDb, run: &str, change: impl FnOnce(&mut Vec<Message>)) {
    let mut conn = db.connect().await;
    let row = sqlx::query("SELECT messages FROM toolnexus_inbox_runs WHERE id = $1")
        .bind(run)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let mut messages: Vec<Message> = serde_json::from_str(&row.get::<String, _>(0)).unwrap();
    change(&mut messages);
    sqlx::query("UPDATE toolnexus_inbox_runs SET messages = $1 WHERE id = $2")
        .bind(serde_json::to_string(&messages).unwrap())
        .bind(run)
        .execute(&mut conn)
        .await
        .unwrap();
}

fn last_calls(messages: &mut [Message]) -> &mut Vec<toolnexus::ToolCall> {
    messages
        .iter_mut()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls),
            _ => None,
        })
        .unwrap()
}

fn placeholders(messages: &mut [Message]) -> &mut Vec<toolnexus::ToolOutput> {
    match messages.last_mut() {
        Some(Message::ToolResults { results }) => results,
        _ => panic!("a parked run ends with its placeholders"),
    }
}

/// Three gated deletes parked and every one approved: the scene, the run's id and its
/// requests' ids.
async fn approved_three(db: &TestDb) -> (Scene, String, Vec<String>) {
    let s = Scene::gated(db.inbox().await).await;
    let run = s.halted_on_three("tmp").await;
    let id = s.inbox.park(&run).await.unwrap();
    let ids: Vec<String> = run.waiting.iter().map(|r| r.id.clone()).collect();
    for request in &ids {
        s.inbox.answer(Answer::ok(request)).await.unwrap();
    }
    (s, id, ids)
}

/// Resumes the tampered run and checks it was refused naming `call`, with nothing run.
async fn assert_refused(s: &Scene, run: &str, call: &str) {
    let asked = s.llm.calls();
    let refused = s.inbox.resume(run, &s.client, &s.tk).await;
    let request = match refused {
        Err(InboxError::Resume(ClientError::CallChanged {
            call: c, request, ..
        })) if c == call => request,
        other => panic!("the resume is refused naming `{call}`: {other:?}"),
    };
    assert_eq!(s.effects.total(), 0, "no delete ran");
    assert_eq!(s.llm.calls(), asked, "the model was not asked");
    let row = s.inbox.get(run).await.unwrap().unwrap();
    assert_eq!(
        row.run_state,
        ParkedState::Failed,
        "given up: no attempt could run it"
    );
    assert!(
        row.last_error.as_deref().is_some_and(|e| e.contains(call)),
        "{:?}",
        row.last_error
    );
    let trail = s.inbox.audit(run).await.unwrap();
    let entry = trail
        .iter()
        .find(|e| e.kind == AuditKind::Refused)
        .expect("the refusal is in the audit trail");
    assert_eq!(entry.request.as_deref(), Some(request.as_str()));
    assert!(entry.detail.as_deref().is_some_and(|d| d.contains(call)));
    s.assert_nothing_to_resume().await;
}

async fn changed_arguments_are_refused_and_audited(db: TestDb) {
    let (s, run, _) = approved_three(&db).await;
    rewrite(&db, &run, |m| {
        last_calls(m)[1].args = serde_json::json!({"path": "/etc"});
    })
    .await;
    assert_refused(&s, &run, "call_b").await;
}

async fn changed_arguments_with_their_digest_rewritten_are_refused_too(db: TestDb) {
    let (s, run, _) = approved_three(&db).await;
    rewrite(&db, &run, |m| {
        let args = serde_json::json!({"path": "/etc"});
        last_calls(m)[1].args = args.clone();
        // The whole transcript made consistent again: the digest, the gate's own data.
        let placeholder = &mut placeholders(m)[1];
        placeholder.call_digest = Some(toolnexus::call_digest("delete", &args));
        if let Some(data) = placeholder.pending.as_mut().and_then(|r| r.data.as_mut()) {
            data["args"] = args;
        }
    })
    .await;
    // The inbox keeps each request's call apart from the transcript, and holds it to it.
    assert_refused(&s, &run, "call_b").await;
}

async fn swapped_call_ids_are_refused(db: TestDb) {
    let (s, run, _) = approved_three(&db).await;
    rewrite(&db, &run, |m| {
        let calls = last_calls(m);
        let a = calls[0].id.clone();
        calls[0].id = calls[2].id.clone();
        calls[2].id = a;
    })
    .await;
    assert_refused(&s, &run, "call_a").await;
}

async fn another_calls_gate_request_is_refused(db: TestDb) {
    let (s, run, _) = approved_three(&db).await;
    rewrite(&db, &run, |m| {
        let results = placeholders(m);
        // call_a's placeholder now waits on call_c's request, and call_c's on call_a's.
        let c = results[2].pending.clone();
        results[2].pending = results[0].pending.replace(c.unwrap());
    })
    .await;
    // call_a's request, answered, would now settle call_c.
    assert_refused(&s, &run, "call_c").await;
}

async fn an_untouched_run_still_resumes_with_edits(db: TestDb) {
    let s = Scene::gated(db.inbox().await).await;
    let run = s.halted_on_three("tmp").await;
    let id = s.inbox.park(&run).await.unwrap();
    let edited = serde_json::json!({"path": "tmp/b", "keep_days": 3});
    s.inbox
        .answer(Answer::ok(&run.waiting[0].id))
        .await
        .unwrap();
    s.inbox
        .answer(Answer::ok(&run.waiting[1].id).with_args(edited))
        .await
        .unwrap();
    s.inbox
        .answer(Answer::decline(&run.waiting[2].id, "keep it"))
        .await
        .unwrap();
    let resumed = s.inbox.resume(&id, &s.client, &s.tk).await.unwrap();
    assert!(resumed.next.is_none());
    assert_eq!(
        (
            s.effects.count("tmp/a"),
            s.effects.count("tmp/b"),
            s.effects.count("tmp/c")
        ),
        (1, 1, 0)
    );
    let trail = s.inbox.audit(&id).await.unwrap();
    assert!(trail.iter().all(|e| e.kind != AuditKind::Refused));
}
