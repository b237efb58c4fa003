//! The endpoint: an axum router serving an [`LlmClient`] and its [`Toolkit`] over AG-UI,
//! its threads kept by a [`toolnexus_inbox::Inbox`].
//!
//! One module per concept: the POST and its refusals before the stream (`handle`), a
//! thread as the inbox keeps it (`thread`), a run and a resume as events (`run`), the
//! events a run's progress and transcript are (`events`), and what a waiting thread is
//! shown as (`snapshot`).

mod capabilities;
mod delta;
mod events;
mod handle;
mod run;
mod snapshot;
mod thread;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{
    Admission, Door, Identify, InFlight, InFlightGuard, Inbox, Person, Refused, Starter,
};

/// An agent served over AG-UI: built by [`AguiServer::builder`], served by
/// [`router`](Self::router), which a host mounts under a path of its own app.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // A front end's runs, on a client that needs no model until one is asked.
/// let agent = toolnexus::LlmClient::builder().model("m").api_key("k").build()?;
/// let threads = toolnexus_inbox::Inbox::builder("sqlite::memory:").agent("web").open().await?;
/// let endpoint = toolnexus_agui::AguiServer::builder(agent, toolnexus::Toolkit::empty(), threads)
///     // Everyone who reaches it is one caller nobody signed in as.
///     .responder(toolnexus_inbox::Person::stand_in("web front end"))
///     .build();
/// let app = axum::Router::<()>::new().nest("/agent", endpoint.router());
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
        // The client and the inbox say nothing a reader of a server needs, and the
        // client's Debug is kept terse for its key's sake.
        // The identify hook may hold credentials: only whether there is one is shown.
        let Shared {
            max_body,
            admission,
            ..
        } = &*self.shared;
        write!(
            f,
            "AguiServer {{ max_body: {max_body}, admission: {admission:?}, .. }}"
        )
    }
}

/// The most bytes a request body may have unless told otherwise: every door's
/// ([`toolnexus_inbox::DEFAULT_MAX_BODY`]).
pub use toolnexus_inbox::DEFAULT_MAX_BODY;

/// The label of the stand-in the inbox records as answering what AG-UI clients resume
/// with, unless told otherwise ([`AguiServerBuilder::responder`]): a
/// [`Person::stand_in`], which never counts toward a quorum of several people and is
/// never delegated to.
pub const DEFAULT_RESPONDER: &str = "ag-ui client";

/// What every request shares.
pub(crate) struct Shared {
    pub(crate) client: LlmClient,
    pub(crate) tk: Toolkit,
    pub(crate) inbox: Inbox,
    /// Who a request comes from: the host's sign-in, or the responder without one.
    pub(crate) admission: Admission,
    /// Whose a thread kept before starters were is: on an endpoint without an identify
    /// hook every caller is the responder, so theirs; behind a hook nobody can say.
    pub(crate) unowned: Option<Starter>,
    pub(crate) max_body: usize,
    /// What the agent says of itself in its capabilities.
    pub(crate) identity: capabilities::Identity,
    /// The threads a run goes on for in this process: a second run on one waits its turn
    /// as a refusal, not as a race.
    busy: InFlight,
}

impl Shared {
    /// Who sent a request with `parts`, or why the endpoint refuses it.
    pub(crate) async fn caller(
        &self,
        parts: &axum::http::request::Parts,
    ) -> Result<Person, Refused> {
        self.admission.admit(parts).await
    }

    /// Holds `thread` busy until the guard drops — when its run ends, fails, panics or is
    /// aborted; `None` when it already is.
    pub(crate) fn claim(&self, thread: &str) -> Option<InFlightGuard> {
        self.busy.enter(thread)
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
            identity: capabilities::Identity::default(),
            admission: Admission::new(Person::stand_in(DEFAULT_RESPONDER)),
        }
    }

    /// The router: `POST /` takes a `RunAgentInput` and answers with the run's events as
    /// server-sent events; `POST /connect` takes one naming a thread and answers with the
    /// thread as it stands (its snapshots, then the interrupts it waits on or success),
    /// running nothing, for a front end that reloads; `GET /capabilities` answers what the endpoint can do, the
    /// protocol's `AgentCapabilities` (its tools, interrupts and edits, snapshots and
    /// deltas, reasoning), to the callers a run would be served to. Mount it where the
    /// front end's `HttpAgent` URL points.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", post(handle::run))
            .route("/capabilities", get(capabilities::capabilities))
            .route("/connect", post(handle::connect))
            .layer(DefaultBodyLimit::max(self.shared.max_body))
            .with_state(self.shared.clone())
    }

    /// The inbox the threads are kept in.
    pub fn inbox(&self) -> &Inbox {
        &self.shared.inbox
    }
}

/// The options of an [`AguiServer`].
pub struct AguiServerBuilder {
    client: LlmClient,
    tk: Toolkit,
    inbox: Inbox,
    max_body: usize,
    identity: capabilities::Identity,
    admission: Admission,
}

impl std::fmt::Debug for AguiServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The identify hook may hold credentials: only whether there is one is shown.
        f.debug_struct("AguiServerBuilder")
            .field("max_body", &self.max_body)
            .field("admission", &self.admission)
            .finish_non_exhaustive()
    }
}

impl AguiServerBuilder {
    /// Who a request comes from, told by `hook` (the host's sign-in, or
    /// [`BearerTokens`](toolnexus_inbox::BearerTokens)); it replaces
    /// [`responder`](Self::responder). A request from nobody the hook knows gets HTTP 401
    /// (a JSON error body and `WWW-Authenticate: Bearer`) before its body is read or any
    /// stream starts, unless [`allow_anonymous`](Self::allow_anonymous). A thread is its
    /// starter's: a run on it from anyone else is refused as `unknown_thread`, as for a
    /// thread that does not exist, unless they may answer what it waits on, and then they
    /// may resume it and see the question, not the transcript. A resume's answers are
    /// recorded as the identified person, and refused (`not_allowed`, the interrupt left
    /// open) when the inbox does not let them answer; an interrupt shows a gate's tool,
    /// arguments and their schema only to a caller who may answer it.
    pub fn identify(mut self, hook: impl Identify) -> Self {
        self.admission = self.admission.identify(hook);
        self
    }

    /// Lets a caller the [`identify`](Self::identify) hook does not know through instead
    /// of refusing them with 401, as a [`Person::stand_in`] labelled like the
    /// [`responder`](Self::responder): all such callers are one stand-in, who shares the
    /// threads they start, answers only where anyone may, and never counts toward a
    /// quorum of several people. Without a hook it changes nothing: every caller is the
    /// responder.
    pub fn allow_anonymous(mut self) -> Self {
        self.admission = self.admission.allow_anonymous(true);
        self
    }

    /// Refuses every request when there is no [`identify`](Self::identify) hook: nobody is
    /// known, so the endpoint stays closed rather than open by mistake. With a hook,
    /// callers it does not know are refused already (unless
    /// [`allow_anonymous`](Self::allow_anonymous)); this changes nothing there.
    pub fn require_identity(mut self) -> Self {
        self.admission = self.admission.require_identity(true);
        self
    }

    /// Who the inbox records as having answered the interrupts AG-UI clients resume when
    /// no [`identify`](Self::identify) hook is set (default: the stand-in
    /// [`DEFAULT_RESPONDER`]): everyone who reaches this endpoint is this person, and
    /// every thread is theirs. The audit trail names them, and where the inbox limits who
    /// may answer a request, a resume from anyone else is refused (`not_allowed`) and the
    /// interrupt stays open. Give a [`Person::stand_in`] unless one person alone reaches
    /// this endpoint.
    pub fn responder(mut self, who: impl Into<Person>) -> Self {
        self.admission = self.admission.responder(who);
        self
    }

    /// The most bytes a request body may have (default [`DEFAULT_MAX_BODY`]); a larger
    /// one is refused with `413` before anything is read into a run.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes.max(1024);
        self
    }

    /// How the agent names and describes itself to front ends that discover what it can
    /// do (`GET capabilities`; by default it is called "toolnexus agent", with no
    /// description).
    pub fn describe(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.identity = capabilities::Identity {
            name: name.into(),
            description: Some(description.into()).filter(|d| !d.trim().is_empty()),
        };
        self
    }

    /// The server; a warning is logged naming the tools whose approvals anyone may answer
    /// ([`Inbox::unrestricted_gates`]).
    pub fn build(self) -> AguiServer {
        self.inbox.unrestricted_gates(Door::AGUI, &self.tk);
        // A thread kept before starters were: where every caller is the responder, theirs.
        let unowned =
            (!self.admission.identifies()).then(|| Starter::of(self.admission.responder_person()));
        AguiServer {
            shared: Arc::new(Shared {
                client: self.client,
                tk: self.tk,
                inbox: self.inbox,
                admission: self.admission,
                unowned,
                max_body: self.max_body,
                identity: self.identity,
                busy: InFlight::new(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use toolnexus::{LlmClient, Toolkit};
    use toolnexus_inbox::{InFlight, Inbox};

    use super::AguiServer;

    async fn server() -> AguiServer {
        let client = LlmClient::builder()
            .model("m")
            .api_key("k")
            .build()
            .expect("a client");
        let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
        AguiServer::builder(client, Toolkit::empty(), inbox).build()
    }

    #[tokio::test]
    async fn a_thread_whose_run_panicked_is_free_for_the_next_request() {
        let server = server().await;
        let shared = server.shared.clone();
        let run = tokio::spawn(async move {
            let _busy = shared.claim("t").expect("free");
            panic!("a run that panics while its thread is held");
        });
        assert!(run.await.expect_err("the run panicked").is_panic());
        let next = server.shared.claim("t").expect("free for the next request");
        assert!(server.shared.claim("t").is_none(), "busy while it runs");
        drop(next);
        assert!(server.shared.claim("t").is_some());
    }

    /// Panics when dropped the first time: the one way to panic while the set is locked,
    /// which is when a value attached to an id is replaced or leaves with its id.
    struct Bomb(Arc<AtomicBool>);

    impl Drop for Bomb {
        fn drop(&mut self) {
            if !self.0.swap(true, Ordering::SeqCst) {
                panic!("a panic while the busy set is locked");
            }
        }
    }

    #[test]
    fn a_thread_whose_guard_saw_a_poisoned_lock_is_free_for_the_next_request() {
        // The server's set of threads is an `InFlight`; one whose lock a panic poisoned.
        let busy: InFlight<Bomb> = InFlight::new();
        let fired = Arc::new(AtomicBool::new(false));
        let guard = busy.enter("t").expect("free");
        assert!(busy.attach("t", Bomb(fired.clone())));
        let (poisoner, also) = (busy.clone(), fired.clone());
        // The old value's drop panics under the lock; the new one is stored all the same.
        let blast = std::thread::spawn(move || poisoner.attach("t", Bomb(also)));
        assert!(blast.join().is_err(), "the lock was poisoned by a panic");
        assert!(
            busy.enter("t").is_none(),
            "still busy while its guard lives"
        );
        drop(guard);
        assert!(!busy.contains("t"), "its guard freed it despite the poison");
        assert!(busy.enter("t").is_some(), "free for the next request");
    }
}
