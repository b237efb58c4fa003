//! A server stopped between the halt and the continuation: a new one on the same database
//! continues the task, on SQLite and on PostgreSQL.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use crate::support::*;

toolnexus_test_support::both_engines!(a_restarted_server_continues_the_task);

async fn a_restarted_server_continues_the_task(db: TestDb) {
    let model = model().await;
    let purchases = Arc::new(AtomicUsize::new(0));
    let before = Agent::serve(&db, &model, purchases.clone()).await;
    let out = drive(&before.url, json!([{"send": {"text": "buy a gpu"}}])).await;
    let waiting = task_of(&out[0]).clone();
    assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    before.stop().await;

    let after = Agent::serve(&db, &model, purchases.clone()).await;
    let (id, context) = (&waiting["id"], &waiting["contextId"]);
    let out = drive(
        &after.url,
        json!([
            {"get": {"task": id}},
            {"send": {"text": "approve", "task": id, "context": context}},
            {"get": {"task": id}},
        ]),
    )
    .await;
    let again = task_of(&out[0]);
    assert_eq!(state(again), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(again["status"]["message"], waiting["status"]["message"]);
    let done = task_of(&out[1]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Bought, order ORDER-1.");
    assert_eq!(task_of(&out[2])["history"], done["history"]);
    assert_eq!(purchases.load(Ordering::SeqCst), 1);
    after.stop().await;
}
