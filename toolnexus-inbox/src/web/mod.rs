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
//! | `GET /delegate` | the signed-in person's delegations: given, held, a form to give one |
//! | `POST /delegate` | hands their own answering rights over until a date, or takes them back |
//! | `GET /style.css` | the stylesheet (public: it holds nothing of the inbox)       |
//! | `GET …?token=T` | signs in with token `T` and redirects to the page without it, or asks first when another person is signed in |
//! | `POST …?token=T` | the switch that question's button confirms (nothing else posts to a link) |
//! | `GET /sign-in?to=P` | (feature `oidc`, with `InboxPageBuilder::sign_in`) sends the browser to the OpenID provider, back at page `P` once signed in |
//! | `GET /sign-in/callback` | where the provider sends the browser back: the code redeemed, the ID token checked, a session opened |
//! | `POST /sign-out` | ends a session opened through the provider (the list's button) |
//!
//! Who is signed in comes from the host when it says ([`InboxPageBuilder::identity`]: its
//! own session or OIDC middleware), else from a reverse proxy's forwarded headers when the
//! host trusts them by name ([`InboxPageBuilder::trust_proxy_headers`]) on connections
//! from the proxy's addresses ([`InboxPageBuilder::trusted_proxy`]), else from a session
//! opened by signing in through the company's OpenID provider (`InboxPageBuilder::sign_in`,
//! feature `oidc`: a page that offers it shows "Sign in with your company account" to
//! whoever is not signed in), else the holder of the
//! access token is signed in as [`InboxPageBuilder::user`], and the holder of a person's own
//! token ([`InboxPageBuilder::token_for`]) as that person.
//! That person is who answers (`answered_by`), and the page shows who they are. A request
//! that names its responders is read-only to everyone else, and their answer is refused
//! with 403; they see what it asks and that it was answered, by whom, but not its call
//! (tool and arguments), what its votes said or the receipts signed for them.
//!
//! Without a signed-in person, every other route needs an access token: as
//! `Authorization: Bearer` on every request, or once as `?token=` (the link a host prints),
//! which the page trades for a session cookie and takes out of the address bar with a
//! redirect to the same page (the rest of the query kept). The session names who signed in
//! and ends after [`InboxPageBuilder::session_lifetime`] (default
//! [`DEFAULT_SESSION_LIFETIME`], by the inbox's clock); an ended or altered one is refused.
//! The cookie is `HttpOnly`, `SameSite=Lax` (a link from a notification is a cross-site
//! navigation, which must still find the session; a cross-site POST never carries it),
//! `Path` the page's mount (or the path of the inbox's
//! [`page_url`](crate::InboxBuilder::page_url)), and `Secure` when the page is served over
//! https: a `page_url` that says so, a request whose address says `https` (HTTP/2 over
//! TLS sends it; HTTP/1.1 does not, so give such a page its `page_url`), or a trusted proxy's
//! `X-Forwarded-Proto` ([`ProxyHeader::Proto`]). A browser signed in as one person that
//! opens another person's link is asked, on a page with a button, before it switches.
//!
//! An answer must also come from the request's own page: same origin, and an anti-forgery
//! token bound to the request id and the person. Serve it on `127.0.0.1` unless a proxy in
//! front of it adds TLS.
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
//!
//! # Mounting it under a prefix
//!
//! The router can be the whole app, or one part of the host's own under a prefix, with
//! `Router::nest` or `Router::nest_service`. Every link, form and redirect the page sends is
//! relative to the address the browser is on, so they all stay under the prefix (and under
//! one a reverse proxy in front adds). The list is at the prefix as written, `/inbox`: that
//! is the address to print. `nest_service` serves it at `/inbox/` as well; `nest` does not,
//! since axum routes a nested root only as the prefix was given (`nest("/inbox/", …)`
//! serves the list at `/inbox/` alone, and the page's links then keep the slash).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use axum::{routing::get, Router};
//! use toolnexus_inbox::{web, Inbox};
//!
//! let inbox = Inbox::open("sqlite::memory:").await?;
//! let token = web::new_token()?;
//! let app = Router::new()
//!     .route("/", get(|| async { "the host's own home page" }))
//!     .nest("/inbox", web::router(inbox, token.clone()));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! println!("inbox: http://{}/inbox?token={token}", listener.local_addr()?);
//! // axum::serve(listener, app).await?;
//! # drop(app);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod answer;
mod auth;
mod delegate;
mod forgery;
mod form;
mod gate;
mod identity;
mod link;
mod list;
mod mount;
mod page;
mod request;
mod secret;
mod session;
#[cfg(feature = "oidc")]
mod sign_in;
mod summary;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::{middleware, Router};

pub use crate::policy::identify::Identify;
pub use identity::ProxyHeader;
pub use session::DEFAULT_SESSION_LIFETIME;
#[cfg(feature = "oidc")]
pub use sign_in::{OidcSignIn, OidcSignInBuilder};

use crate::inbox::Inbox;
use crate::policy::people::Person;
use secret::Secret;

/// Who answers with the page's access token when nothing names them
/// ([`InboxPageBuilder::user`], [`token_for`](InboxPageBuilder::token_for)): whoever holds
/// the token, unnamed. This is what `answered_by` and the audit trail record for them.
pub const TOKEN_HOLDER: &str = "holder of the inbox token";

/// An axum router serving the inbox page for `inbox`, guarded by `token` (see the
/// [module documentation](self)): shorthand for
/// `InboxPage::builder(inbox).token(token).router()`. Answers are recorded as given by
/// [`TOKEN_HOLDER`], since the token names nobody; use [`InboxPage::builder`] to name the
/// person, or to show more recent decisions.
///
/// An empty token lets nobody in. Make one with [`new_token`].
pub fn router(inbox: Inbox, token: impl Into<String>) -> Router {
    InboxPage::builder(inbox).token(token).router()
}

/// A new random access token for [`router`]: 32 hex digits (128 bits) from the operating
/// system's generator.
pub fn new_token() -> std::io::Result<String> {
    secret::new_token()
}

/// How many waiting requests the list shows at once unless told otherwise: enough to work
/// through in one sitting, few enough that the page stays quick however long the queue.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// The inbox page, configured: built by [`InboxPage::builder`], served by
/// [`router`](Self::router) (as many times as needed: every router shares its keys).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus_inbox::{web::InboxPage, Inbox};
///
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// let page = InboxPage::builder(inbox)
///     .token("a-long-random-token")
///     .user("ada@example.com")
///     .recent(50)
///     .build();
/// let app = page.router();
/// # drop(app);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct InboxPage {
    gate: Arc<gate::Gate>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for InboxPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tokens are credentials: only who holds them is shown.
        f.debug_struct("InboxPage")
            .field("recent", &self.shared.recent)
            .field("page_size", &self.shared.page_size)
            .field("identity", &self.gate.identify.is_some())
            .field("trusted_proxies", &self.gate.proxy.addresses)
            .field("trusted_proxy_headers", &self.gate.proxy.headers)
            .field("session_lifetime", &self.gate.lifetime)
            .field("sign_in", &self.gate.sign_in_issuer())
            .field(
                "token_holders",
                &self
                    .gate
                    .keys
                    .iter()
                    .map(|(_, p)| &p.id)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl InboxPage {
    /// Starts the page for `inbox`, with no access token: unless [`token`] or
    /// [`token_for`] gives one, only people the host signs in ([`identity`],
    /// [`trust_proxy_headers`]) get in.
    ///
    /// [`token`]: InboxPageBuilder::token
    /// [`token_for`]: InboxPageBuilder::token_for
    /// [`identity`]: InboxPageBuilder::identity
    /// [`trust_proxy_headers`]: InboxPageBuilder::trust_proxy_headers
    pub fn builder(inbox: Inbox) -> InboxPageBuilder {
        InboxPageBuilder {
            inbox,
            token: String::new(),
            user: TOKEN_HOLDER.to_owned(),
            recent: 20,
            page_size: DEFAULT_PAGE_SIZE,
            identify: None,
            proxies: Vec::new(),
            proxy_headers: Vec::new(),
            people: Vec::new(),
            lifetime: DEFAULT_SESSION_LIFETIME,
            #[cfg(feature = "oidc")]
            sign_in: None,
        }
    }

    /// The router serving the page.
    pub fn router(&self) -> Router {
        let router = Router::new()
            .route("/", get(list::show))
            .route("/r/{id}", get(request::show).post(request::submit))
            .route("/delegate", get(delegate::show).post(delegate::submit))
            .with_state(self.shared.clone())
            .layer(middleware::from_fn_with_state(
                self.gate.clone(),
                auth::admit,
            ));
        // The sign-in's own routes are outside the gate: nobody is signed in on them yet.
        #[cfg(feature = "oidc")]
        let router = match &self.gate.sign_in {
            Some(_) => router.merge(sign_in::flow::routes(self.gate.clone())),
            None => router,
        };
        router
            .route("/style.css", get(page::stylesheet))
            .layer(middleware::from_fn(page::secure_headers))
            .layer(middleware::from_fn(mount::locate))
    }
}

/// The options of an [`InboxPage`], from [`InboxPage::builder`]; [`build`](Self::build)
/// makes the page, [`router`](Self::router) its router at once.
pub struct InboxPageBuilder {
    inbox: Inbox,
    token: String,
    user: String,
    recent: usize,
    page_size: usize,
    identify: Option<Arc<dyn Identify>>,
    proxies: Vec<IpAddr>,
    proxy_headers: Vec<ProxyHeader>,
    people: Vec<(String, Person)>,
    lifetime: Duration,
    #[cfg(feature = "oidc")]
    sign_in: Option<OidcSignIn>,
}

impl std::fmt::Debug for InboxPageBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tokens are credentials: never shown.
        f.debug_struct("InboxPageBuilder")
            .field("user", &self.user)
            .field("recent", &self.recent)
            .field("page_size", &self.page_size)
            .field("identity", &self.identify.is_some())
            .field("trusted_proxies", &self.proxies)
            .field("trusted_proxy_headers", &self.proxy_headers)
            .field("session_lifetime", &self.lifetime)
            .field("sign_in", &self.sign_in_issuer())
            .field(
                "people_with_tokens",
                &self.people.iter().map(|(_, p)| &p.id).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl InboxPageBuilder {
    /// The access token (see the [module documentation](self)); its holder is signed in as
    /// [`user`](Self::user). An empty token lets nobody in by token.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    /// The host's own sign-in, asked first on every request; the person it names is who
    /// answers, and who must be among a request's responders.
    pub fn identity(mut self, identify: impl Identify) -> Self {
        self.identify = Some(Arc::new(identify));
        self
    }

    /// The addresses of the reverse proxies (oauth2-proxy and its like) in front of the
    /// page, whose forwarded headers [`trust_proxy_headers`](Self::trust_proxy_headers)
    /// names. Alone it trusts nothing: a header is read only when both say so, and only on
    /// connections from these addresses; the router must then be served with
    /// `into_make_service_with_connect_info::<SocketAddr>()` so it knows the peer, else the
    /// headers are ignored.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::net::{Ipv4Addr, SocketAddr};
    /// use toolnexus_inbox::{web::{InboxPage, ProxyHeader}, Inbox};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let app = InboxPage::builder(inbox)
    ///     .trusted_proxy([Ipv4Addr::LOCALHOST.into()])
    ///     .trust_proxy_headers([ProxyHeader::Email, ProxyHeader::Groups, ProxyHeader::Proto])
    ///     .router()
    ///     .into_make_service_with_connect_info::<SocketAddr>();
    /// // axum::serve(listener, app).await?;
    /// # drop(app);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn trusted_proxy(mut self, addresses: impl IntoIterator<Item = IpAddr>) -> Self {
        self.proxies
            .extend(addresses.into_iter().map(identity::canonical));
        self
    }

    /// The forwarded headers the proxies of [`trusted_proxy`](Self::trusted_proxy) set
    /// themselves, and so may be believed: without this nothing forwarded is read, from any
    /// address. Name only what the proxy overwrites on every request (a header it passes on
    /// is the client's to write): `X-Forwarded-Email` or `X-Forwarded-User` name the
    /// person, `X-Forwarded-Groups` their groups (which decide what they may answer),
    /// `X-Forwarded-Proto` whether the browser came over https (see [`ProxyHeader`]).
    pub fn trust_proxy_headers(mut self, headers: impl IntoIterator<Item = ProxyHeader>) -> Self {
        self.proxy_headers.extend(headers);
        self
    }

    /// "Sign in with your company account": people sign in through an OpenID provider
    /// (feature `oidc`), by the authorization code flow with PKCE, and get a session of
    /// the page's own; the list page has their sign-out. A page without a signed-in
    /// person offers the sign-in instead of asking for a token; links' tokens and the
    /// host's sign-in ([`identity`](Self::identity)) still work beside it.
    ///
    /// ```no_run
    /// use toolnexus_inbox::web::{InboxPage, OidcSignIn};
    /// use toolnexus_inbox::Inbox;
    ///
    /// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    /// let inbox = Inbox::builder("sqlite://inbox.db")
    ///     .page_url("https://agents.example.com/inbox/")
    ///     .open()
    ///     .await?;
    /// let sign_in = OidcSignIn::builder("https://login.example.com/realms/staff", "inbox")
    ///     .client_secret(std::env::var("INBOX_CLIENT_SECRET")?)
    ///     .redirect_url("https://agents.example.com/inbox/sign-in/callback")
    ///     .scopes(["email", "groups"])
    ///     .person_claim("email")
    ///     .groups_claim("groups")
    ///     .build()
    ///     .await?;
    /// let app = axum::Router::new().nest("/inbox", InboxPage::builder(inbox).sign_in(sign_in).router());
    /// # drop(app);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "oidc")]
    pub fn sign_in(mut self, sign_in: OidcSignIn) -> Self {
        self.sign_in = Some(sign_in);
        self
    }

    #[cfg(feature = "oidc")]
    fn sign_in_issuer(&self) -> Option<&str> {
        self.sign_in.as_ref().map(OidcSignIn::issuer)
    }

    #[cfg(not(feature = "oidc"))]
    fn sign_in_issuer(&self) -> Option<&str> {
        None
    }

    /// How long a session lasts once a link's token is traded for it, or a person signs
    /// in through the provider (`sign_in`, feature `oidc`) (default
    /// [`DEFAULT_SESSION_LIFETIME`]), by the inbox's clock
    /// ([`InboxBuilder::clock`](crate::InboxBuilder::clock)); then the person opens their
    /// link again. At least a second.
    pub fn session_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime.max(Duration::from_secs(1));
        self
    }

    /// Gives `person` an access token of their own: a team without single sign-on hands
    /// each person their own link (`?token=`), and whoever follows it is signed in as that
    /// person. A browser signed in as someone else is asked before it switches. Call it
    /// once per person.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{web, web::InboxPage, Inbox, Person};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let (ada, bob) = (web::new_token()?, web::new_token()?);
    /// let app = InboxPage::builder(inbox)
    ///     .token_for(Person::new("ada@example.com").name("Ada"), &ada)
    ///     .token_for(Person::new("bob@example.com").name("Bob"), &bob)
    ///     .router();
    /// println!("Ada: http://127.0.0.1:8080/?token={ada}");
    /// # drop(app);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn token_for(mut self, person: impl Into<Person>, token: impl Into<String>) -> Self {
        self.people.push((token.into(), person.into()));
        self
    }

    /// Who the holder of the access token answers as (`answered_by`), when nobody is
    /// signed in otherwise; default [`TOKEN_HOLDER`].
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

    /// The page, its keys made.
    pub fn build(self) -> InboxPage {
        let secret = Arc::new(Secret::new(&self.token));
        // With no token the anti-forgery tokens still need a key; one nobody knows will do.
        let forms = match (self.token.is_empty(), new_token()) {
            (true, Ok(key)) => Arc::new(Secret::new(&key)),
            _ => secret.clone(),
        };
        // The shared token names nobody: its holder is a stand-in, never a voter of a quorum.
        let mut keys = vec![(secret, Person::stand_in(self.user))];
        keys.extend(
            self.people
                .into_iter()
                .filter(|(token, _)| !token.is_empty())
                .map(|(token, person)| (Arc::new(Secret::new(&token)), person)),
        );
        if !self.proxies.is_empty() && self.proxy_headers.is_empty() {
            tracing::warn!(
                "the inbox page names trusted proxies but no forwarded header to read from \
                 them (trust_proxy_headers), so it reads none"
            );
        }
        // One session per browser: the cookie is named after the first token, so two
        // inboxes on one host (cookies are not kept apart by port) keep theirs apart.
        let cookie = keys
            .iter()
            .find(|(secret, _)| secret.is_set())
            .map_or_else(|| forms.cookie_name(), |(secret, _)| secret.cookie_name())
            .to_owned();
        InboxPage {
            gate: Arc::new(gate::Gate {
                keys,
                identify: self.identify,
                proxy: identity::Proxy {
                    addresses: self.proxies,
                    headers: self.proxy_headers,
                },
                inbox: self.inbox.clone(),
                lifetime: self.lifetime,
                cookie,
                forms: forms.clone(),
                #[cfg(feature = "oidc")]
                sign_in: self.sign_in,
            }),
            shared: Arc::new(Shared {
                inbox: self.inbox,
                secret: forms,
                recent: self.recent,
                page_size: self.page_size,
            }),
        }
    }

    /// Shorthand for [`build`](Self::build)`().`[`router`](InboxPage::router)`()`.
    pub fn router(self) -> Router {
        self.build().router()
    }
}

/// What every handler reads.
struct Shared {
    inbox: Inbox,
    /// Keys the anti-forgery tokens.
    secret: Arc<Secret>,
    recent: usize,
    page_size: usize,
}
