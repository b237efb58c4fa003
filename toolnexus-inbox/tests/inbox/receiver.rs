//! A webhook receiver on loopback: it keeps every attempt as it arrived (the Standard
//! Webhooks headers and the raw body), answers each with the next status of its plan (200
//! once the plan is spent) or holds it unanswered, and has the reference implementation
//! (the `standardwebhooks` Python package) verify what it got.

use std::collections::VecDeque;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use toolnexus_test_support::wait;

/// One attempt as the receiver got it.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub id: String,
    pub timestamp: String,
    pub signature: Option<String>,
    pub body: String,
}

impl Attempt {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("the body is JSON")
    }
}

#[derive(Default)]
struct Inner {
    got: Vec<Attempt>,
    plan: VecDeque<u16>,
    hold: bool,
}

/// The receiver; it serves until dropped with the test's runtime.
pub struct Receiver {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Receiver {
    /// Answers the attempts with `plan`'s statuses in turn, then 200.
    pub async fn start(plan: impl IntoIterator<Item = u16>) -> Receiver {
        let inner = Arc::new(Mutex::new(Inner {
            plan: plan.into_iter().collect(),
            ..Inner::default()
        }));
        let app = Router::new()
            .route("/hooks/inbox", post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks/inbox", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, inner }
    }

    /// From now on, holds every attempt unanswered (a receiver that hangs), or answers
    /// again.
    pub fn hold(&self, hold: bool) {
        self.inner.lock().unwrap().hold = hold;
    }

    pub fn attempts(&self) -> Vec<Attempt> {
        self.inner.lock().unwrap().got.clone()
    }

    /// The attempts carrying notifications of `kind` (their body's `type`).
    pub fn of_type(&self, kind: &str) -> Vec<Attempt> {
        let mut got = self.attempts();
        got.retain(|a| a.json()["type"] == kind);
        got
    }

    /// The distinct notifications got, by id, in the order they first came.
    pub fn distinct(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for a in self.attempts() {
            if !ids.contains(&a.id) {
                ids.push(a.id);
            }
        }
        ids
    }

    pub async fn wait_for(&self, attempts: usize) {
        let got = wait::within(Duration::from_secs(60), || async {
            (self.attempts().len() >= attempts).then_some(())
        })
        .await;
        assert!(
            got.is_some(),
            "the receiver got {} attempts, not {attempts}",
            self.attempts().len()
        );
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (status, hold) = {
        let mut inner = inner.lock().unwrap();
        inner.got.push(Attempt {
            id: header("webhook-id").unwrap_or_default(),
            timestamp: header("webhook-timestamp").unwrap_or_default(),
            signature: header("webhook-signature"),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let status = inner.plan.pop_front().unwrap_or(200);
        (status, inner.hold)
    };
    if hold {
        std::future::pending::<()>().await;
    }
    StatusCode::from_u16(status).unwrap()
}

/// What the `standardwebhooks` package says of each attempt, verified with `secret`:
/// `"ok"`, or the error it raised.
pub fn verify_with_reference(secret: &str, attempts: &[Attempt]) -> Vec<String> {
    let python = std::env::var("TOOLNEXUS_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PYTHON is not set: run the tests with scripts/test.sh (it makes a \
             venv with the standardwebhooks package)"
        )
    });
    let script = r#"
import json, sys
from standardwebhooks.webhooks import Webhook
for line in sys.stdin:
    a = json.loads(line)
    headers = {"webhook-id": a["id"], "webhook-timestamp": a["timestamp"],
               "webhook-signature": a["signature"] or ""}
    try:
        Webhook(a["secret"]).verify(a["body"], headers)
        print("ok")
    except Exception as e:
        print(type(e).__name__ + ": " + str(e))
"#;
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python starts");
    {
        let mut stdin = child.stdin.take().unwrap();
        for a in attempts {
            let line = json!({"secret": secret, "id": a.id, "timestamp": a.timestamp,
                              "signature": a.signature, "body": a.body});
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the reference verifier failed to run");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}
