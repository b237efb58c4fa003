//! "Sign in with your company account": the page as an OpenID Connect relying party
//! (feature `oidc`), by the authorization code flow with PKCE (S256), `state` and `nonce`.
//!
//! | route                  | what                                                     |
//! |------------------------|----------------------------------------------------------|
//! | `GET sign-in?to=P`     | starts a sign-in and sends the browser to the provider; back at `P` (a page of the inbox) once done |
//! | `GET sign-in/callback` | where the provider sends the browser back: the code is redeemed, the ID token checked, a session opened |
//! | `POST sign-out`        | ends the session (the list page's button)               |
//!
//! A sign-in under way is bound to the browser that started it by a cookie of its own, so
//! a callback URL sent to someone else signs nobody in; its `state` serves once. The ID
//! token is checked as [`id_token`](crate::policy::oidc::id_token) says, its nonce
//! included. The session is the page's own: a random id in an `HttpOnly`, `SameSite=Lax`
//! cookie scoped to the page's path, `Secure` when the page is served over https, lasting
//! [`session_lifetime`](super::InboxPageBuilder::session_lifetime); the person it names
//! (id, name, groups from the configured claims) is kept in this process, so a restart
//! signs everyone out and several processes behind one address need sticky sessions.

mod exchange;
mod failure;
pub(crate) mod flow;
mod pending;
mod return_to;
mod sessions;

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::clock::Clock;
use crate::error::InboxError;
use crate::policy::oidc::id_token::{self, SignInProvider};
use crate::policy::oidc::SigningAlg;

use self::pending::PendingSignIns;
pub(crate) use self::sessions::Found;
use self::sessions::Sessions;

/// How long a sign-in may take, from the click to the callback, unless told
/// ([`OidcSignInBuilder::sign_in_lifetime`]).
const DEFAULT_SIGN_IN_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// The most sign-ins under way at once unless told ([`OidcSignInBuilder::max_pending`]).
const DEFAULT_MAX_PENDING: usize = 4096;

/// The most sessions at once unless told ([`OidcSignInBuilder::max_sessions`]).
const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// The page's own route the provider sends people back to.
pub(crate) const CALLBACK: &str = "sign-in/callback";

/// "Sign in with your company account" on the inbox page: the page signs people in
/// through an OpenID provider ([`InboxPageBuilder::sign_in`](super::InboxPageBuilder::sign_in)),
/// as a client registered there, by the authorization code flow with PKCE.
///
/// Built with [`OidcSignIn::builder`], which finds the provider and reads its keys.
/// Cloning shares the sessions. `Debug` never shows the client's secret.
///
/// ```no_run
/// use toolnexus_inbox::web::{InboxPage, OidcSignIn};
/// use toolnexus_inbox::Inbox;
///
/// # async fn build() -> Result<(), Box<dyn std::error::Error>> {
/// let sign_in = OidcSignIn::builder("https://login.example.com/realms/staff", "inbox")
///     .client_secret(std::env::var("INBOX_CLIENT_SECRET")?)
///     .redirect_url("https://agents.example.com/inbox/sign-in/callback")
///     .scopes(["email", "profile", "groups"])
///     .person_claim("email")
///     .groups_claim("groups")
///     .build()
///     .await?;
/// let inbox = Inbox::open("sqlite://inbox.db").await?;
/// let app = InboxPage::builder(inbox).sign_in(sign_in).router();
/// # drop(app);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OidcSignIn {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) provider: SignInProvider,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<ClientSecret>,
    pub(crate) redirect_url: reqwest::Url,
    pub(crate) scope: String,
    pub(crate) pending: PendingSignIns,
    pub(crate) sign_in_lifetime: Duration,
    pub(crate) sessions: Sessions,
}

/// The client's secret, shown to nothing but the token endpoint.
pub(crate) struct ClientSecret(String);

impl ClientSecret {
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl OidcSignIn {
    /// Sign-in through the provider whose issuer identifier is `issuer` (exactly as its
    /// ID tokens' `iss` says it), as its client `client_id`: the ID tokens' audience.
    pub fn builder(issuer: impl Into<String>, client_id: impl Into<String>) -> OidcSignInBuilder {
        OidcSignInBuilder {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            redirect_url: None,
            scopes: vec!["email".to_owned(), "profile".to_owned()],
            person_claim: "sub".to_owned(),
            groups_claim: None,
            algorithms: SigningAlg::ALL.to_vec(),
            leeway: Duration::from_secs(60),
            refresh_floor: Duration::from_secs(30),
            keys_max_age: Duration::from_secs(60 * 60),
            timeout: Duration::from_secs(10),
            sign_in_lifetime: DEFAULT_SIGN_IN_LIFETIME,
            max_pending: DEFAULT_MAX_PENDING,
            max_sessions: DEFAULT_MAX_SESSIONS,
            clock: Clock::system(),
            http: None,
        }
    }

    /// The provider's issuer identifier.
    pub fn issuer(&self) -> &str {
        self.inner.provider.id_tokens.issuer()
    }

    /// The page's client id at the provider.
    pub fn client_id(&self) -> &str {
        &self.inner.client_id
    }

    /// Where the provider sends people back.
    pub fn redirect_url(&self) -> &str {
        self.inner.redirect_url.as_str()
    }
}

impl fmt::Debug for OidcSignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcSignIn")
            .field("issuer", &self.issuer())
            .field("client_id", &self.inner.client_id)
            .field("client_secret", &self.inner.client_secret)
            .field("redirect_url", &self.inner.redirect_url.as_str())
            .field("scope", &self.inner.scope)
            .finish_non_exhaustive()
    }
}

/// How an [`OidcSignIn`] signs people in; [`build`](Self::build) finds the provider.
#[must_use = "a builder does nothing until `build` is awaited"]
pub struct OidcSignInBuilder {
    issuer: String,
    client_id: String,
    client_secret: Option<ClientSecret>,
    redirect_url: Option<String>,
    scopes: Vec<String>,
    person_claim: String,
    groups_claim: Option<String>,
    algorithms: Vec<SigningAlg>,
    leeway: Duration,
    refresh_floor: Duration,
    keys_max_age: Duration,
    timeout: Duration,
    sign_in_lifetime: Duration,
    max_pending: usize,
    max_sessions: usize,
    clock: Clock,
    http: Option<reqwest::Client>,
}

impl fmt::Debug for OidcSignInBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcSignInBuilder")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("redirect_url", &self.redirect_url)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OidcSignInBuilder {
    /// The client's secret at the provider, for a confidential client (sent as HTTP
    /// Basic, or in the form where the provider takes only that). Without one the page is
    /// a public client, which PKCE alone protects.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(ClientSecret(secret.into()));
        self
    }

    /// The page's callback as registered at the provider: the address the browser reaches
    /// the page at, then `sign-in/callback` (`https://agents.example.com/inbox/sign-in/callback`
    /// for a page served at `/inbox`). Required; https, or http on this host.
    pub fn redirect_url(mut self, url: impl Into<String>) -> Self {
        self.redirect_url = Some(url.into());
        self
    }

    /// The scopes asked for beside `openid` (always asked): `email` and `profile` unless
    /// told; add the one that grants the groups claim where the provider needs it.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The ID token claim that names the person: `sub` unless told (`email`,
    /// `preferred_username`…). A dotted name reaches into nested claims.
    pub fn person_claim(mut self, claim: impl Into<String>) -> Self {
        self.person_claim = claim.into();
        self
    }

    /// The ID token claim that lists the person's groups (`groups`, `roles`,
    /// `realm_access.roles`); none unless told.
    pub fn groups_claim(mut self, claim: impl Into<String>) -> Self {
        self.groups_claim = Some(claim.into());
        self
    }

    /// The algorithms an ID token may be signed with; all of [`SigningAlg`] unless told.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlg>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// How far apart this host's clock and the provider's may be for `exp`, `nbf` and
    /// `iat`; 60 seconds unless told.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long a read of the provider's documents, or the redeeming of a code, may take;
    /// 10 seconds unless told.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a person may take from clicking "Sign in" to coming back; 10 minutes
    /// unless told.
    pub fn sign_in_lifetime(mut self, lifetime: Duration) -> Self {
        self.sign_in_lifetime = lifetime.max(Duration::from_secs(1));
        self
    }

    /// The most sign-ins under way at once (4096 unless told): when full, the oldest is
    /// forgotten, so starting sign-ins by the thousand cannot fill memory.
    pub fn max_pending(mut self, n: usize) -> Self {
        self.max_pending = n.max(1);
        self
    }

    /// The most sessions kept at once (10 000 unless told): when full, the one nearest its
    /// end is ended.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// The least time between two reads of the provider's keys caused by tokens naming a
    /// key it does not hold; 30 seconds unless told.
    pub fn refresh_floor(mut self, floor: Duration) -> Self {
        self.refresh_floor = floor;
        self
    }

    /// How long the provider's keys are used before they are read again; an hour unless
    /// told.
    pub fn keys_max_age(mut self, max_age: Duration) -> Self {
        self.keys_max_age = max_age;
        self
    }

    /// Where the ID tokens' times are read: this host's clock unless told. Sessions and
    /// sign-ins under way end by the inbox's clock.
    pub fn clock(mut self, now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Clock::custom(now);
        self
    }

    /// The HTTP client that reads the provider's documents and redeems codes (for a
    /// host's proxy or its own roots); its own timeouts apply then.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Finds the provider and reads its keys. [`InboxError::InvalidProvider`] says what
    /// is wrong: a setting (no redirect URL, one that is not the page's callback), the
    /// provider's answer, or that it cannot be reached.
    pub async fn build(self) -> Result<OidcSignIn, InboxError> {
        let refuse = |reason: String| InboxError::InvalidProvider {
            url: self.issuer.clone(),
            reason,
            source: None,
        };
        let redirect = self.redirect_url.as_deref().ok_or_else(|| {
            refuse("no redirect URL: name the page's callback with `redirect_url`".into())
        })?;
        let redirect_url = callback_url(redirect).map_err(refuse)?;
        let mut scope = vec!["openid".to_owned()];
        for s in self.scopes.iter().flat_map(|s| s.split_whitespace()) {
            if !scope.iter().any(|have| have == s) {
                scope.push(s.to_owned());
            }
        }
        let provider = id_token::discover(id_token::Rules {
            issuer: self.issuer,
            client_id: self.client_id.clone(),
            algorithms: self.algorithms,
            leeway: self.leeway,
            person_claim: self.person_claim,
            groups_claim: self.groups_claim,
            refresh_floor: self.refresh_floor,
            keys_max_age: self.keys_max_age,
            timeout: self.timeout,
            clock: self.clock,
            http: self.http,
        })
        .await?;
        let lifetime_ms = i64::try_from(self.sign_in_lifetime.as_millis()).unwrap_or(i64::MAX);
        Ok(OidcSignIn {
            inner: Arc::new(Inner {
                provider,
                client_id: self.client_id,
                client_secret: self.client_secret,
                redirect_url,
                scope: scope.join(" "),
                pending: PendingSignIns::new(self.max_pending, lifetime_ms),
                sign_in_lifetime: self.sign_in_lifetime,
                sessions: Sessions::new(self.max_sessions),
            }),
        })
    }
}

/// `url` when it can be the page's callback: absolute, https or http on this host, no
/// fragment, its path ending in [`CALLBACK`].
fn callback_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|_| format!("the redirect URL {url:?} is not absolute"))?;
    let loopback = match parsed.host_str() {
        Some("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    };
    match parsed.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "the redirect URL {url:?} is neither https nor http to this host: codes sent in the clear could be anyone's"
            ));
        }
    }
    if parsed.fragment().is_some() || parsed.query().is_some() {
        return Err(format!(
            "the redirect URL {url:?} has a query or a fragment; the page's callback has neither"
        ));
    }
    if !parsed.path().ends_with(&format!("/{CALLBACK}")) {
        return Err(format!(
            "the redirect URL {url:?} is not the page's callback: the page's address, then `{CALLBACK}`"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_url_is_the_pages_callback() {
        for good in [
            "https://agents.example.com/sign-in/callback",
            "https://agents.example.com/team/inbox/sign-in/callback",
            "http://127.0.0.1:8080/sign-in/callback",
            "http://[::1]:8080/inbox/sign-in/callback",
            "http://localhost/sign-in/callback",
        ] {
            assert!(callback_url(good).is_ok(), "{good}");
        }
        for bad in [
            "http://agents.example.com/sign-in/callback",
            "https://agents.example.com/callback",
            "https://agents.example.com/sign-in/callback?x=1",
            "https://agents.example.com/sign-in/callback#x",
            "/sign-in/callback",
            "javascript:alert(1)//sign-in/callback",
        ] {
            assert!(callback_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_secret_is_never_shown() {
        let builder = OidcSignIn::builder("https://login.example.com", "inbox")
            .client_secret("s3cret-value")
            .redirect_url("https://agents.example.com/sign-in/callback");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("s3cret-value"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
