//! `SendStreamingMessage` and `SubscribeToTask`: server-sent events, each a
//! `StreamResponse` — the `Task` first, then its status updates — closing once the task is
//! over or waits for a person. Over JSON-RPC each event is a JSON-RPC response; over
//! HTTP+JSON it is the `StreamResponse` itself (an error, the binding's error payload).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use a2a::{A2AError, SendMessageRequest, SubscribeToTaskRequest, Task, TaskStatusUpdateEvent};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolnexus_inbox::Person;

use super::send::{accept, carry_out};
use super::shared::Shared;
use super::wire::{payload, response, Frame};

/// How often a stream looks at a task that changes elsewhere (a worker, another server):
/// changes made in this process wake it at once.
const POLL: Duration = Duration::from_millis(200);

/// `SendStreamingMessage`: the task as it is once the message is taken, then its changes
/// until it is over or waits again.
pub(crate) async fn send(
    shared: Arc<Shared>,
    rpc: Frame,
    request: SendMessageRequest,
    who: Person,
) -> Result<Response, A2AError> {
    let accepted = accept(&shared, &request.message, &who).await?;
    let id = accepted.id().to_owned();
    let (tx, rx) = mpsc::channel(16);
    let first = match shared.task(&id, None, &who).await {
        Ok(task) => task,
        Err(e) => {
            // What was accepted is carried out all the same; only the stream is lost.
            tokio::spawn(carry_out(shared, accepted));
            return Err(e);
        }
    };
    tokio::spawn(async move {
        let mut last = Status::of(&first);
        // A client gone before the first event changes nothing: the run still goes.
        let _ = send_event(&tx, &rpc, json!({ "task": first })).await;
        // The run goes on whether or not anyone still listens: what it asks is kept.
        carry_out(shared.clone(), accepted).await;
        let _ = watch_step(&shared, &id, &who, &mut last, &tx, &rpc).await;
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
    let first = shared.task(&id, None, &who).await?;
    if first.status.state.is_terminal() {
        return Err(A2AError::unsupported_operation(format!(
            "task `{id}` is over: there is nothing to subscribe to"
        )));
    }
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut last = Status::of(&first);
        if send_event(&tx, &rpc, json!({ "task": first })).await {
            return;
        }
        loop {
            let woken = shared.changed.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            // A subscriber came to see what the task does next: a wait it already showed
            // does not end the stream, a change to a new one does.
            if !matches!(
                watch_step(&shared, &id, &who, &mut last, &tx, &rpc).await,
                Step::Open
            ) {
                return;
            }
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = tx.closed() => return,
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

/// Reads the task as `who` sees it; sends a status update when it changed since `last`.
async fn watch_step(
    shared: &Shared,
    id: &str,
    who: &Person,
    last: &mut Status,
    tx: &mpsc::Sender<Event>,
    rpc: &Frame,
) -> Step {
    let task = match shared.task(id, None, who).await {
        Ok(task) => task,
        Err(e) => {
            let _ = tx.send(event(rpc, Err(e))).await;
            return Step::Closed;
        }
    };
    let now = Status::of(&task);
    if now == *last {
        return Step::Open;
    }
    *last = now;
    let update = TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: None,
    };
    if send_event(tx, rpc, json!({ "statusUpdate": update })).await {
        return Step::Closed;
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
async fn send_event(tx: &mpsc::Sender<Event>, rpc: &Frame, result: Value) -> bool {
    tx.send(event(rpc, Ok(result))).await.is_err()
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
