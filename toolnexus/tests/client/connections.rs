//! The connections a client keeps to its provider: as many as requests were in flight at
//! once, each taken again by the next turn and the next run, and one the server closed
//! replaced by a new connection without the run retrying.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use toolnexus::{ClientError, LlmClient, RunStatus};

use crate::support::*;

/// A Chat Completions endpoint on raw HTTP/1.1 that counts the connections it accepts and
/// scripts the `echo` flow ([`echo_flow_reply`]). `close` ends each connection after its
/// first reply, without saying so.
struct Endpoint {
    base_url: String,
    accepted: Arc<AtomicUsize>,
}

impl Endpoint {
    async fn start(close: bool) -> Endpoint {
        let (base_url, accepted) = raw_endpoint(move |stream, _| serve(stream, close)).await;
        Endpoint { base_url, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn client(&self) -> LlmClient {
        client_of(&self.base_url)
    }
}

async fn serve(stream: TcpStream, close: bool) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.unwrap();
        let reply = echo_flow_reply(&body);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        let sent = stream.write_all(format!("{head}{reply}").as_bytes()).await;
        if sent.is_err() || close {
            return;
        }
    }
}

#[tokio::test]
async fn each_request_in_flight_has_one_connection_and_later_turns_and_runs_take_it_again() {
    let endpoint = Endpoint::start(false).await;
    let client = endpoint.client();
    let toolkit = echo_toolkit();

    for batch in 0..2 {
        let runs = (0..4).map(|_| client.run("echo x", &toolkit).into_future());
        for result in futures::future::join_all(runs).await {
            let result = result.unwrap();
            assert_eq!(
                (result.status, result.text.as_str()),
                (RunStatus::Done, "done")
            );
        }
        // Turn two finds the connection turn one put back, and so does the next batch:
        // no request opens a connection beside one that is about to be free.
        assert_eq!(endpoint.accepted(), 4, "after batch {batch}");
    }
}

#[tokio::test]
async fn a_connection_the_server_closed_is_replaced_without_a_retry() {
    let endpoint = Endpoint::start(true).await;
    let client = endpoint.client();
    let toolkit = echo_toolkit();

    for run in 1..=3 {
        let result = client.run("echo x", &toolkit).await;
        let result = result.unwrap_or_else(|e| panic!("run {run}: {e}"));
        assert_eq!(result.text, "done", "run {run}");
        // Two turns a run, each on a connection of its own: the one closed under the last
        // reply is never sent on, and with no retries allowed the run did not need one.
        assert_eq!(endpoint.accepted(), 2 * run, "run {run}");
    }
}

#[tokio::test]
async fn a_connection_that_cannot_be_made_is_a_network_error_saying_so() {
    // A port nothing listens on, over TCP; and a server that hangs up before any TLS
    // handshake, over https, which the platform verifier's set-up is made for.
    let free = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed = format!("http://{}/v1", free.local_addr().unwrap());
    drop(free);
    let hangs_up = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tls = format!("https://{}/v1", hangs_up.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = hangs_up.accept().await {
            drop(stream);
        }
    });

    for base_url in [closed, tls] {
        let client = LlmClient::builder()
            .base_url(&base_url)
            .model("gpt-4o-mini")
            .api_key("test-key")
            .retries(0)
            .build()
            .unwrap();
        let err = client.run("hello", &echo_toolkit()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Network(_)),
            "{base_url}: {err:?}"
        );
        assert!(
            err.to_string().contains("could not connect"),
            "{base_url}: {err}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_connection_left_idle_past_the_idle_time_is_closed() {
    let endpoint = Endpoint::start(false).await;
    let client = endpoint.client();
    let toolkit = echo_toolkit();

    client.run("echo x", &toolkit).await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    client.run("echo x", &toolkit).await.unwrap();
    assert_eq!(endpoint.accepted(), 1, "idle a minute, it is taken again");

    // Idle 90 s is closed at the reaper's next round, at most 90 s later.
    tokio::time::sleep(Duration::from_secs(181)).await;
    client.run("echo x", &toolkit).await.unwrap();
    assert_eq!(
        endpoint.accepted(),
        2,
        "idle three minutes, a new one is made"
    );
}
