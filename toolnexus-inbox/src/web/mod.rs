//! The inbox page (feature `web`): an axum router that shows the waiting requests as forms a
//! person answers in a browser, and what came of each run once a worker resumed it.
//!
//! Server-rendered HTML with no script at all; it works with scripting off. Everything a
//! request shows (prompt, arguments, url, form) is model-influenced and treated as hostile:
//! escaped, links only to `http(s)` addresses, behind a strict Content-Security-Policy.
//!
//! | route          | what                                                          |
//! |----------------|---------------------------------------------------------------|
//! | `GET /`        | the waiting requests, oldest first, 50 a page; the recently decided below |
//! | `GET /?from=N` | the waiting requests from the (N+1)-th on, one page of them   |
//! | `GET /r/{id}`  | one request, with the controls its kind and form call for      |
//! | `POST /r/{id}` | its answer; then the page shows the decision and the outcome   |
//! | `GET /style.css` | the stylesheet (public: it holds nothing of the inbox)       |
//!
//! Every other route needs the access token: once as `?token=` (the link a host prints) or
//! `Authorization: Bearer`, then a session cookie (HttpOnly, SameSite=Strict) carries it. An
//! answer must also come from the request's own page: same origin, and an anti-forgery
//! token bound to the request id. Serve it on `127.0.0.1` unless a proxy in front of it
//! adds TLS.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use toolnexus_inbox::{web, Inbox};
//!
//! let inbox = Inbox::open("sqlite::memory:").await?;
//! let token = web::new_token()?;
//! let app = web::router(inbox, token.clone());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! println!("inbox: http://{}/?token={token}", listener.local_addr()?);
//! // axum::serve(listener, app).await?;
//! # drop(app);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod answer;
mod auth;
mod forgery;
mod form;
mod link;
mod list;
mod page;
mod request;
mod secret;
mod summary;

use std::sync::Arc;

use axum::routing::get;
use axum::{middleware, Router};

use crate::Inbox;
use secret::Secret;

/// An axum router serving the inbox page for `inbox`, guarded by `token` (see the
/// [module documentation](self)). Answers are recorded as given by `"inbox page"`; use
/// [`InboxPage`] to name the person, or to show more recent decisions.
///
/// An empty token lets nobody in. Make one with [`new_token`].
pub fn router(inbox: Inbox, token: impl Into<String>) -> Router {
    InboxPage::new(inbox, token).router()
}

/// A new random access token for [`router`]: 32 hex digits (128 bits) from the operating
/// system's generator.
pub fn new_token() -> std::io::Result<String> {
    secret::new_token()
}

/// The inbox page with its options; [`router`] is `InboxPage::new(inbox, token).router()`.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus_inbox::{web::InboxPage, Inbox};
///
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// let app = InboxPage::new(inbox, "a-long-random-token")
///     .user("ada@example.com")
///     .recent(50)
///     .router();
/// # drop(app);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct InboxPage {
    inbox: Inbox,
    token: String,
    user: String,
    recent: usize,
    page_size: usize,
}

/// How many waiting requests the list shows at once unless told otherwise: enough to work
/// through in one sitting, few enough that the page stays quick however long the queue.
pub const DEFAULT_PAGE_SIZE: usize = 50;

impl std::fmt::Debug for InboxPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a credential: never shown.
        f.debug_struct("InboxPage")
            .field("user", &self.user)
            .field("recent", &self.recent)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl InboxPage {
    /// The page for `inbox`, guarded by `token`.
    pub fn new(inbox: Inbox, token: impl Into<String>) -> Self {
        InboxPage {
            inbox,
            token: token.into(),
            user: "inbox page".to_owned(),
            recent: 20,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }

    /// Who the answers given on this page are recorded as (`answered_by`); default
    /// `"inbox page"`.
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = user.into();
        self
    }

    /// How many recently decided runs the list shows below the waiting ones; default 20.
    pub fn recent(mut self, n: usize) -> Self {
        self.recent = n;
        self
    }

    /// How many waiting requests the list shows at once (default [`DEFAULT_PAGE_SIZE`]); a
    /// "More" link leads to the next ones, and the list always says how many wait in all.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// The router.
    pub fn router(self) -> Router {
        let secret = Arc::new(Secret::new(&self.token));
        let shared = Arc::new(Shared {
            inbox: self.inbox,
            secret: secret.clone(),
            user: self.user,
            recent: self.recent,
            page_size: self.page_size,
        });
        Router::new()
            .route("/", get(list::show))
            .route("/r/{id}", get(request::show).post(request::submit))
            .with_state(shared)
            .layer(middleware::from_fn_with_state(secret, auth::require_token))
            .route("/style.css", get(page::stylesheet))
            .layer(middleware::from_fn(page::secure_headers))
    }
}

/// What every handler reads.
struct Shared {
    inbox: Inbox,
    secret: Arc<Secret>,
    user: String,
    recent: usize,
    page_size: usize,
}
