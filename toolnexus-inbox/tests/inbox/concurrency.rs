//! Many workers, one database: every answered run resumed exactly once, and racing answers
//! settled by the first — also when a run waits on several requests, answered at once from
//! many tasks while the workers run.

use std::time::Duration;

use tokio::task::JoinHandle;
use toolnexus::{Answer, CancellationToken};
use toolnexus_inbox::{InboxError, ParkedState, WorkerReport};
use toolnexus_test_support::wait::eventually;

use crate::support::{both_engines, InboxDb, Scene, TestDb};

both_engines!(
    sixteen_workers_resume_two_hundred_runs_exactly_once,
    sixteen_racing_answers_one_wins,
    racing_answers_to_each_runs_requests_are_all_kept_and_resumed_once
);

/// Workers running until stopped, each with a pool of its own, as separate processes would
/// have. The lease is long enough that no claim lapses on a loaded machine: takeovers are
/// tested elsewhere.
struct Workers {
    stop: CancellationToken,
    running: Vec<JoinHandle<WorkerReport>>,
}

impl Workers {
    async fn start(db: &TestDb, s: &Scene, n: usize, concurrency: usize) -> Workers {
        let stop = CancellationToken::new();
        let mut running = Vec::new();
        for _ in 0..n {
            let inbox = db
                .builder()
                .lease(Duration::from_secs(60))
                .pool_size(2)
                .open()
                .await
                .unwrap();
            let worker = inbox
                .worker(s.client.clone(), s.tk.clone())
                .concurrency(concurrency);
            running.push(tokio::spawn(worker.run(stop.clone().cancelled_owned())));
        }
        Workers { stop, running }
    }

    /// Stops them and waits for the resumes they have in flight; how many runs they resumed
    /// in all. The callers first wait for every run to be done, after which no claim can
    /// take one again: a straggler resuming a run twice would be one of those in flight,
    /// and is counted here.
    async fn stop(self) -> usize {
        self.stop.cancel();
        let mut resumed = 0;
        for worker in self.running {
            resumed += worker.await.unwrap().resumed;
        }
        resumed
    }
}

async fn sixteen_workers_resume_two_hundred_runs_exactly_once(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let mut ids = Vec::new();
    for i in 0..200 {
        ids.push(s.park_approved(&format!("item{i}")).await);
    }
    let workers = Workers::start(&db, &s, 16, 1).await;
    eventually(
        "the workers to resume every run",
        Duration::from_secs(120),
        || async {
            if s.effects.total() < 200 || !s.inbox.waiting().await.unwrap().is_empty() {
                return false;
            }
            for id in &ids {
                if s.inbox.get(id).await.unwrap().unwrap().state != ParkedState::Done {
                    return false;
                }
            }
            true
        },
    )
    .await;
    assert_eq!(workers.stop().await, 200);
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

async fn racing_answers_to_each_runs_requests_are_all_kept_and_resumed_once(db: TestDb) {
    const RUNS: usize = 20;
    let s = Scene::gated(db.inbox().await).await;
    let mut runs = Vec::new();
    for i in 0..RUNS {
        let run = s.halted_on_three(&format!("dir{i}")).await;
        let ids: Vec<String> = run.waiting.iter().map(|r| r.id.clone()).collect();
        assert_eq!(s.inbox.park(&run).await.unwrap(), ids[0]);
        runs.push(ids);
    }
    let workers = Workers::start(&db, &s, 4, 2).await;
    // Every request gets two answers at once, from two of eight handles: an approval and a
    // refusal. The run's three requests race each other too.
    let mut handles = Vec::new();
    for _ in 0..8 {
        handles.push(db.builder().pool_size(2).open().await.unwrap());
    }
    let mut racers = Vec::new();
    for (r, ids) in runs.iter().enumerate() {
        for (q, id) in ids.iter().enumerate() {
            for approve in [true, false] {
                let inbox = handles[(r + q + usize::from(approve)) % handles.len()].clone();
                let id = id.clone();
                racers.push(tokio::spawn(async move {
                    let answer = if approve {
                        Answer::ok(&id)
                    } else {
                        Answer::decline(&id, "declined")
                    };
                    let by = format!("{}-{id}", if approve { "yes" } else { "no" });
                    (id, approve, inbox.answer_as(answer, by).await)
                }));
            }
        }
    }
    let mut won = std::collections::HashMap::new();
    for racer in racers {
        match racer.await.unwrap() {
            (id, approve, Ok(())) => {
                assert!(won.insert(id, approve).is_none(), "two answers won");
            }
            (_, _, Err(InboxError::NotWaiting { .. })) => {}
            (_, _, Err(e)) => panic!("a losing answer must be NotWaiting, not {e:?}"),
        }
    }
    assert_eq!(won.len(), RUNS * 3, "every request has its one answer");

    eventually(
        "the workers to finish every run",
        Duration::from_secs(120),
        || async {
            for ids in &runs {
                if s.inbox.get(&ids[0]).await.unwrap().unwrap().state != ParkedState::Done {
                    return false;
                }
            }
            true
        },
    )
    .await;
    assert_eq!(workers.stop().await, RUNS, "each run resumed once");
    assert_eq!(
        s.llm.calls(),
        RUNS * 2,
        "one call to halt and one to finish, per run"
    );
    for (r, ids) in runs.iter().enumerate() {
        let text = s
            .inbox
            .get(&ids[0])
            .await
            .unwrap()
            .unwrap()
            .result
            .expect("the outcome")
            .text;
        let results: Vec<&str> = text.split(" | ").collect();
        assert_eq!(results.len(), 3, "the model saw the three results: {text}");
        for (q, (id, file)) in ids.iter().zip(["a", "b", "c"]).enumerate() {
            let row = s.inbox.get(id).await.unwrap().unwrap();
            assert_eq!((row.state, row.attempts), (ParkedState::Done, 1), "{id}");
            let approved = won[id];
            let answer = row.answer.expect("the answer is kept");
            assert_eq!(
                answer.ok, approved,
                "{id}: the winning answer is the one kept"
            );
            let who = if approved { "yes" } else { "no" };
            assert_eq!(row.answered_by, Some(format!("{who}-{id}")));
            let path = format!("dir{r}/{file}");
            assert_eq!(s.effects.count(&path), usize::from(approved), "{path}");
            if approved {
                assert_eq!(results[q], format!("deleted {path}"));
            } else {
                assert!(results[q].starts_with("declined"), "{}", results[q]);
            }
        }
    }
}
