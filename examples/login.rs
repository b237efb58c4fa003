//! A tool that needs the user to sign in first.
//!
//! `read_inbox` suspends with an `authorization` request whose URL is a sign-in page. The
//! host's `wait_for` shows the URL and completes when the sign-in callback is hit; the tool
//! then re-runs. toolnexus itself has no auth code: signing in happens entirely in the host.
//!
//! ```sh
//! cargo run --example login          # open the printed URL in a browser to sign in
//! ```
//! With no terminal on standard input (or `TOOLNEXUS_AUTO_ANSWER=approve`), the example
//! plays the browser and visits the URL itself.

mod support;

use std::convert::Infallible;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request as HttpRequest, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::sync::oneshot;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{auth_required, tool, Answer, Request, ToolResult, Toolkit};

/// Where the sign-in page is; set once the callback server is listening.
static SIGN_IN_URL: OnceLock<String> = OnceLock::new();

/// Lists the unread messages in the user's inbox
#[tool]
async fn read_inbox(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => {
            let user = a
                .data
                .as_ref()
                .and_then(|d| d["user"].as_str())
                .unwrap_or("you");
            ToolResult::ok(format!(
                "signed in as {user}: 2 unread messages (invoice #42, lunch on Friday?)"
            ))
        }
        Some(_) => ToolResult::error("not signed in"),
        None => {
            let url = SIGN_IN_URL.get().cloned().unwrap_or_default();
            auth_required!(url = url, prompt = "Sign in to read your inbox.")
        }
    }
}

fn script(req: &RecordedRequest) -> Reply {
    match support::last_tool_output(req) {
        None => Reply::tool_call("call_1", "read_inbox", json!({})),
        Some(out) if out.starts_with("signed in") => Reply::text(format!(
            "Here is your inbox: {}",
            out.split_once(": ").map_or(out.as_str(), |(_, m)| m)
        )),
        Some(_) => Reply::text("I could not read your inbox because you did not sign in."),
    }
}

/// One pending sign-in: the callback completes it with the signed-in user.
type Waiting = Arc<Mutex<Option<oneshot::Sender<String>>>>;

/// Serves `/login`: the "identity provider" page, which signs the user in and calls back.
async fn callback_server(waiting: Waiting) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/login", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let waiting = waiting.clone();
            let service = hyper::service::service_fn(move |req: HttpRequest<Incoming>| {
                let waiting = waiting.clone();
                async move {
                    let body = if req.uri().path() == "/login" {
                        let sender = waiting.lock().unwrap_or_else(|p| p.into_inner()).take();
                        match sender {
                            Some(tx) => {
                                let _ = tx.send("ada".to_owned());
                                "Signed in. You can close this tab."
                            }
                            None => "Nothing is waiting for a sign-in.",
                        }
                    } else {
                        "Not found."
                    };
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body))))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    Ok(url)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let waiting: Waiting = Arc::default();
    let url = callback_server(waiting.clone()).await?;
    let _ = SIGN_IN_URL.set(url);

    let endpoint = support::endpoint(script).await?;
    let client = endpoint
        .builder
        .wait_for(move |request: Request| {
            let waiting = waiting.clone();
            async move {
                let (tx, rx) = oneshot::channel();
                *waiting.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
                let url = request.url.clone().unwrap_or_default();
                println!("{}\n  -> {url}", request.prompt);
                let interactive = std::io::stdin().is_terminal()
                    && std::env::var_os("TOOLNEXUS_AUTO_ANSWER").is_none();
                if interactive {
                    println!("(open it in a browser; waiting up to 2 minutes)");
                } else {
                    println!("(no one at the terminal: visiting it myself)");
                    if let Err(e) = reqwest::get(&url).await {
                        println!("could not visit the sign-in page: {e}");
                    }
                }
                match tokio::time::timeout(Duration::from_secs(120), rx).await {
                    Ok(Ok(user)) => {
                        println!("signed in as {user}");
                        Answer::ok(request.id).with_data(json!({"user": user}))
                    }
                    _ => {
                        println!("no sign-in arrived");
                        Answer::decline(request.id, "expired")
                    }
                }
            }
        })
        .build()?;
    let tk = Toolkit::builder().tool(ReadInbox).build()?;

    let result = client.run("What is in my inbox?", &tk).await?;
    println!("final answer: {}", result.text);
    Ok(())
}
