//! A tool that needs the user to sign in first.
//!
//! `read_inbox` suspends with an `authorization` request whose URL is a sign-in page. The
//! host's `wait_for` shows the URL and completes when the sign-in callback is hit; the tool
//! then re-runs. toolnexus itself has no auth code: signing in happens entirely in the host.
//!
//! ```sh
//! cargo run --example login                                 # open the printed URL in a browser
//! TOOLNEXUS_AUTO_ANSWER=approve cargo run --example login   # the example visits it itself
//! TOOLNEXUS_AUTO_ANSWER=decline cargo run --example login   # nobody signs in
//! ```
//! While it waits for the sign-in, a line on standard input or its end (Ctrl-D, or a
//! closed input) gives up. Also `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL` and
//! `TOOLNEXUS_STYLE=openai|anthropic|responses|gemini`, for a real model.

mod export;
mod failure;
mod support;

use failure::Failure;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request as HttpRequest, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::sync::oneshot;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{auth_required, tool, Answer, LlmClient, Request, ToolResult, Toolkit};

use support::Answering;

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

/// The host's side of the sign-in: show where to go, then wait for the callback.
async fn sign_in(request: Request, waiting: Waiting, answering: Answering) -> Answer {
    let (tx, rx) = oneshot::channel();
    *waiting.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    let url = request.url.clone().unwrap_or_default();
    println!("{}\n  -> {url}", request.prompt);
    match answering {
        Answering::Decline => {
            println!("(TOOLNEXUS_AUTO_ANSWER=decline: not signing in)");
            return Answer::decline(request.id, "declined");
        }
        Answering::Approve => {
            println!("(TOOLNEXUS_AUTO_ANSWER=approve: visiting it myself)");
            if let Err(e) = reqwest::get(&url).await {
                println!("could not visit the sign-in page: {e}");
            }
        }
        Answering::Ask => {}
    }
    let gave_up = async {
        if answering == Answering::Ask {
            let prompt = "(open it in a browser; Enter or Ctrl-D gives up) ";
            support::read_line(prompt).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        signed_in = tokio::time::timeout(Duration::from_secs(120), rx) => match signed_in {
            Ok(Ok(user)) => {
                if answering == Answering::Ask {
                    println!(); // end the line the give-up prompt left open
                }
                println!("signed in as {user}");
                Answer::ok(request.id).with_data(json!({"user": user}))
            }
            _ => {
                println!("no sign-in arrived");
                Answer::decline(request.id, "expired")
            }
        },
        () = gave_up => {
            println!("gave up waiting for the sign-in");
            Answer::decline(request.id, "declined")
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let _export = export::start()?;
    let answering = Answering::from_env()?;
    let waiting: Waiting = Arc::default();
    let url = callback_server(waiting.clone()).await?;
    let _ = SIGN_IN_URL.set(url);

    // The model: a real endpoint from the environment, or the embedded scripted stub.
    let target = support::target(script).await?;
    let client = LlmClient::builder()
        .base_url(&target.base_url)
        .style(target.style)
        .model(&target.model)
        .api_key(&target.api_key)
        .wait_for(move |request: Request| sign_in(request, waiting.clone(), answering))
        .build()?;
    let tk = Toolkit::builder().tool(ReadInbox).build()?;

    let result = client.run("What is in my inbox?", &tk).await?;
    println!("final answer: {}", result.text);
    Ok(())
}
