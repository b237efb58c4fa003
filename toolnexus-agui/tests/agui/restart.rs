//! A front end resumes a thread after the server that interrupted it stopped: another
//! server on the same database (SQLite or PostgreSQL) takes the resume and runs it once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use crate::support::*;

async fn resume_after_a_restart(db: TestDb) {
    let model = model().await;
    let purchases = Arc::new(AtomicUsize::new(0));
    let first = Agent::serve(&db, &model, purchases.clone()).await;
    let mut client = Client::start();
    let asked = client.say("a", &first.url, "buy a gpu").await;
    assert_eq!(last(&asked)["outcome"]["type"], "interrupt", "{asked}");
    let call = of_type(&asked, "TOOL_CALL_START")[0]["toolCallId"].clone();
    first.stop().await;

    let second = Agent::serve(&db, &model, purchases.clone()).await;
    assert_ne!(second.url, "", "a new server");
    let done = client
        .resume(
            "a",
            &second.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    let results = of_type(&done, "TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1, "{done}");
    assert_eq!(results[0]["toolCallId"], call);
    assert_eq!(last(&done)["outcome"]["type"], "success", "{done}");
    assert_eq!(text(&done), "Bought, order ORDER-1.");
    assert_eq!(purchases.load(Ordering::SeqCst), 1);
    second.stop().await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite() {
    resume_after_a_restart(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres() {
    resume_after_a_restart(TestDb::postgres().await).await;
}
