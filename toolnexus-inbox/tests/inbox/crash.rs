//! A worker process killed mid-resume (SIGKILL: no chance to clean up): another worker
//! takes the run over once the dead one's lease lapses, replays what the dead one recorded
//! in the run's journal, and the outcome is recorded once.

use std::process::{Command, Stdio};
use std::time::Duration;

use toolnexus_inbox::{AuditKind, ParkedState};

use crate::support::{both_engines, slow_model, InboxDb, Scene, TestDb};

both_engines!(a_killed_worker_process_is_taken_over_after_the_lease);

async fn a_killed_worker_process_is_taken_over_after_the_lease(db: TestDb) {
    // The example parks and resumes under the agent "purchasing", with the same tool.
    let s = Scene::new(db.builder().agent("purchasing").open().await.unwrap()).await;
    let id = s.park_approved("gpu").await;

    // The child's model takes a minute to answer, so it is surely mid-resume when killed.
    let slow = slow_model(Duration::from_secs(60)).await;
    let mut child = Command::new(crate::example_bin::path("durable_approval"))
        .args(["--db", &db.url, "worker", "--lease", "1"])
        .env("TOOLNEXUS_BASE_URL", slow.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env_remove("TOOLNEXUS_STYLE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the example worker starts");
    let claimed = tokio::time::timeout(Duration::from_secs(60), slow.wait_for_calls(1)).await;
    child.kill().expect("SIGKILL the worker");
    let _ = child.wait();
    assert!(claimed.is_ok(), "the example worker never resumed the run");
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempts), (ParkedState::Running, 1));

    let resumed = s.resume_after_lease(&db.clock).await;
    assert_eq!((resumed.id.as_str(), resumed.attempt), (id.as_str(), 2));
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempts), (ParkedState::Done, 2));
    // The killed process had bought the gpu and recorded the tool's result in the run's
    // journal before waiting on the model: the takeover replays that result (the example's
    // own wording) and does not buy again with its own tool.
    let text = row.result.unwrap().text;
    assert!(
        text.starts_with("outcome: approved: gpu (order key "),
        "{text}"
    );
    assert_eq!(s.effects.count("gpu"), 0, "the takeover bought nothing");
    assert_eq!(slow.calls(), 1, "the killed worker asked the model once");
    s.assert_nothing_to_resume().await;

    // The trail tells it in order: the dead worker's claim, then the takeover's.
    let trail = s.inbox.audit(&id).await.unwrap();
    let steps: Vec<_> = trail.iter().map(|e| (e.kind, e.attempt)).collect();
    assert_eq!(
        steps,
        [
            (AuditKind::Parked, None),
            (AuditKind::Answered, None),
            (AuditKind::Claimed, Some(1)),
            (AuditKind::Claimed, Some(2)),
            (AuditKind::Resumed, Some(2)),
        ]
    );
    assert_ne!(trail[2].actor, trail[3].actor, "another worker took over");
}
