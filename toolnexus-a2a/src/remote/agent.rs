//! The remote agent as a [`Tool`]: what it sends, and how its replies read as results.

use std::fmt;
use std::time::Duration;

use a2a::{
    methods, AgentCard, GetTaskRequest, Message, Part, Role, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, Task,
};
use serde_json::Value;
use toolnexus::round::RoundId;
use toolnexus::{Answer, BoxFuture, Tool, ToolContext, ToolResult, ToolSource};

use super::continuation;
use super::follow::Follow;
use super::reply::{self, Reply};
use super::round::Round;
use super::rpc::Rpc;
use super::stream::Events;
use crate::error::A2aError;

/// A remote A2A 1.0 agent, called as a [`Tool`]: the model sends it a message (the tool's
/// one argument, `message`), and its completed task's output is the tool's result.
///
/// Built from the agent's card ([`RemoteAgent::builder`], [`RemoteAgent::connect`]): the
/// tool's name and description are the card's unless overridden, and the calls go to the
/// card's interface of protocol 1.0 (JSON-RPC when it offers one, HTTP+JSON otherwise).
/// It reports [`ToolSource::A2a`] by its tool name (`source = "a2a:<agent>"` in metrics).
///
/// When the card declares `capabilities.streaming`, the message goes as
/// `SendStreamingMessage` (over HTTP+JSON `POST message:stream`) and the call follows the
/// task's events until it is over or waits for input, with no polling; artifacts sent in
/// chunks are put together as the agent's own store puts them, so a task reads the same
/// streamed or polled. A stream that ends early (a dropped connection, a restarted agent)
/// is followed again with `SubscribeToTask`, or, when that is refused, by polling: the
/// message is never sent twice. Otherwise the message goes as `SendMessage` and a task the
/// agent leaves working is polled with `GetTask` (see
/// [`poll_interval`](crate::RemoteAgentBuilder::poll_interval)). Either way the call ends
/// within the builder's [`timeout`](crate::RemoteAgentBuilder::timeout), and reads no
/// more than 16 MiB of one reply or one stream.
///
/// - A completed task's result is its artifacts' text (else its status message's); a
///   reply that is a message and no task is that message's text.
/// - A failed, rejected or canceled task is a tool error the model reads, with the status
///   message's text.
/// - A task that stops in `TASK_STATE_INPUT_REQUIRED` or `TASK_STATE_AUTH_REQUIRED`
///   suspends the call (see [`ToolResult::pending`]) with a request built from the status
///   message: its text is the prompt; an auth request is an `authorization` with the
///   message's url part as its URL; a data part with a `schema` makes it a form (`input`)
///   with that schema; otherwise it is an `approval` (or the `kind` the data part names).
///   The request's id carries the remote task's keys, so the re-run with the answer —
///   `wait_for`, or [`run_with_answer`](toolnexus::LlmClient::run_with_answer) on the
///   transcript in any process — sends the answer to the same remote task as a
///   continuation. When the agent asks again, the re-run suspends again.
///
/// Two rules of [`LlmClient`](toolnexus::LlmClient) shape what a person sees:
///
/// - A refused request never re-runs the tool, so the remote task is not told of a
///   decline: the model is (`declined/expired: …`), and the remote task keeps waiting
///   until the remote agent gives up on it.
/// - A call waits on one request once: when the remote agent asks a second question
///   after the answer, the loop ends the call `unresolved: <prompt>` for the model.
///
/// When the remote status message lists several requests (a toolnexus agent's parallel
/// calls), their prompts are asked as one, and the answer goes to the first of them.
///
/// ```no_run
/// use toolnexus::Toolkit;
/// use toolnexus_a2a::RemoteAgent;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let shop = RemoteAgent::builder("https://shop.example.com/a2a")
///     .bearer_auth("secret-token")
///     .timeout(std::time::Duration::from_secs(30))
///     .connect()
///     .await?;
/// let tk = Toolkit::builder().tool(shop).build()?;
/// # Ok(()) }
/// ```
pub struct RemoteAgent {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) schema: Value,
    pub(super) card: AgentCard,
    // The endpoint as shown: without the credentials its URL may carry.
    pub(super) endpoint_shown: String,
    pub(super) rpc: Rpc,
    pub(super) poll: Duration,
    // The card declares `capabilities.streaming`: a task is followed over its events.
    pub(super) streaming: bool,
}

// `builder` and `connect` are with the builder, which makes the agent.
impl RemoteAgent {
    /// The card the agent was built from.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The JSON-RPC endpoint calls go to (without any user name or password it carries).
    pub fn endpoint(&self) -> &str {
        &self.endpoint_shown
    }

    async fn call(&self, args: Value, answer: Option<Answer>) -> ToolResult {
        let message = match answer {
            Some(answer) => match Round::from_id(&answer.id) {
                Some(round) => continuation::message(&round, &answer),
                None => {
                    return ToolResult::error(format!(
                        "the answer `{}` answers no request of the remote agent `{}`",
                        answer.id, self.name
                    ))
                }
            },
            None => match args.get("message").and_then(Value::as_str) {
                Some(text) if !text.trim().is_empty() => {
                    Message::new(Role::User, vec![Part::text(text)])
                }
                _ => {
                    return ToolResult::error(format!(
                        "`{}` needs a `message`: the text to send the remote agent",
                        self.name
                    ))
                }
            },
        };
        let timeout = self.rpc.timeout;
        match tokio::time::timeout(timeout, self.exchange(message)).await {
            Ok(Ok(reply)) => reply::to_result(&self.name, reply),
            Ok(Err(error)) => ToolResult::error(error.to_string()),
            Err(_) => ToolResult::error(
                A2aError::Timeout {
                    url: self.endpoint().to_owned(),
                    timeout,
                }
                .to_string(),
            ),
        }
    }

    /// Sends `message` and follows its task until it is terminal or interrupted: over the
    /// agent's event stream when its card declares streaming, else by polling.
    async fn exchange(&self, message: Message) -> Result<Reply, A2aError> {
        let request = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        if self.streaming {
            return self.streamed(request).await;
        }
        match self.rpc.call(methods::SEND_MESSAGE, request).await? {
            SendMessageResponse::Message(message) => Ok(Reply::Message(message)),
            SendMessageResponse::Task(task) => self.poll(task).await,
        }
    }

    /// Polls `task` with `GetTask` until it is terminal or interrupted.
    async fn poll(&self, mut task: Task) -> Result<Reply, A2aError> {
        while !reply::settled(&task.status.state) {
            tokio::time::sleep(self.poll).await;
            let get = GetTaskRequest {
                id: task.id.clone(),
                history_length: Some(0),
                tenant: None,
            };
            task = self.rpc.call(methods::GET_TASK, get).await?;
        }
        Ok(Reply::Task(task))
    }

    /// Sends `request` with `SendStreamingMessage` and follows its task's events. A stream
    /// that ends before the task settles (a dropped connection, a restarted agent) is
    /// followed again with `SubscribeToTask` for as long as each subscription brings news,
    /// then by polling: the message itself is never sent twice.
    async fn streamed(&self, request: SendMessageRequest) -> Result<Reply, A2aError> {
        let mut follow = Follow::new(request.message.task_id.clone());
        let events = self
            .rpc
            .stream(methods::SEND_STREAMING_MESSAGE, request)
            .await?;
        if let Some(reply) = read(events, &mut follow).await?.reply {
            return Ok(reply);
        }
        let Some(id) = follow.id().map(str::to_owned) else {
            return Err(A2aError::NotJsonRpc {
                url: self.endpoint().to_owned(),
                method: methods::SEND_STREAMING_MESSAGE,
                reason: "the stream ended before it named a task".to_owned(),
            });
        };
        loop {
            let subscribe = SubscribeToTaskRequest {
                id: id.clone(),
                tenant: None,
            };
            let events = match self.rpc.stream(methods::SUBSCRIBE_TO_TASK, subscribe).await {
                Ok(events) => events,
                Err(e @ A2aError::Timeout { .. }) => return Err(e),
                // Refused (a task that ended meanwhile cannot be subscribed to) or out of
                // reach: the task is still there to be read.
                Err(e) => {
                    tracing::debug!(error = %e, "resubscribing failed; polling the task");
                    break;
                }
            };
            let read = read(events, &mut follow).await?;
            if let Some(reply) = read.reply {
                return Ok(reply);
            }
            // The first event of a subscription is the task as it stands: news is more.
            if read.events <= 1 {
                break;
            }
        }
        let task = match follow.into_task() {
            Some(task) => task,
            None => {
                let get = GetTaskRequest {
                    id,
                    history_length: Some(0),
                    tenant: None,
                };
                self.rpc.call(methods::GET_TASK, get).await?
            }
        };
        self.poll(task).await
    }
}

/// What one stream told: the reply, when the task settled on it, and how many events came.
struct Read {
    reply: Option<Reply>,
    events: usize,
}

/// Reads `events` into `follow` until the task settles or the stream ends.
async fn read(mut events: Events<'_>, follow: &mut Follow) -> Result<Read, A2aError> {
    let mut count = 0;
    while let Some(event) = events.next().await? {
        count += 1;
        if let Some(reply) = follow
            .apply(event)
            .map_err(|reason| events.malformed(reason))?
        {
            return Ok(Read {
                reply: Some(reply),
                events: count,
            });
        }
    }
    Ok(Read {
        reply: None,
        events: count,
    })
}

impl Tool for RemoteAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(self.call(args, ctx.answer))
    }

    fn source(&self) -> ToolSource<'_> {
        ToolSource::A2a { agent: &self.name }
    }
}

impl fmt::Debug for RemoteAgent {
    // The HTTP client holds the headers (keys, tokens): never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint_shown)
            .field("timeout", &self.rpc.timeout)
            .finish_non_exhaustive()
    }
}
