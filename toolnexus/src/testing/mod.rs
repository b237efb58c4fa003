//! A scripted LLM endpoint for offline tests (cargo feature `testing`).
//!
//! [`MockLlm`] is a real HTTP server on an ephemeral loopback port that answers each request
//! with the next scripted [`Reply`], in the wire format of the path that was hit:
//!
//! | path                                  | format                                   |
//! |---------------------------------------|------------------------------------------|
//! | `POST …/chat/completions`             | OpenAI chat completions (`chat.completion`) |
//! | `POST …/messages`                     | Anthropic messages (`message`)           |
//! | `POST …/responses`                    | OpenAI Responses (`response`)            |
//! | `POST …/models/{model}:generateContent` | Gemini (`GenerateContentResponse`)     |
//!
//! Asked for a stream (`"stream": true` in the body, or Gemini's
//! `…:streamGenerateContent?alt=sse`), the same reply goes out as server-sent events in that
//! provider's own events: OpenAI `chat.completion.chunk`s ending in `data: [DONE]` (plus a
//! usage chunk when `stream_options.include_usage` is true); Anthropic `message_start`,
//! `ping`, `content_block_start`/`_delta`/`_stop`, `message_delta` and `message_stop`;
//! Responses `response.created` … `response.completed`; Gemini one
//! `GenerateContentResponse` per event. Text streams word by word; each tool call's
//! arguments in fragments after a head carrying its id and name. [`Reply::chunked`]
//! additionally cuts the bytes at arbitrary points. [`Reply::with_reasoning`] adds the
//! reasoning state each provider sends and requires back. So one
//! script serves every client style, streamed or not. Point a client at [`MockLlm::base_url`]
//! (`http://127.0.0.1:PORT/v1`) and check afterwards what it sent with
//! [`MockLlm::requests`].
//!
//! The mock is as strict as the providers: a request they would refuse with a 400 — tool
//! results that do not answer the previous turn's calls by id and in order, reasoning state
//! that did not come back verbatim, a field the API does not have — gets that 400, in the
//! provider's words (see [`MockLlm::lenient`]).
//!
//! Failure is loud, never a hang: a request beyond the end of the script gets a 500 whose
//! error message says the script ran out; an unknown path a 404, a method other than POST a
//! 405, each naming what the mock serves.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use serde_json::{json, Value};
//! use toolnexus::testing::{MockLlm, Reply};
//!
//! let mock = MockLlm::start([
//!     Reply::tool_call("call_1", "get_weather", json!({"city": "Paris"})),
//!     Reply::text("It is sunny in Paris."),
//! ])
//! .await?;
//! let http = reqwest::Client::new();
//!
//! // First turn, OpenAI style: the model calls a tool.
//! let turn: Value = http
//!     .post(format!("{}/chat/completions", mock.base_url()))
//!     .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather?"}]}))
//!     .send()
//!     .await?
//!     .json()
//!     .await?;
//! let call = &turn["choices"][0]["message"]["tool_calls"][0];
//! assert_eq!(call["function"]["name"], "get_weather");
//! assert_eq!(call["function"]["arguments"], r#"{"city":"Paris"}"#);
//!
//! // Second turn, Anthropic style on the same script: the final text.
//! let turn: Value = http
//!     .post(format!("{}/messages", mock.base_url()))
//!     .json(&json!({"model": "claude-x", "max_tokens": 64, "messages": []}))
//!     .send()
//!     .await?
//!     .json()
//!     .await?;
//! assert_eq!(turn["content"][0]["text"], "It is sunny in Paris.");
//! assert_eq!(turn["stop_reason"], "end_turn");
//!
//! assert_eq!(mock.calls(), 2);
//! assert_eq!(mock.requests()[0].body["model"], "gpt-4o-mini");
//! # Ok(())
//! # }
//! ```
//!
//! For tests of approval flows, [`Approvers`] script the people who answer a run's
//! questions and record what they were asked; [`Approvers::drive`] and
//! [`Approvers::drive_inline`] take a run through every question to its end, durably (with
//! [`Drive::crash_after`] to crash it on the way) or inline; [`Driven::replay_from`]
//! replays a durable run up to one of its steps and goes on anew from there;
//! [`Driven::assert_golden`] compares a run with a golden file. The crate guide's chapter "Testing approval flows"
//! shows them together.
//!
//! The mock runs on the tokio runtime it was started on, current-thread or multi-thread.
//! Dropping it stops accepting connections; open connections finish the response they are
//! writing and close.

mod anthropic;
mod flows;
mod gemini;
mod issued;
mod openai;
mod recorded;
mod render;
mod reply;
mod responses;
mod server;
mod strict;
mod wire_parts;

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use flows::{
    assert_golden, Approvers, Ask, Decision, Drive, Driven, Question, Replay, RunStep, RunStepKind,
    UPDATE_GOLDEN,
};
pub use recorded::RecordedRequest;
pub use reply::Reply;

use server::{Counts, Responder, Shared};

/// A scripted OpenAI- and Anthropic-compatible HTTP server on `127.0.0.1`.
///
/// Replies are used in order, one per request to `…/chat/completions` or `…/messages`;
/// see the [module documentation](self) for an example.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
    // Dropping it tells every open connection to finish and close.
    _shutdown: watch::Sender<()>,
}

impl MockLlm {
    /// Starts a server that answers with `replies`, in order.
    ///
    /// Fails only when no loopback port can be bound.
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> io::Result<MockLlm> {
        Self::launch(replies.into_iter().collect(), None).await
    }

    /// Starts a server whose replies depend on the request: `reply` is called for each
    /// request once the queue (filled by [`push`](Self::push)) is empty.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// use serde_json::json;
    /// use toolnexus::testing::{MockLlm, Reply};
    ///
    /// // Call the tool until a tool result comes back, then answer.
    /// let mock = MockLlm::with_fn(|req| {
    ///     if req.messages().iter().any(|m| m["role"] == "tool") {
    ///         Reply::text("done")
    ///     } else {
    ///         Reply::tool_call("call_1", "lookup", json!({"q": "x"}))
    ///     }
    /// })
    /// .await?;
    /// # drop(mock);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn with_fn<F>(reply: F) -> io::Result<MockLlm>
    where
        F: Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    {
        Self::launch(VecDeque::new(), Some(Box::new(reply))).await
    }

    async fn launch(queue: VecDeque<Reply>, fallback: Option<Responder>) -> io::Result<MockLlm> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(queue, fallback));
        let (shutdown, connections_watch) = watch::channel(());
        let accept = tokio::spawn(server::accept_loop(
            listener,
            shared.clone(),
            connections_watch,
        ));
        Ok(MockLlm {
            addr,
            shared,
            accept,
            _shutdown: shutdown,
        })
    }

    /// Stops checking requests as the providers do: a lenient mock answers whatever it is
    /// sent, for tests of clients that send what a provider would refuse.
    ///
    /// By default the mock refuses with the provider's HTTP 400, before using a scripted
    /// reply: tool results that do not answer the previous turn's calls by id and in order,
    /// and reasoning state of an earlier turn (see [`Reply::with_reasoning`]) that did not
    /// come back verbatim.
    pub fn lenient(self) -> Self {
        self.shared
            .strict
            .store(false, std::sync::atomic::Ordering::Relaxed);
        self
    }

    /// Appends a reply to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.shared.state().queue.push_back(reply);
    }

    /// The base URL for a client of either style: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// A client builder aimed at this mock, OpenAI style: its [`base_url`](Self::base_url),
    /// the model `mock-model` and a placeholder key. Add what the test needs (`wait_for`,
    /// hooks, another [`style`](crate::LlmClientBuilder::style)) and build it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolnexus::testing::{MockLlm, Reply};
    /// use toolnexus::Toolkit;
    ///
    /// let model = MockLlm::start([Reply::text("Hi.")]).await?;
    /// let client = model.client().build()?;
    /// let result = client.run("Hello", &Toolkit::builder().build()?).await?;
    /// assert_eq!((result.text.as_str(), result.model.as_str()), ("Hi.", "mock-model"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn client(&self) -> crate::LlmClientBuilder {
        crate::LlmClient::builder()
            .base_url(self.base_url())
            .model("mock-model")
            .api_key("mock-key")
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order, including those to unknown paths.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.state().requests.clone()
    }

    /// Takes the requests recorded so far, leaving none stored: a stub serving for long (a
    /// benchmark, a soak, a demo server) calls it now and then so its memory stays flat.
    /// [`calls`](Self::calls) keeps counting every request.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolnexus::testing::{MockLlm, Reply};
    /// use toolnexus::{LlmClient, Toolkit};
    ///
    /// let model = MockLlm::start([Reply::text("one"), Reply::text("two")]).await?;
    /// let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// let tk = Toolkit::builder().build()?;
    /// client.run("first", &tk).await?;
    /// assert_eq!(model.take_requests().len(), 1);
    /// client.run("second", &tk).await?;
    /// assert_eq!(model.take_requests().len(), 1);
    /// assert_eq!(model.calls(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn take_requests(&self) -> Vec<RecordedRequest> {
        std::mem::take(&mut self.shared.state().requests)
    }

    /// How many requests were received since the stub started.
    pub fn calls(&self) -> usize {
        self.counts().calls
    }

    /// How many requests the client abandoned — closed the connection — before their reply
    /// was sent; with [`Reply::delayed`] this proves a timeout or cancellation really
    /// aborted the in-flight request.
    pub fn dropped(&self) -> usize {
        self.counts().dropped
    }

    /// How many scripted replies are still queued.
    pub fn remaining(&self) -> usize {
        self.shared.state().queue.len()
    }

    /// Waits until at least `n` requests were received, e.g. to cancel a run only once its
    /// request is in flight. Wrap it in `tokio::time::timeout` to bound the wait.
    pub async fn wait_for_calls(&self, n: usize) {
        self.wait_until(|c| c.calls >= n).await;
    }

    /// Waits until at least `n` requests were [`dropped`](Self::dropped): the server notices a
    /// closed connection shortly after the client gives up, not at the same instant.
    /// Wrap it in `tokio::time::timeout` to bound the wait.
    pub async fn wait_for_dropped(&self, n: usize) {
        self.wait_until(|c| c.dropped >= n).await;
    }

    fn counts(&self) -> Counts {
        *self.shared.counts.borrow()
    }

    async fn wait_until(&self, done: impl FnMut(&Counts) -> bool) {
        let mut counts = self.shared.counts.subscribe();
        // Errs only when the sender is gone, and `self.shared` owns it.
        let _ = counts.wait_for(done).await;
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl fmt::Debug for MockLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockLlm")
            .field("addr", &self.addr)
            .field("calls", &self.calls())
            .field("remaining", &self.remaining())
            .finish_non_exhaustive()
    }
}
