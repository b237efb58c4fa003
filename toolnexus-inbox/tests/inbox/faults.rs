//! Faults: a worker that vanishes mid-resume, an unreadable row, a database that goes away.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolnexus::{Answer, CancellationToken, RunStatus};
use toolnexus_inbox::{Inbox, InboxError, ParkedState};
use toolnexus_test_support::wait;

use crate::support::{
    both_engines, client, halted, ids_of, pg_admin_url, slow_model, InboxDb, Scene, TestDb, LEASE,
};

both_engines!(
    a_dropped_worker_is_taken_over_after_the_lease,
    an_unreadable_row_does_not_stop_the_worker,
    the_schema_refuses_a_state_no_enum_spells
);

async fn a_dropped_worker_is_taken_over_after_the_lease(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let id = s.park_approved("gpu").await;
    let slow = slow_model(Duration::from_secs(30)).await;
    let abandoned = tokio::time::timeout(
        Duration::from_millis(300),
        s.inbox.resume_next(&client(&slow), &s.tk),
    )
    .await;
    assert!(abandoned.is_err(), "the first worker is dropped mid-resume");
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempts), (ParkedState::Running, 1));
    // Its lease still runs: nobody else may take the run yet.
    s.assert_nothing_to_resume().await;

    let resumed = s.resume_after_lease(&db.clock).await;
    assert_eq!((resumed.id.as_str(), resumed.attempt), (id.as_str(), 2));
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempts), (ParkedState::Done, 2));
    assert_eq!(row.result.unwrap().text, "outcome: approved: gpu");
    // The first attempt recorded the tool's result before it waited on the model: the
    // second replays it, so the purchase happened once, and asks the model only for the
    // reply the first never got.
    assert_eq!(s.effects.count("gpu"), 1);
    s.assert_nothing_to_resume().await;
    let mut conn = db.connect().await;
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM toolnexus_inbox_journal")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(kept, 0, "a run that ended keeps no journal");
}

async fn an_unreadable_row_does_not_stop_the_worker(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let ids = [
        s.park_approved("a").await,
        s.park_approved("b").await,
        s.park_approved("c").await,
    ];
    let waiting = s.park("d").await;
    let unlisted = s.park("e").await;
    db.raw(&format!(
        "UPDATE toolnexus_inbox_runs SET messages = '{{not json' WHERE id = '{}'",
        ids[1]
    ))
    .await;
    db.raw(&format!(
        "UPDATE toolnexus_inbox_requests SET request = 'garbage' WHERE id = '{unlisted}'"
    ))
    .await;
    assert!(
        matches!(s.inbox.get(&unlisted).await, Err(InboxError::Corrupt { id, .. }) if id == unlisted)
    );
    let listed = ids_of(&s.inbox.waiting().await.unwrap());
    assert_eq!(
        listed,
        [waiting],
        "the unreadable row is left out of the list"
    );

    let stop = CancellationToken::new();
    let worker = s
        .inbox
        .worker(s.client.clone(), s.tk.clone())
        .concurrency(2);
    let running = tokio::spawn(worker.run(stop.clone().cancelled_owned()));
    let states = || async {
        let mut v = Vec::new();
        for id in &ids {
            v.push(s.inbox.get(id).await.unwrap().unwrap().state);
        }
        v
    };
    let settled = wait::within(Duration::from_secs(30), || async {
        (states().await == [ParkedState::Done, ParkedState::Failed, ParkedState::Done])
            .then_some(())
    })
    .await;
    assert!(settled.is_some(), "{:?}", states().await);
    stop.cancel();
    let report = running.await.unwrap();
    assert_eq!((report.resumed, report.failed), (2, 1));
    let broken = s.inbox.get(&ids[1]).await.unwrap().unwrap();
    assert!(broken.last_error.unwrap().starts_with("transcript"));
    assert_eq!(
        (
            s.effects.count("a"),
            s.effects.count("b"),
            s.effects.count("c")
        ),
        (1, 0, 1)
    );
}

#[tokio::test]
async fn an_unreachable_sqlite_file_is_a_database_error() {
    let url = "sqlite:///no/such/folder/inbox.db";
    assert!(matches!(
        Inbox::open(url).await,
        Err(InboxError::Database(_))
    ));
}

#[tokio::test]
async fn an_unknown_engine_is_refused_without_its_password() {
    let err = Inbox::open("mysql://root:hunter2@127.0.0.1/x")
        .await
        .unwrap_err();
    assert!(matches!(err, InboxError::UnsupportedUrl(_)));
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

/// A loopback TCP relay in front of PostgreSQL that can be cut and restored, as a network
/// partition or a server restart would.
struct Relay {
    port: u16,
    upstream: SocketAddr,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay = Relay {
            port: listener.local_addr().unwrap().port(),
            upstream,
            tasks: Arc::default(),
        };
        relay.serve(listener);
        relay
    }

    fn serve(&self, listener: tokio::net::TcpListener) {
        let (tasks, upstream) = (self.tasks.clone(), self.upstream);
        let accept = tokio::spawn({
            let tasks = tasks.clone();
            async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    let pipe = tokio::spawn(async move {
                        if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    tasks.lock().unwrap().push(pipe);
                }
            }
        });
        tasks.lock().unwrap().push(accept);
    }

    /// Drops every connection and stops listening.
    async fn cut(&self) {
        // Each task is awaited once aborted: its end is the signal that its sockets are
        // closed. A pipe the accept loop started meanwhile is taken on the next round.
        loop {
            let tasks: Vec<_> = self.tasks.lock().unwrap().drain(..).collect();
            if tasks.is_empty() {
                return;
            }
            for task in &tasks {
                task.abort();
            }
            for task in tasks {
                let _ = task.await;
            }
        }
    }

    async fn restore(&self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .unwrap();
        self.serve(listener);
    }
}

/// `postgres://USER@HOST:PORT/DB` → (the server's address, the URL through `port`).
fn through(url: &str, port: u16) -> (SocketAddr, String) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (user, rest) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let addr = std::net::ToSocketAddrs::to_socket_addrs(hostport)
        .unwrap()
        .next()
        .unwrap();
    (addr, format!("postgres://{user}@127.0.0.1:{port}/{db}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_going_away_is_a_typed_error_and_nothing_is_half_written() {
    let _ = pg_admin_url();
    let db = TestDb::postgres().await;
    let (server, _) = through(&db.url, 0);
    let relay = Relay::start(server).await;
    let (_, relayed) = through(&db.url, relay.port);
    let open = |url: String| {
        let clock = db.clock.reader();
        async move {
            Inbox::builder(url)
                .lease(LEASE)
                .connect_timeout(Duration::from_secs(1))
                .clock(clock)
                .open()
                .await
                .unwrap()
        }
    };
    let s = Scene::new(open(relayed).await).await;
    let direct = open(db.url.clone()).await;
    let id = s.park("gpu").await;

    relay.cut().await;
    assert!(matches!(
        s.inbox.answer(Answer::ok(&id)).await,
        Err(InboxError::Database(_))
    ));
    let other = halted(&s.client, &s.tk, "cpu").await;
    assert!(matches!(
        s.inbox.park(&other).await,
        Err(InboxError::Database(_))
    ));
    let row = direct.get(&id).await.unwrap().unwrap();
    assert_eq!((row.state, row.answer), (ParkedState::Waiting, None));
    assert!(direct
        .get(&other.pending.unwrap().id)
        .await
        .unwrap()
        .is_none());

    relay.restore().await;
    s.inbox.answer(Answer::ok(&id)).await.unwrap();

    // Gone while a worker resumes: its outcome cannot be recorded, and the run stays
    // claimed until its lease lapses; then another worker resumes it, once.
    let slow = slow_model(Duration::from_millis(1500)).await;
    let worker = {
        let (inbox, tk, client) = (s.inbox.clone(), s.tk.clone(), client(&slow));
        tokio::spawn(async move { inbox.resume_next(&client, &tk).await })
    };
    slow.wait_for_calls(1).await;
    relay.cut().await;
    assert!(matches!(
        worker.await.unwrap(),
        Err(InboxError::Database(_))
    ));
    let row = direct.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempts, row.result),
        (ParkedState::Running, 1, None)
    );

    relay.restore().await;
    let resumed = s.resume_after_lease(&db.clock).await;
    assert_eq!(
        (resumed.attempt, resumed.result.status),
        (2, RunStatus::Done)
    );
    assert_eq!(
        direct.get(&id).await.unwrap().unwrap().state,
        ParkedState::Done
    );
}

async fn the_schema_refuses_a_state_no_enum_spells(db: TestDb) {
    let s = Scene::new(db.inbox().await).await;
    let id = s.park("gpu").await;
    let run = format!("UPDATE toolnexus_inbox_runs SET state = 'paused' WHERE id = '{id}'");
    assert!(db.try_raw(&run).await.is_err(), "a run set to `paused`");
    let row = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        row.state,
        ParkedState::Waiting,
        "the refused write changed nothing"
    );
    let note = format!(
        "INSERT INTO toolnexus_inbox_outbox (id, run_id, event, target, body, state, attempts, \
         next_at, created_at) VALUES ('n1', '{id}', 'run.parked', 'ops', '{{}}', 'sent', 0, 0, 0)"
    );
    assert!(
        db.try_raw(&note).await.is_err(),
        "a notification written as `sent`"
    );
}
