//! The signal of runs changing: every change a handle commits — a park, an answer, a
//! resume to its end, a cancel, a door's record kept — is signalled to this process's
//! receivers as it commits; and where the engine announces changes (PostgreSQL), a change
//! through one handle is heard by a receiver of another handle with connections of its
//! own, as by another process.

use std::time::Duration;

use serde_json::json;
use toolnexus::Answer;
use toolnexus_inbox::{Door, Person};

use crate::support::{both_engines, InboxDb, Scene, TestDb};

both_engines!(
    every_change_is_signalled_as_it_commits,
    another_handles_changes_are_heard_where_announced
);

/// Whether `changes` fired since it was last looked at, marking it seen.
fn fired(changes: &mut tokio::sync::watch::Receiver<u64>) -> bool {
    let fired = changes.has_changed().expect("the inbox is open");
    changes.borrow_and_update();
    fired
}

async fn every_change_is_signalled_as_it_commits(db: TestDb) {
    let scene = Scene::new(db.inbox().await).await;
    let mut changes = scene.inbox.changes();
    assert!(!fired(&mut changes), "nothing changed yet");

    let id = scene.park("gpu").await;
    assert!(fired(&mut changes), "a park");
    scene.inbox.answer(Answer::ok(&id)).await.expect("answered");
    assert!(fired(&mut changes), "an answer");
    scene.resume_now().await;
    assert!(fired(&mut changes), "a resume to its end");

    let other = scene.park("cpu").await;
    assert!(fired(&mut changes));
    let ada = Person::new("ada@example.com");
    scene.inbox.cancel(&other, ada).await.expect("cancelled");
    assert!(fired(&mut changes), "a cancel");

    scene
        .inbox
        .keep_record(Door::A2A, "t1", &json!({"contextId": "c1"}))
        .await
        .expect("kept");
    assert!(fired(&mut changes), "a door's record");

    // A read changes nothing. It is made through a handle opened after every write: on
    // PostgreSQL a handle also hears its own writes announced, on a connection of its own
    // and at a time of the server's choosing, so the writer's signal may still fire for
    // them; a later handle hears only what is announced after it listens.
    let reader = db.inbox().await;
    let mut seen = reader.changes();
    reader.get(&id).await.expect("read");
    scene.inbox.get(&id).await.expect("read");
    assert!(!fired(&mut seen), "a read is no change");
}

async fn another_handles_changes_are_heard_where_announced(db: TestDb) {
    let here = Scene::new(db.inbox().await).await;
    let elsewhere = db.inbox().await;
    assert_eq!(
        here.inbox.announces_changes(),
        db.url.starts_with("postgres")
    );
    let mut changes = elsewhere.changes();
    if !elsewhere.announces_changes() {
        // SQLite announces nothing: another handle's change is not heard, which is what
        // the readers' timers are for.
        here.park("gpu").await;
        assert!(!fired(&mut changes), "SQLite announces nothing");
        return;
    }
    // The listener connects on the first call; a change made before it listens is not
    // heard, so the test waits until a change is.
    let id = here.park("gpu").await;
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    changed.expect("the inbox is open");
                    return;
                }
                // Patience only: the listener may connect after the first change.
                () = tokio::time::sleep(Duration::from_millis(200)) => {
                    here.inbox
                        .keep_record(Door::A2A, "nudge", &json!({}))
                        .await
                        .expect("kept");
                }
            }
        }
    });
    heard.await.expect("another handle's change is heard");
    changes.borrow_and_update();
    here.inbox.answer(Answer::ok(&id)).await.expect("answered");
    tokio::time::timeout(Duration::from_secs(30), changes.changed())
        .await
        .expect("an answer through another handle is heard")
        .expect("the inbox is open");
}
