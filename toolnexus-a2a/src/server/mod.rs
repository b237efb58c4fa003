//! The A2A 1.0 server: an axum router serving an [`LlmClient`] and its [`Toolkit`] as an
//! agent over the JSON-RPC binding, its tasks kept by a [`toolnexus_inbox::Inbox`].
//!
//! One module per concept: the agent card (`card`), the JSON-RPC envelope and dispatch
//! (`jsonrpc`), the HTTP+JSON binding's paths (`rest`), what both bindings share (`wire`),
//! `SendMessage` (`send`) and its streaming form and `SubscribeToTask` (`stream`),
//! `GetTask` and `CancelTask` (`tasks`), `ListTasks` (`list`), where the card says tokens
//! come from (`security`), the task as the inbox keeps it (`record`,
//! `view`), how many streams are open (`streams`), what the handlers share (`shared`),
//! and the protocol's errors (`errors`). The bindings read the
//! JSON; the operations take the protocol's typed requests.

mod card;
mod errors;
mod events;
mod followers;
mod identity;
mod jsonrpc;
mod list;
mod push;
mod pushed;
mod record;
mod rest;
mod security;
mod send;
mod shaping;
mod shared;
mod stream;
mod streams;
mod tasks;
mod view;
mod watch;
mod wire;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::Notify;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{Admission, Door, Identify, InFlight, Inbox, Person, Starter};

pub use self::security::CardSecurity;
use self::shared::Shared;

use crate::error::A2aError;

/// The most bytes a request body may have unless told otherwise: every door's
/// ([`toolnexus_inbox::DEFAULT_MAX_BODY`]).
pub use toolnexus_inbox::DEFAULT_MAX_BODY;

/// The label of the stand-in the inbox records as answering through A2A unless told
/// otherwise ([`A2aServerBuilder::responder`]): a [`Person::stand_in`], which never counts
/// toward a quorum of several people and is never delegated to.
pub const DEFAULT_RESPONDER: &str = "a2a client";

/// How many event streams (`SubscribeToTask`, `SendStreamingMessage`) are open at once in
/// all, unless told otherwise ([`A2aServerBuilder::max_subscriptions`]).
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// How many event streams one identified caller has open at once, unless told otherwise
/// ([`A2aServerBuilder::max_subscriptions_per_caller`]).
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_CALLER: usize = 16;

/// An agent served over A2A: built by [`A2aServer::builder`], served by
/// [`router`](Self::router).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus::{LlmClient, Toolkit};
/// use toolnexus_a2a::A2aServer;
/// use toolnexus_inbox::{Inbox, Person};
///
/// let client = LlmClient::builder().model("m").api_key("k").build()?;
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// let server = A2aServer::builder(client, Toolkit::empty(), inbox)
///     .name("Shop")
///     .description("Buys things once a person approves")
///     .url("http://127.0.0.1:8080/")
///     .build()?;
/// let app: axum::Router = server.router();
/// # drop(app);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct A2aServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("name", &self.shared.card.name)
            .field("url", &self.shared.card.url)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// A server for `client` with the tools of `tk`, keeping its tasks in `inbox`. Resume
    /// happens in the request that answers; run an [`Inbox::worker`] with the same client
    /// and toolkit beside it so that answers given on the inbox page resume too.
    pub fn builder(client: LlmClient, tk: Toolkit, inbox: Inbox) -> A2aServerBuilder {
        A2aServerBuilder {
            client,
            tk,
            inbox,
            name: "toolnexus agent".to_owned(),
            description: "An agent whose tools may wait for a person".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            url: None,
            max_body: DEFAULT_MAX_BODY,
            admission: Admission::new(Person::stand_in(DEFAULT_RESPONDER)),
            show_tool_calls: false,
            push_notifications: false,
            signer: None,
            security: None,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            max_subscriptions_per_caller: DEFAULT_MAX_SUBSCRIPTIONS_PER_CALLER,
            shaping: shaping::Shaping::default(),
        }
    }

    /// The router: `GET /.well-known/agent-card.json`, JSON-RPC at `POST /`, and the
    /// HTTP+JSON binding beside it (`POST /message:send`, `POST /message:stream`,
    /// `GET /tasks`, `GET /tasks/{id}`, `POST /tasks/{id}:cancel`,
    /// `GET|POST /tasks/{id}:subscribe`).
    /// Mount it at the root of the URL given to [`A2aServerBuilder::url`]. With
    /// [`A2aServerBuilder::identify`], every route but the card's answers a caller it
    /// cannot identify with HTTP 401 before reading the request's body (unless
    /// [`A2aServerBuilder::allow_anonymous`]).
    pub fn router(&self) -> Router {
        // The card is served from what it says alone.
        let card = Router::new()
            .route(card::PATH, get(card::show))
            .with_state(self.shared.card.clone());
        Router::new()
            .route("/", post(jsonrpc::handle))
            .route("/message:send", post(rest::send_message))
            .route("/message:stream", post(rest::stream_message))
            .route("/tasks", get(rest::list_tasks))
            .route("/tasks/{id}", get(rest::get_task).post(rest::post_task))
            .route(
                "/tasks/{id}/pushNotificationConfigs",
                get(rest::list_push_configs).post(rest::create_push_config),
            )
            .route(
                "/tasks/{id}/pushNotificationConfigs/{config}",
                get(rest::push_config).delete(rest::push_config),
            )
            .route("/extendedAgentCard", get(rest::extended_card))
            // Layered on every route but the card's, merged after it, so the card stays public.
            .route_layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                identity::identified,
            ))
            .merge(card)
            .layer(DefaultBodyLimit::max(self.shared.card.max_body))
            .with_state(self.shared.clone())
    }

    /// The inbox the tasks are kept in.
    pub fn inbox(&self) -> &Inbox {
        &self.shared.inbox
    }
}

/// The options of an [`A2aServer`].
pub struct A2aServerBuilder {
    client: LlmClient,
    tk: Toolkit,
    inbox: Inbox,
    name: String,
    description: String,
    version: String,
    url: Option<String>,
    max_body: usize,
    admission: Admission,
    show_tool_calls: bool,
    push_notifications: bool,
    signer: Option<Arc<crate::CardSigner>>,
    security: Option<CardSecurity>,
    max_subscriptions: usize,
    max_subscriptions_per_caller: usize,
    shaping: shaping::Shaping,
}

impl std::fmt::Debug for A2aServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The sign-in hook may hold credentials: only whether there is one is shown.
        f.debug_struct("A2aServerBuilder")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("version", &self.version)
            .field("url", &self.url)
            .field("max_body", &self.max_body)
            .field("admission", &self.admission)
            .field("show_tool_calls", &self.show_tool_calls)
            .field("push_notifications", &self.push_notifications)
            .field("signer", &self.signer)
            .field("security", &self.security)
            .field("max_subscriptions", &self.max_subscriptions)
            .field(
                "max_subscriptions_per_caller",
                &self.max_subscriptions_per_caller,
            )
            .field("shaping", &self.shaping)
            .finish_non_exhaustive()
    }
}

impl A2aServerBuilder {
    /// The agent's name on its card.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// What the agent does, on its card.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The agent's version on its card (default: this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The public URL the router is served at, which the card names as the JSON-RPC
    /// endpoint (e.g. `https://agents.example.com/shop/`). Without it the card names the
    /// root of the host the card was fetched from.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// The most bytes a request body may have (default [`DEFAULT_MAX_BODY`]); a larger one
    /// is refused with a JSON-RPC error before anything is read into a task.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes.max(1024);
        self
    }

    /// Who the inbox records as having answered the requests A2A clients answer when no
    /// [`identify`](Self::identify) hook is set (default: the stand-in
    /// [`DEFAULT_RESPONDER`]): everyone who reaches this door is this person, and every
    /// task is theirs to read and cancel. The audit trail names them, and where the inbox
    /// limits who may answer a request (its responders), only an allowed person's answers
    /// are taken; a continuation from anyone else is refused and the task keeps waiting.
    /// Give a [`Person::stand_in`] unless one person alone reaches this door.
    pub fn responder(mut self, who: impl Into<Person>) -> Self {
        self.admission = self.admission.responder(who);
        self
    }

    /// Requires every caller to be identified by `hook` (the host's sign-in, or
    /// [`BearerTokens`](toolnexus_inbox::BearerTokens)): a request it identifies nobody
    /// in gets HTTP 401 with `WWW-Authenticate: Bearer realm="<name>"` before anything is
    /// read into a task, unless [`allow_anonymous`](Self::allow_anonymous), and the card
    /// declares an HTTP bearer security scheme (the card itself stays public).
    /// A task is its starter's: reading, watching, continuing and cancelling it are theirs
    /// and its approvers', and anyone else is told there is no such task. Continuations
    /// are recorded as the identified person, and refused when the inbox does not let
    /// them answer; a waiting task shows a gate's tool and arguments only to callers who
    /// may answer it. It replaces [`responder`](Self::responder).
    pub fn identify(mut self, hook: impl Identify) -> Self {
        self.admission = self.admission.identify(hook);
        self
    }

    /// Declares on the card where callers get the bearer token the
    /// [`identify`](Self::identify) hook checks, instead of a bare HTTP bearer scheme: an
    /// OpenID provider or an OAuth 2.0 client-credentials token endpoint, with the scopes a
    /// token must hold as the card's security requirement (A2A 1.0 `securitySchemes`,
    /// `securityRequirements`). Declaring it without a hook is refused at
    /// [`build`](Self::build): the card would promise a check nobody makes.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = toolnexus::LlmClient::builder().model("m").api_key("k").build()?;
    /// # let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// use toolnexus_a2a::{A2aServer, CardSecurity};
    /// use toolnexus_inbox::BearerTokens;
    ///
    /// // In production the hook is `OidcTokens` of the same provider (feature `oidc`).
    /// let tokens = BearerTokens::new();
    /// let server = A2aServer::builder(client, toolnexus::Toolkit::empty(), inbox)
    ///     .identify(tokens)
    ///     .card_security(
    ///         CardSecurity::open_id_connect("https://login.example.com/realms/staff")
    ///             .scope("agent:call", "Call the agent"),
    ///     )
    ///     .build()?;
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn card_security(mut self, security: CardSecurity) -> Self {
        self.security = Some(security);
        self
    }

    /// Lets a caller the [`identify`](Self::identify) hook does not know through instead of
    /// refusing them with 401, as a [`Person::stand_in`] labelled like the
    /// [`responder`](Self::responder): all such callers are one stand-in, who shares the
    /// tasks they start, answers only where anyone may, never counts toward a quorum of
    /// several people, and has the subscription bound of everyone together. Without a
    /// hook it changes nothing: every caller is the responder.
    pub fn allow_anonymous(mut self) -> Self {
        self.admission = self.admission.allow_anonymous(true);
        self
    }

    /// How many event streams (`SubscribeToTask`, `SendStreamingMessage`) may be open at
    /// once in all (default [`DEFAULT_MAX_SUBSCRIPTIONS`], at least 1); one over it is
    /// refused with `UnsupportedOperationError` saying so, before anything is done.
    pub fn max_subscriptions(mut self, streams: usize) -> Self {
        self.max_subscriptions = streams.max(1);
        self
    }

    /// How many event streams one identified caller may have open at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS_PER_CALLER`], at least 1); one over it is refused with
    /// `UnsupportedOperationError` saying so. Callers the door does not identify are one
    /// stand-in, bounded by [`max_subscriptions`](Self::max_subscriptions) alone.
    pub fn max_subscriptions_per_caller(mut self, streams: usize) -> Self {
        self.max_subscriptions_per_caller = streams.max(1);
        self
    }

    /// Whether a task's history shows the machinery of its runs (default `false`): with
    /// `true`, the model's tool calls and the tools' results as data parts
    /// (`{"toolCall": …}`, `{"toolResult": …}`), beside the caller's messages and the
    /// agent's replies, which a history always holds.
    pub fn show_tool_calls(mut self, show: bool) -> Self {
        self.show_tool_calls = show;
        self
    }

    /// Serves push notifications (default off), and declares them in the card: a task's
    /// starter may give webhooks (`CreateTaskPushNotificationConfig`, or with the message
    /// that starts or continues the task), each told of every status the task comes to —
    /// above all `input-required`, a wait for a person — as a `StreamResponse` with
    /// `Content-Type: application/a2a+json`, its token in `X-A2A-Notification-Token` and
    /// its `authentication` as `Authorization`. Notifications go out through the inbox's
    /// durable posts ([`Inbox::post`]), so an [`Inbox::worker`] must run beside the
    /// server: at least once, in order per webhook, retried with backoff, and still
    /// delivered after a crash of the server; a webhook in the server's own network is
    /// refused unless the inbox allows it
    /// ([`InboxBuilder::allow_private_posts`](toolnexus_inbox::InboxBuilder::allow_private_posts)).
    /// Once a task is over its configurations are dropped, tokens and all.
    pub fn push_notifications(mut self) -> Self {
        self.push_notifications = true;
        self
    }

    /// How a message that starts a task becomes its run's prompt (default: its text
    /// parts, its data parts as JSON and its file URLs, one per line). `Err(why)` refuses
    /// the message as invalid parameters, saying `why`, and nothing is kept; so does a
    /// blank prompt. It sees the whole message: its id, its metadata, its file parts.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = toolnexus::LlmClient::builder().model("m").api_key("k").build()?;
    /// # let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// use toolnexus_a2a::{a2a, A2aServer};
    ///
    /// // The model is told which files came with the question, by name.
    /// let server = A2aServer::builder(client, toolnexus::Toolkit::empty(), inbox)
    ///     .prompt(|message: &a2a::Message| {
    ///         let text = message.text().ok_or("send the question as text")?;
    ///         let files: Vec<&str> =
    ///             message.parts.iter().filter_map(|p| p.filename.as_deref()).collect();
    ///         Ok(format!("{text}\nFiles: {}", files.join(", ")))
    ///     })
    ///     .build()?;
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn prompt(
        mut self,
        make: impl Fn(&a2a::Message) -> Result<String, String> + Send + Sync + 'static,
    ) -> Self {
        self.shaping.prompt = Some(Arc::new(make));
        self
    }

    /// What a task whose run ended shows as its artifacts, made from the run's result
    /// (default: its final text as one text artifact named `result`): files a tool wrote,
    /// data it produced, links. An artifact without an id is given one of the task's, the
    /// same on every read. Streams and webhooks are told of each as the task ends, before
    /// its final status.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = toolnexus::LlmClient::builder().model("m").api_key("k").build()?;
    /// # let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// use toolnexus_a2a::{a2a, A2aServer};
    ///
    /// // Every report the `write_report` tool wrote is a file of the task.
    /// let server = A2aServer::builder(client, toolnexus::Toolkit::empty(), inbox)
    ///     .artifacts(|run: &toolnexus::RunResult| {
    ///         run.tool_calls
    ///             .iter()
    ///             .filter(|call| call.name == "write_report" && !call.is_error)
    ///             .map(|call| a2a::Artifact {
    ///                 artifact_id: String::new(),
    ///                 name: Some("report".to_owned()),
    ///                 description: None,
    ///                 parts: vec![a2a::Part::raw(call.output.clone().into_bytes())
    ///                     .with_filename("report.md")
    ///                     .with_media_type("text/markdown")],
    ///                 metadata: None,
    ///                 extensions: None,
    ///             })
    ///             .collect()
    ///     })
    ///     .build()?;
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn artifacts(
        mut self,
        make: impl Fn(&toolnexus::RunResult) -> Vec<a2a::Artifact> + Send + Sync + 'static,
    ) -> Self {
        self.shaping.artifacts = Some(Arc::new(make));
        self
    }

    /// Which messages are answered with a message instead of a task (default: none). A
    /// `SendMessage` that starts a task whose run ends without waiting on anyone is
    /// answered with the run's final text as the agent's `Message` when `when` says so of
    /// the run's result, and no task is kept of it. A task is kept all the same wherever
    /// the caller was promised one: a streamed message (its stream announced the task as
    /// it started), `returnImmediately`, a message that gives a push configuration, a run
    /// that waits for a person or fails, and every continuation of a task.
    pub fn reply_with_message(
        mut self,
        when: impl Fn(&toolnexus::RunResult) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.shaping.replies = Some(Arc::new(when));
        self
    }

    /// Signs the card with `signer` (a JWS over its RFC 8785 form, as the specification
    /// has it), so a client given the signer's key ([`crate::CardKey`], e.g. through
    /// [`RemoteAgentBuilder::card_key`](crate::RemoteAgentBuilder::card_key)) knows the
    /// card it fetched is the one this server serves, whatever proxy or cache it came
    /// through.
    pub fn sign_card(mut self, signer: crate::CardSigner) -> Self {
        self.signer = Some(Arc::new(signer));
        self
    }

    /// The server; [`A2aError::InvalidUrl`] when [`url`](Self::url) is not an absolute
    /// http(s) URL. A warning is logged naming the tools whose approvals anyone may answer
    /// ([`Inbox::unrestricted_gates`]).
    pub fn build(self) -> Result<A2aServer, A2aError> {
        if let Some(url) = &self.url {
            let ok = (url.starts_with("http://") || url.starts_with("https://"))
                && url.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
            if !ok {
                return Err(A2aError::InvalidUrl {
                    url: url.clone(),
                    reason: "the server's URL must be an absolute http(s) URL".to_owned(),
                });
            }
        }
        if let Some(security) = &self.security {
            if !self.admission.identifies() {
                return Err(A2aError::CardSecurity(
                    "no identify hook checks the tokens it names: give one with `identify`"
                        .to_owned(),
                ));
            }
            security.check()?;
        }
        self.inbox.unrestricted_gates(Door::A2A, &self.tk);
        let card = card::CardInfo {
            name: self.name,
            description: self.description,
            version: self.version,
            url: self.url,
            skills: card::skills(&self.tk),
            max_body: self.max_body,
            bearer: self.admission.identifies(),
            security: self.security,
            push: self.push_notifications,
            signer: self.signer,
        };
        // A task kept before starters were: where every caller is the responder, theirs.
        let unowned =
            (!self.admission.identifies()).then(|| Starter::of(self.admission.responder_person()));
        let shared = Arc::new(Shared {
            client: self.client,
            tk: self.tk,
            inbox: self.inbox,
            card: Arc::new(card),
            admission: self.admission,
            show_tool_calls: self.show_tool_calls,
            live: InFlight::new(),
            changed: Notify::new(),
            streams: streams::Streams::new(
                self.max_subscriptions,
                self.max_subscriptions_per_caller,
            ),
            unowned,
            pusher: pushed::Pusher::new(),
            push_started: std::sync::atomic::AtomicBool::new(false),
            watches: followers::Watches::default(),
            shaping: self.shaping,
        });
        if shared.card.push {
            push::start(&shared);
        }
        Ok(A2aServer { shared })
    }
}
