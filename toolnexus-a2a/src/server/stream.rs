//! `SendStreamingMessage` and `SubscribeToTask`: server-sent events, each a
//! `StreamResponse` — the `Task` first, then its status updates — closing once the task is
//! over or waits for a person. A caller watches a task only as far as they may see it,
//! and only so many streams are open at once (`streams`). Over JSON-RPC each event is a
//! JSON-RPC response; over HTTP+JSON it is the `StreamResponse` itself (an error, the
//! binding's error payload).

use std::convert::Infallible;
use std::sync::Arc;

use a2a::{A2AError, SendMessageRequest, SubscribeToTaskRequest, Task};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolnexus_inbox::{Person, Sight};

use super::send::{accept, carry_out};
use super::shared::Shared;
use super::watch;
use super::wire::{payload, response, Frame};

/// `SendStreamingMessage`: the task as it is once the message is taken, then its changes
/// until it is over or waits again.
pub(crate) async fn send(
    shared: Arc<Shared>,
    rpc: Frame,
    request: SendMessageRequest,
    who: Person,
) -> Result<Response, A2AError> {
    let push = request
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.clone());
    super::push::check_inline(&shared, push.as_ref())?;
    // Counted before the message is taken: a stream refused changes nothing.
    let slot = shared.streams.open(&who)?;
    let accepted = accept(&shared, &request.message, &who).await?;
    let id = accepted.id().to_owned();
    super::send::kept_push(&shared, &id, push, &who).await;
    let sight = accepted.sight();
    let (tx, rx) = mpsc::channel(16);
    let first = match shared.task_as(&id, None, &who, sight).await {
        Ok(task) => task,
        Err(e) => {
            // What was accepted is carried out all the same; only the stream is lost.
            tokio::spawn(carry_out(shared, accepted));
            return Err(e);
        }
    };
    let watch = Watch {
        shared: shared.clone(),
        id,
        who,
        sight,
        rpc,
        tx,
    };
    tokio::spawn(async move {
        let _slot = slot;
        let mut last = Status::of(&first);
        // A client gone before the first event changes nothing: the run still goes.
        let _ = watch.send(json!({ "task": first })).await;
        // The run goes on whether or not anyone still listens: what it asks is kept.
        carry_out(shared, accepted).await;
        let _ = watch.step(&mut last).await;
    });
    Ok(sse(rx))
}

/// `SubscribeToTask`: the task as it is, then its changes until it is over or waits on
/// something new.
pub(crate) async fn subscribe(
    shared: Arc<Shared>,
    rpc: Frame,
    request: SubscribeToTaskRequest,
    who: Person,
) -> Result<Response, A2AError> {
    let id = request.id;
    let seen = shared.seen(&id, &who).await?;
    if seen.view.is_terminal() {
        return Err(A2AError::unsupported_operation(format!(
            "task `{id}` is over: there is nothing to subscribe to"
        )));
    }
    let slot = shared.streams.open(&who)?;
    let sight = seen.sight;
    let first = shared.shown(&id, &seen, None, &who);
    let (tx, rx) = mpsc::channel(16);
    let watch = Watch {
        shared,
        id,
        who,
        sight,
        rpc,
        tx,
    };
    tokio::spawn(async move {
        let _slot = slot;
        let mut last = Status::of(&first);
        if watch.send(json!({ "task": first })).await {
            return;
        }
        let mut changes = watch::follow(&watch.shared, &watch.id);
        loop {
            // A subscriber came to see what the task does next: a wait it already showed
            // does not end the stream, a change to a new one does.
            if !matches!(watch.step(&mut last).await, Step::Open) {
                return;
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = watch.tx.closed() => return,
            }
        }
    });
    Ok(sse(rx))
}

/// A task's state and what it waits on: a change of either is a status update.
#[derive(PartialEq)]
struct Status {
    state: a2a::TaskState,
    message: Option<String>,
}

impl Status {
    fn of(task: &Task) -> Status {
        Status {
            state: task.status.state.clone(),
            message: task.status.message.as_ref().map(|m| m.message_id.clone()),
        }
    }
}

enum Step {
    /// Nothing final yet: watch on.
    Open,
    /// A change to a final state was sent.
    Final,
    /// The client is gone, or the task cannot be read.
    Closed,
}

/// One stream's task, its caller and where its events go.
struct Watch {
    shared: Arc<Shared>,
    id: String,
    who: Person,
    /// How much of the task the caller was granted when the stream opened.
    sight: Sight,
    rpc: Frame,
    tx: mpsc::Sender<Event>,
}

impl Watch {
    /// Reads the task as the caller sees it; sends a status update when it changed since
    /// `last`.
    async fn step(&self, last: &mut Status) -> Step {
        let read = self.shared.task_as(&self.id, None, &self.who, self.sight);
        let task = match read.await {
            Ok(task) => task,
            Err(e) => {
                let _ = self.tx.send(event(&self.rpc, Err(e))).await;
                return Step::Closed;
            }
        };
        let now = Status::of(&task);
        if now == *last {
            return Step::Open;
        }
        *last = now;
        for event in super::events::change_events(&task) {
            if self.send(event).await {
                return Step::Closed;
            }
        }
        let state = &task.status.state;
        let is_final = state.is_terminal()
            || matches!(
                state,
                a2a::TaskState::InputRequired | a2a::TaskState::AuthRequired
            );
        if is_final {
            Step::Final
        } else {
            Step::Open
        }
    }

    /// Sends one event; `true` when the client is gone.
    async fn send(&self, result: Value) -> bool {
        self.tx.send(event(&self.rpc, Ok(result))).await.is_err()
    }
}

fn event(frame: &Frame, result: Result<Value, A2AError>) -> Event {
    let body = match (frame, result) {
        (Frame::JsonRpc(id), result) => serde_json::to_string(&response(id.clone(), result)),
        (Frame::Rest, Ok(value)) => serde_json::to_string(&value),
        (Frame::Rest, Err(e)) => serde_json::to_string(&payload(&e)),
    };
    Event::default().data(body.unwrap_or_default())
}

fn sse(rx: mpsc::Receiver<Event>) -> Response {
    Sse::new(events(rx))
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn events(rx: mpsc::Receiver<Event>) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|event| (Ok(event), rx))
    })
}
