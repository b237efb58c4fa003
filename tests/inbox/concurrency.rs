//! Many workers, one database: every answered run resumed exactly once, and racing answers
//! settled by the first.

use std::time::Duration;

use toolnexus::{Answer, CancellationToken};
use toolnexus_inbox::{InboxError, ParkedState};

use crate::support::{both_engines, Scene, TestDb};

both_engines!(
    sixteen_workers_resume_two_hundred_runs_exactly_once,
    sixteen_racing_answers_one_wins
);

async fn sixteen_workers_resume_two_hundred_runs_exactly_once(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let mut ids = Vec::new();
    for i in 0..200 {
        ids.push(s.park_approved(&format!("item{i}")).await);
    }
    let stop = CancellationToken::new();
    let mut workers = Vec::new();
    for _ in 0..16 {
        // Each worker its own pool, as separate processes would have. The lease is long
        // enough that no claim lapses on a loaded machine: takeovers are tested elsewhere.
        let inbox = db
            .builder()
            .lease(Duration::from_secs(60))
            .pool_size(2)
            .open()
            .await
            .unwrap();
        let worker = inbox.worker(s.client.clone(), s.tk.clone());
        workers.push(tokio::spawn(worker.run(stop.clone().cancelled_owned())));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while s.effects.total() < 200 || !s.inbox.waiting().await.unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the workers stalled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let any straggler that would resume a run twice do it before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.cancel();
    let mut resumed = 0;
    for w in workers {
        resumed += w.await.unwrap().resumed;
    }
    assert_eq!(resumed, 200);
    for (i, id) in ids.iter().enumerate() {
        let row = s.inbox.get(id).await.unwrap().unwrap();
        assert_eq!((row.state, row.attempts), (ParkedState::Done, 1), "{id}");
        assert_eq!(s.effects.count(&format!("item{i}")), 1, "item{i}");
        assert!(row.result.is_some());
    }
    assert_eq!(s.effects.total(), 200);
}

async fn sixteen_racing_answers_one_wins(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let id = s.park("gpu").await;
    let mut racers = Vec::new();
    for i in 0..16 {
        let inbox = db.builder().pool_size(1).open().await.unwrap();
        let id = id.clone();
        racers.push(tokio::spawn(async move {
            let answer = if i % 2 == 0 {
                Answer::ok(&id)
            } else {
                Answer::decline(&id, "declined")
            };
            (i, inbox.answer_as(answer, format!("user{i}")).await)
        }));
    }
    let mut winners = Vec::new();
    for r in racers {
        match r.await.unwrap() {
            (i, Ok(())) => winners.push(i),
            (_, Err(InboxError::NotWaiting { .. })) => {}
            (_, Err(e)) => panic!("a losing answer must be NotWaiting, not {e:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    let winner = winners[0];
    assert_eq!(row.answered_by, Some(format!("user{winner}")));
    assert_eq!(row.answer.unwrap().ok, winner % 2 == 0);
}
