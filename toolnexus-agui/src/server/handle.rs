//! The POSTs, a run and a connect. A caller the identify hook does not know (unless
//! anonymous callers are allowed) is refused with 401 before the body is read (403 when
//! its token lacks a required scope), and a body that is no `RunAgentInput` with a 4xx;
//! each with a JSON body, before any stream opens. Anything else is answered with events:
//! the run's, or the thread as it stands, a refusal of what the thread cannot take (or of
//! a thread that is not the caller's) being its `RUN_ERROR`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{self, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolnexus_inbox::{Person, Refused};

use super::{run, Shared};
use crate::wire::{Event, RunAgentInput};

/// The longest thread or run id taken: ids are keys in the inbox, not documents.
const MAX_ID: usize = 256;

pub(crate) async fn run(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (caller, input) = match read(&shared, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let prompt = if input.resume.is_empty() {
        match prompt_of(&input) {
            Some(prompt) => Some(prompt),
            None => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_body",
                    "messages hold no user message with text to run, and there is no resume",
                )
            }
        }
    } else {
        None
    };
    let (tx, rx) = mpsc::channel(64);
    // Spawned, so a client that hangs up does not cut the run short: what it asked for is
    // carried out and kept either way.
    tokio::spawn(async move {
        match shared.claim(&input.thread_id) {
            Some(busy) => {
                let _busy = busy;
                run::drive(&shared, input, prompt, caller, &tx).await;
            }
            None => run::busy(&shared, &input, &caller, &tx).await,
        }
    });
    Sse::new(events(rx))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// `POST connect`: the thread of the body's `threadId` as it stands, for a front end that
/// reloads or opens it elsewhere, as the events of a run that runs nothing (AG-UI's
/// `connect`): the conversation and state snapshots, then the outcome its last run ended
/// with — its open interrupts, or success. Refused as a run is: the caller must be known,
/// and a thread not theirs to see is one that does not exist.
pub(crate) async fn connect(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (caller, input) = match read(&shared, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let (tx, rx) = mpsc::channel(8);
    tokio::spawn(async move { run::show(&shared, input, caller, &tx).await });
    Sse::new(events(rx))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Who sends `request` and the `RunAgentInput` its body is, or the response refusing it.
async fn read(shared: &Shared, request: Request) -> Result<(Person, RunAgentInput), Response> {
    // Who calls is settled from the headers alone, so an unknown caller's body is never
    // read when one must be known.
    let (parts, body) = request.into_parts();
    let caller = shared.caller(&parts).await.map_err(|r| refusal(&r))?;
    let body = match Bytes::from_request(Request::from_parts(parts, body), &()).await {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the body is over {} bytes", shared.max_body),
            ))
        }
        Err(e) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "invalid_body",
                e.body_text(),
            ))
        }
    };
    let input: RunAgentInput = serde_json::from_slice(&body).map_err(|e| {
        refuse(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            format!("the body is not a RunAgentInput: {e}"),
        )
    })?;
    for (name, id) in [("threadId", &input.thread_id), ("runId", &input.run_id)] {
        if id.trim().is_empty() || id.len() > MAX_ID {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "invalid_body",
                format!("{name} must be a non-blank string of at most {MAX_ID} bytes"),
            ));
        }
    }
    Ok((caller, input))
}

/// The text of the last user message: what a new run is asked.
fn prompt_of(input: &RunAgentInput) -> Option<String> {
    let last = input
        .messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    let text = match last.get("content")? {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({"error": {"code": code, "message": message.into()}});
    (status, axum::Json(body)).into_response()
}

/// HTTP 401 with `WWW-Authenticate: Bearer`, or 403 with `error="insufficient_scope"` and
/// the scopes required for a token that lacks them; the body says what to send, never
/// what was sent.
pub(crate) fn refusal(refused: &Refused) -> Response {
    let code = match refused {
        Refused::InsufficientScope(_) => "insufficient_scope",
        _ => "unauthenticated",
    };
    let mut response = refuse(refused.status(), code, refused.to_string());
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, refused.challenge(None));
    response
}

fn events(rx: mpsc::Receiver<Event>) -> impl Stream<Item = Result<sse::Event, Infallible>> {
    futures::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        // An event is plain serde data; its JSON cannot fail to be written.
        let data = serde_json::to_string(&event).unwrap_or_default();
        Some((Ok(sse::Event::default().data(data)), rx))
    })
}
