//! Posts to URLs given at run time: delivered to a receiver on loopback one at a time per
//! series and in order, retried with backoff until taken or given up, with their headers
//! sent and shown nowhere else, refused at private addresses unless allowed, and delivered
//! by another process's worker when the one that wrote them died.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::Router;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{DeliveryState, Inbox, InboxBuilder, InboxError, Post, PostDelivery};
use toolnexus_test_support::wait;

use crate::support::{both_engines, InboxDb, TestDb};

both_engines!(
    a_series_goes_in_order_while_another_is_not_held_up,
    a_post_answered_503_is_retried_with_backoff_then_delivered,
    a_receiver_that_never_takes_a_post_fails_it_after_its_attempts_or_its_time,
    headers_arrive_and_are_shown_nowhere_else,
    a_private_address_is_refused_unless_private_posts_are_allowed,
    a_post_left_by_a_dead_process_is_delivered_by_another_processs_worker,
    dropped_posts_are_not_sent,
    attempts_that_end_together_do_not_starve_the_pool,
);

const TOKEN: &str = "tok-s3cret-7f3a";
const BEARER: &str = "b3arer-91cc";
const QUERY: &str = "qs3cret-55d1";

/// One request as the receiver got it.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    body: String,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Plans {
    got: Vec<Got>,
    /// The statuses each path answers in turn, then 200.
    plans: HashMap<String, VecDeque<u16>>,
    /// The status a path always answers.
    always: HashMap<String, u16>,
    /// Paths whose requests are held unanswered.
    held: Vec<String>,
}

/// A receiver on loopback answering by path.
struct Receiver {
    base: String,
    inner: Arc<Mutex<Plans>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let inner = Arc::new(Mutex::new(Plans::default()));
        let app = Router::new().fallback(receive).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { base, inner }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn plan(&self, path: &str, statuses: impl IntoIterator<Item = u16>) {
        let mut inner = self.inner.lock().unwrap();
        inner
            .plans
            .insert(path.to_owned(), statuses.into_iter().collect());
    }

    fn always(&self, path: &str, status: u16) {
        self.inner
            .lock()
            .unwrap()
            .always
            .insert(path.to_owned(), status);
    }

    fn hold(&self, path: &str, hold: bool) {
        let mut inner = self.inner.lock().unwrap();
        inner.held.retain(|p| p != path);
        if hold {
            inner.held.push(path.to_owned());
        }
    }

    fn got(&self) -> Vec<Got> {
        self.inner.lock().unwrap().got.clone()
    }

    /// The bodies got at `path`, in the order they came.
    fn bodies(&self, path: &str) -> Vec<String> {
        let got = self.got().into_iter().filter(|g| g.path == path);
        got.map(|g| g.body).collect()
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Plans>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let path = uri.path().to_owned();
    let (status, held) = {
        let mut inner = inner.lock().unwrap();
        inner.got.push(Got {
            path: path.clone(),
            query: uri.query().map(str::to_owned),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let planned = inner.plans.get_mut(&path).and_then(VecDeque::pop_front);
        let status = planned
            .or_else(|| inner.always.get(&path).copied())
            .unwrap_or(200);
        (status, inner.held.contains(&path))
    };
    if held {
        std::future::pending::<()>().await;
    }
    StatusCode::from_u16(status).unwrap()
}

fn post(series: &str, url: &str, body: &str) -> Post {
    Post {
        series: series.to_owned(),
        url: url.to_owned(),
        headers: vec![("X-A2A-Notification-Token".to_owned(), TOKEN.to_owned())],
        content_type: "application/a2a+json".to_owned(),
        body: body.to_owned(),
    }
}

/// The suite's options, posting to loopback.
fn builder(db: &TestDb) -> InboxBuilder {
    db.builder().allow_private_posts()
}

/// (id, state, attempts, last status) of each post of `series`.
async fn states(inbox: &Inbox, series: &str) -> Vec<(String, DeliveryState, u32, Option<u16>)> {
    let posts = inbox.posts(series).await.unwrap();
    posts
        .into_iter()
        .map(|p| (p.id, p.state, p.attempts, p.last_status))
        .collect()
}

fn state(
    id: &str,
    state: DeliveryState,
    attempts: u32,
    status: Option<u16>,
) -> (String, DeliveryState, u32, Option<u16>) {
    (id.to_owned(), state, attempts, status)
}

async fn a_series_goes_in_order_while_another_is_not_held_up(db: TestDb) {
    let hook = Receiver::start().await;
    hook.always("/a", 503);
    let inbox = builder(&db)
        .post_retries(8, Duration::from_secs(1))
        .open()
        .await
        .unwrap();
    // Written interleaved; each series keeps its own order.
    for (id, series, path) in [
        ("a1", "A", "/a"),
        ("b1", "B", "/b"),
        ("a2", "A", "/a"),
        ("b2", "B", "/b"),
        ("b3", "B", "/b"),
    ] {
        inbox
            .post(id, post(series, &hook.url(path), id))
            .await
            .unwrap();
    }

    // A's first post fails and holds A back; B goes through whole, in order.
    assert_eq!(inbox.deliver_due().await.unwrap(), 3);
    assert_eq!(hook.bodies("/b"), ["b1", "b2", "b3"]);
    assert_eq!(hook.bodies("/a"), ["a1"]);
    use DeliveryState::{Delivered, Pending};
    assert_eq!(
        states(&inbox, "A").await,
        [
            state("a1", Pending, 1, Some(503)),
            state("a2", Pending, 0, None)
        ]
    );
    assert_eq!(
        states(&inbox, "B").await,
        [
            state("b1", Delivered, 1, Some(200)),
            state("b2", Delivered, 1, Some(200)),
            state("b3", Delivered, 1, Some(200)),
        ]
    );

    // Not before its backoff; then A goes, in order.
    hook.always("/a", 200);
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(1));
    assert_eq!(inbox.deliver_due().await.unwrap(), 2);
    assert_eq!(hook.bodies("/a"), ["a1", "a1", "a2"]);
    assert_eq!(
        states(&inbox, "A").await,
        [
            state("a1", Delivered, 2, Some(200)),
            state("a2", Delivered, 1, Some(200))
        ]
    );
}

async fn a_post_answered_503_is_retried_with_backoff_then_delivered(db: TestDb) {
    let hook = Receiver::start().await;
    hook.plan("/push", [503, 503]);
    let inbox = builder(&db)
        .post_retries(5, Duration::from_secs(10))
        .open()
        .await
        .unwrap();
    inbox
        .post("p1", post("task", &hook.url("/push"), "{}"))
        .await
        .unwrap();

    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    let first = &inbox.posts("task").await.unwrap()[0];
    assert_eq!(
        (first.state, first.attempts, first.last_status),
        (DeliveryState::Pending, 1, Some(503))
    );
    assert_eq!(first.last_error.as_deref(), Some("HTTP 503"));
    let next = first.next_attempt_at.expect("a next attempt");
    let wait = next.duration_since(db.clock.now()).unwrap_or_default();
    assert!(wait > Duration::from_secs(9), "{wait:?}");

    // 10 s after the first failure, then 20 s after the second.
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(10));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(10));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0, "10 of the 20 s");
    db.clock.advance(Duration::from_secs(10));
    assert_eq!(inbox.deliver_due().await.unwrap(), 1);
    db.clock.advance(Duration::from_secs(3600));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0, "delivered once");
    assert_eq!(hook.bodies("/push").len(), 3);
    let done = &inbox.posts("task").await.unwrap()[0];
    assert_eq!(
        (done.state, done.attempts, done.last_status),
        (DeliveryState::Delivered, 3, Some(200))
    );
    assert!(done.delivered_at.is_some() && done.next_attempt_at.is_none());
    assert_eq!(done.last_error, None);
}

async fn a_receiver_that_never_takes_a_post_fails_it_after_its_attempts_or_its_time(db: TestDb) {
    let hook = Receiver::start().await;
    hook.always("/down", 500);

    // Three attempts, a second and then two apart; then the next of the series goes.
    let inbox = builder(&db)
        .post_retries(3, Duration::from_secs(1))
        .open()
        .await
        .unwrap();
    inbox
        .post("x1", post("X", &hook.url("/down"), "x1"))
        .await
        .unwrap();
    inbox
        .post("x2", post("X", &hook.url("/up"), "x2"))
        .await
        .unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(1));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(2));
    assert_eq!(inbox.deliver_due().await.unwrap(), 1, "x2, once x1 failed");
    let x = inbox.posts("X").await.unwrap();
    assert_eq!((x[0].state, x[0].attempts), (DeliveryState::Failed, 3));
    let why = x[0].last_error.as_deref().unwrap_or_default();
    assert!(
        why.contains("HTTP 500") && why.contains("after 3 attempts"),
        "{why}"
    );
    assert_eq!(x[0].next_attempt_at, None);
    assert_eq!(x[1].state, DeliveryState::Delivered);
    db.clock.advance(Duration::from_secs(3600));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    assert_eq!(hook.bodies("/down").len(), 3, "no attempt after the last");

    // Attempts to spare, but its time runs out: 4 s, then 8 s would pass the 10 s.
    let bounded = builder(&db)
        .post_retries(100, Duration::from_secs(4))
        .post_expiry(Duration::from_secs(10))
        .open()
        .await
        .unwrap();
    bounded
        .post("y1", post("Y", &hook.url("/down"), "y1"))
        .await
        .unwrap();
    assert_eq!(bounded.deliver_due().await.unwrap(), 0);
    db.clock.advance(Duration::from_secs(4));
    assert_eq!(bounded.deliver_due().await.unwrap(), 0);
    let y = &bounded.posts("Y").await.unwrap()[0];
    assert_eq!((y.state, y.attempts), (DeliveryState::Failed, 2));
    let why = y.last_error.as_deref().unwrap_or_default();
    assert!(why.contains("time runs out"), "{why}");

    // One whose time ran out before any attempt is given up without being sent.
    bounded
        .post("z1", post("Z", &hook.url("/up"), "z1"))
        .await
        .unwrap();
    db.clock.advance(Duration::from_secs(11));
    assert_eq!(bounded.deliver_due().await.unwrap(), 0);
    let z = &bounded.posts("Z").await.unwrap()[0];
    assert_eq!((z.state, z.attempts), (DeliveryState::Failed, 0));
    assert_eq!(hook.bodies("/up"), ["x2"], "z1 was never sent");
}

async fn headers_arrive_and_are_shown_nowhere_else(db: TestDb) {
    let hook = Receiver::start().await;
    let inbox = builder(&db).open().await.unwrap();
    let url = format!("{}?key={QUERY}", hook.url("/push/task-1"));
    let mut secret = post("task-1", &url, r#"{"statusUpdate":{"taskId":"task-1"}}"#);
    secret
        .headers
        .push(("Authorization".to_owned(), format!("Bearer {BEARER}")));
    let shown = format!("{secret:?}");
    inbox.post("s1", secret.clone()).await.unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 1);

    let got = &hook.got()[0];
    assert_eq!(got.path, "/push/task-1");
    assert_eq!(got.query.as_deref(), Some(format!("key={QUERY}").as_str()));
    assert_eq!(got.header("x-a2a-notification-token"), Some(TOKEN));
    assert_eq!(
        got.header("authorization"),
        Some(format!("Bearer {BEARER}").as_str())
    );
    assert_eq!(got.header("content-type"), Some("application/a2a+json"));
    assert_eq!(got.body, r#"{"statusUpdate":{"taskId":"task-1"}}"#);

    // A receiver that is not there: the attempt fails, and says why without the secrets.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let mut gone = secret.clone();
    gone.url = format!("http://user:pw-{QUERY}@{closed}/push?key={QUERY}");
    inbox.post("s2", gone).await.unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    let posts: Vec<PostDelivery> = inbox.posts("task-1").await.unwrap();
    assert_eq!(posts[1].state, DeliveryState::Pending);
    let why = posts[1].last_error.clone().unwrap_or_default();
    assert!(why.contains("connect"), "{why}");
    assert_eq!(posts[0].url, hook.url("/push/task-1"));
    assert_eq!(posts[1].url, format!("http://{closed}/push"));

    // A header that cannot be sent is refused, naming it and not its value.
    let mut bad = post("task-1", &hook.url("/push"), "{}");
    bad.headers = vec![("X-Token".to_owned(), format!("{TOKEN}\n"))];
    let refused = inbox.post("s3", bad).await.unwrap_err();
    assert!(matches!(refused, InboxError::InvalidPost(_)), "{refused:?}");
    let mut ftp = post("task-1", &format!("ftp://h/x?key={QUERY}"), "{}");
    ftp.headers.clear();
    let refused_url = inbox.post("s4", ftp).await.unwrap_err();
    assert!(
        refused_url.to_string().contains("http or https"),
        "{refused_url}"
    );

    let everything =
        format!("{shown} {posts:?} {why} {refused} {refused:?} {refused_url} {refused_url:?}");
    assert!(shown.contains("X-A2A-Notification-Token"), "{shown}");
    for leaked in [TOKEN, BEARER, QUERY] {
        assert!(!everything.contains(leaked), "{leaked} shown: {everything}");
    }
}

async fn a_private_address_is_refused_unless_private_posts_are_allowed(db: TestDb) {
    let hook = Receiver::start().await;
    let inbox = db.builder().open().await.unwrap();
    let port = hook.base.rsplit(':').next().unwrap().to_owned();
    // An address written out, and a name that resolves to one.
    inbox
        .post("l1", post("L1", &hook.url("/x"), "l1"))
        .await
        .unwrap();
    let by_name = format!("http://localhost:{port}/x");
    inbox.post("l2", post("L2", &by_name, "l2")).await.unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    assert!(hook.got().is_empty(), "{:?}", hook.got());
    for series in ["L1", "L2"] {
        let refused = &inbox.posts(series).await.unwrap()[0];
        assert_eq!(
            (refused.state, refused.attempts),
            (DeliveryState::Pending, 1)
        );
        let why = refused.last_error.as_deref().unwrap_or_default();
        assert!(
            why.contains("loopback") && why.contains("allow_private_posts"),
            "{series}: {why}"
        );
    }

    // The same database, delivered by an inbox that allows them.
    let allowing = builder(&db).open().await.unwrap();
    db.clock.advance(Duration::from_secs(1));
    assert_eq!(allowing.deliver_due().await.unwrap(), 2);
    assert_eq!(hook.bodies("/x").len(), 2);
}

async fn a_post_left_by_a_dead_process_is_delivered_by_another_processs_worker(db: TestDb) {
    let hook = Receiver::start().await;
    hook.hold("/push", true);
    let first = builder(&db)
        .post_timeout(Duration::from_secs(5))
        .open()
        .await
        .unwrap();
    first
        .post("d1", post("D", &hook.url("/push"), "d1"))
        .await
        .unwrap();
    // The first process dies mid-attempt: sent, never recorded.
    let sending = tokio::spawn({
        let first = first.clone();
        async move { first.deliver_due().await }
    });
    wait::eventually("the first attempt", Duration::from_secs(30), || async {
        !hook.got().is_empty()
    })
    .await;
    sending.abort();
    let _ = sending.await;
    drop(first);
    hook.hold("/push", false);

    // Once its lease lapses, another process's worker takes it on its first look, and
    // this process's next post at once, though it would not look again for an hour.
    db.clock.advance(Duration::from_secs(60));
    let second = builder(&db).open().await.unwrap();
    let client = LlmClient::builder()
        .model("m")
        .api_key("k")
        .build()
        .unwrap();
    let tk = Toolkit::builder().build().unwrap();
    let stop = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(
        second
            .worker(client, tk)
            .housekeeping_every(Duration::from_secs(3600))
            .run(async {
                let _ = stop.1.await;
            }),
    );
    let delivered = |id: &'static str| {
        let second = second.clone();
        async move {
            let posts = second.posts("D").await.unwrap();
            posts
                .iter()
                .any(|p| p.id == id && p.state == DeliveryState::Delivered)
        }
    };
    wait::eventually("d1 delivered", Duration::from_secs(30), || delivered("d1")).await;
    second
        .post("d2", post("D", &hook.url("/push"), "d2"))
        .await
        .unwrap();
    wait::eventually("d2 delivered", Duration::from_secs(30), || delivered("d2")).await;
    let _ = stop.0.send(());
    let report = worker.await.unwrap();
    assert_eq!(report.posted, 2);
    // At least once: d1 arrived twice, and d2 after it.
    assert_eq!(hook.bodies("/push"), ["d1", "d1", "d2"]);
    let d = inbox_states(&second).await;
    assert_eq!(
        d,
        [(DeliveryState::Delivered, 2), (DeliveryState::Delivered, 1)]
    );
}

async fn inbox_states(inbox: &Inbox) -> Vec<(DeliveryState, u32)> {
    let posts = inbox.posts("D").await.unwrap();
    posts.iter().map(|p| (p.state, p.attempts)).collect()
}

async fn dropped_posts_are_not_sent(db: TestDb) {
    let hook = Receiver::start().await;
    hook.always("/busy", 503);
    let inbox = builder(&db).open().await.unwrap();
    inbox
        .post("t1", post("T", &hook.url("/ok"), "t1"))
        .await
        .unwrap();
    inbox
        .post("t2", post("T", &hook.url("/busy"), "t2"))
        .await
        .unwrap();
    inbox
        .post("t3", post("T", &hook.url("/ok"), "t3"))
        .await
        .unwrap();
    // Written again under its id: it stays as it was.
    inbox
        .post("t3", post("T", &hook.url("/ok"), "t3 again"))
        .await
        .unwrap();
    inbox
        .post("u1", post("U", &hook.url("/ok"), "u1"))
        .await
        .unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 2, "t1 and u1");

    // The task's push configuration is deleted: what is not delivered goes.
    assert_eq!(inbox.drop_posts("T").await.unwrap(), 2);
    assert_eq!(inbox.drop_posts("T").await.unwrap(), 0);
    hook.always("/busy", 200);
    db.clock.advance(Duration::from_secs(3600));
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    // Two series go at once: in either order.
    let mut ok = hook.bodies("/ok");
    ok.sort();
    assert_eq!(ok, ["t1", "u1"]);
    assert_eq!(hook.bodies("/busy"), ["t2"]);
    let left = inbox.posts("T").await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(
        (left[0].id.as_str(), left[0].state),
        ("t1", DeliveryState::Delivered)
    );
    assert_eq!(
        inbox.posts("U").await.unwrap().len(),
        1,
        "another series stays"
    );
}

async fn attempts_that_end_together_do_not_starve_the_pool(db: TestDb) {
    let hook = Receiver::start().await;
    hook.hold("/slow", true);
    // Two connections for six attempts that time out at once: each records its end while
    // the next claim waits for a connection of its own.
    let inbox = builder(&db)
        .pool_size(2)
        .connect_timeout(Duration::from_secs(3))
        .post_timeout(Duration::from_millis(300))
        .open()
        .await
        .unwrap();
    let url = hook.url("/slow");
    for n in 0..6 {
        let series = format!("s{n}");
        inbox
            .post(&format!("p{n}"), post(&series, &url, "x"))
            .await
            .unwrap();
    }
    let delivered = inbox.deliver_due().await;
    assert_eq!(delivered.map_err(|e| e.to_string()), Ok(0));
    for n in 0..6 {
        let posts = inbox.posts(&format!("s{n}")).await.unwrap();
        assert_eq!(posts[0].attempts, 1, "{posts:?}");
        assert_eq!(posts[0].state, DeliveryState::Pending, "{posts:?}");
    }
}
