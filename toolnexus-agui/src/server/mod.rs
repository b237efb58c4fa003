//! The endpoint: an axum router serving an [`LlmClient`] and its [`Toolkit`] over AG-UI,
//! its threads kept by a [`toolnexus_inbox::Inbox`].
//!
//! One module per concept: the POST and its refusals before the stream (`handle`), a
//! thread as the inbox keeps it (`thread`), a run and a resume as events (`run`), and
//! the events a run's progress and transcript are (`events`).

mod events;
mod handle;
mod run;
mod thread;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use axum::Router;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{Inbox, Person};

/// The most bytes a request body may have unless told otherwise: room for a long
/// conversation, bounded so one request cannot take the server's memory.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// Who the inbox records as answering what AG-UI clients resume with, unless told
/// otherwise ([`AguiServerBuilder::responder`]).
pub const DEFAULT_RESPONDER: &str = "ag-ui client";

/// An agent served over AG-UI: built by [`AguiServer::builder`], served by
/// [`router`](Self::router).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus::{LlmClient, Toolkit};
/// use toolnexus_agui::AguiServer;
/// use toolnexus_inbox::Inbox;
///
/// let client = LlmClient::builder().model("m").api_key("k").build()?;
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// let server = AguiServer::builder(client, Toolkit::empty(), inbox).build();
/// let app: axum::Router = axum::Router::new().nest("/agent", server.router());
/// # drop(app);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct AguiServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AguiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiServer")
            .field("max_body", &self.shared.max_body)
            .finish_non_exhaustive()
    }
}

/// What every request shares.
pub(crate) struct Shared {
    pub(crate) client: LlmClient,
    pub(crate) tk: Toolkit,
    pub(crate) inbox: Inbox,
    pub(crate) responder: Person,
    pub(crate) max_body: usize,
    /// The threads a run goes on for in this process: a second run on one waits its turn
    /// as a refusal, not as a race.
    busy: Mutex<HashSet<String>>,
}

impl Shared {
    /// Marks `thread` busy until the guard drops; `None` when it already is.
    pub(crate) fn claim(self: &Arc<Self>, thread: &str) -> Option<Busy> {
        let mut busy = self.busy.lock().ok()?;
        busy.insert(thread.to_owned()).then(|| Busy {
            shared: self.clone(),
            thread: thread.to_owned(),
        })
    }
}

/// A thread's run in this process; the thread is free again once dropped.
pub(crate) struct Busy {
    shared: Arc<Shared>,
    thread: String,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Ok(mut busy) = self.shared.busy.lock() {
            busy.remove(&self.thread);
        }
    }
}

impl AguiServer {
    /// A server for `client` with the tools of `tk`, keeping its threads in `inbox`.
    /// Resumes happen in the request that carries them. A run whose requests were
    /// answered elsewhere (the inbox page, A2A) is resumed by the thread's next resume,
    /// or by an [`Inbox::worker`] with the same client and toolkit beside the server.
    pub fn builder(client: LlmClient, tk: Toolkit, inbox: Inbox) -> AguiServerBuilder {
        AguiServerBuilder {
            client,
            tk,
            inbox,
            max_body: DEFAULT_MAX_BODY,
            responder: Person::new(DEFAULT_RESPONDER),
        }
    }

    /// The router: `POST /` takes a `RunAgentInput` and answers with the run's events as
    /// server-sent events. Mount it where the front end's `HttpAgent` URL points.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", post(handle::run))
            .layer(DefaultBodyLimit::max(self.shared.max_body))
            .with_state(self.shared.clone())
    }

    /// The inbox the threads are kept in.
    pub fn inbox(&self) -> &Inbox {
        &self.shared.inbox
    }
}

/// The options of an [`AguiServer`].
#[derive(Debug)]
pub struct AguiServerBuilder {
    client: LlmClient,
    tk: Toolkit,
    inbox: Inbox,
    max_body: usize,
    responder: Person,
}

impl AguiServerBuilder {
    /// The most bytes a request body may have (default [`DEFAULT_MAX_BODY`]); a larger
    /// one is refused with `413` before anything is read into a run.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes.max(1024);
        self
    }

    /// Who the inbox records as having answered the interrupts AG-UI clients resume
    /// (default [`DEFAULT_RESPONDER`]): the audit trail names them, and where the inbox
    /// limits who may answer a request, a resume from anyone else is refused
    /// (`not_allowed`) and the interrupt stays open.
    pub fn responder(mut self, who: impl Into<Person>) -> Self {
        self.responder = who.into();
        self
    }

    /// The server.
    pub fn build(self) -> AguiServer {
        AguiServer {
            shared: Arc::new(Shared {
                client: self.client,
                tk: self.tk,
                inbox: self.inbox,
                responder: self.responder,
                max_body: self.max_body,
                busy: Mutex::new(HashSet::new()),
            }),
        }
    }
}
