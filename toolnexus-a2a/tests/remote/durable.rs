//! A durable resume through the inbox: the run halts on the remote agent's question, is
//! parked, answered, and resumed by a worker of another inbox handle with a fresh client,
//! agent and toolkit — and the same remote task goes on.

use toolnexus::{Answer, RunStatus};
use toolnexus_inbox::{Inbox, ParkedState};
use toolnexus_test_support::databases::TestDb;

use super::support::{agents, client, model, remote, task_of, toolkit};

toolnexus_test_support::both_engines!(
    a_parked_run_is_resumed_by_a_worker_and_continues_the_remote_task
);

async fn a_parked_run_is_resumed_by_a_worker_and_continues_the_remote_task(db: TestDb) {
    let url = db.url.as_str();
    let mock = model("shop", "buy a gpu").await;
    let halted = client(&mock)
        .build()
        .unwrap()
        .run("buy me a gpu", &toolkit(remote("shop").await))
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let inbox = Inbox::open(url).await.unwrap();
    let id = inbox.park(&halted).await.unwrap();
    let parked = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.request.prompt, "Approve purchase of gpu?");
    let task = task_of(&parked.request);
    inbox
        .answer_as(Answer::ok(&id), "ada@example.com")
        .await
        .unwrap();

    // The worker's side: its own handle on the database, agent, toolkit and client.
    let theirs = Inbox::open(url).await.unwrap();
    let worker = theirs.worker(
        client(&mock).build().unwrap(),
        toolkit(remote("shop").await),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    let done = tokio::time::timeout(std::time::Duration::from_secs(30), theirs.outcome(&id))
        .await
        .expect("the worker resumes the run")
        .unwrap();
    let _ = stop.send(());
    let report = running.await.unwrap();
    assert_eq!(report.resumed, 1);

    assert_eq!(done.run_state, ParkedState::Done);
    let result = done.result.expect("the resumed run's result");
    assert_eq!(result.status, RunStatus::Done);
    let output = &result.tool_calls[0].output;
    assert!(output.starts_with("bought gpu: ORDER-"), "{output}");
    assert_eq!(result.text, format!("remote says: {output}"));
    let sent = agents().await_continuations(&task, 1).await;
    assert_eq!(
        sent.len(),
        1,
        "the remote task is continued exactly once: {sent:?}"
    );
    assert_eq!(sent[0]["answer"]["ok"], true);
}
