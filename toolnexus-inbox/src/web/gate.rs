//! What the page knows to tell who is signed in: the access tokens and who holds each, the
//! host's own sign-in, the proxies it trusts, the provider people sign in through, and how
//! its session cookies are named, kept and signed. The gate ([`auth`](super::auth)) and
//! the provider's sign-in both read it.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::HeaderValue;
use axum::http::request::Parts;

use super::identity::Proxy;
use super::mount::Mount;
use super::secret::Secret;
use super::session::{self, Jar};
use crate::inbox::Inbox;
use crate::policy::identify::Identify;
use crate::policy::people::Person;

/// How the page tells who is signed in.
pub(crate) struct Gate {
    /// The access tokens, each with who its holder is: the inbox's own first, then each
    /// person's own.
    pub(crate) keys: Vec<(Arc<Secret>, Person)>,
    pub(crate) identify: Option<Arc<dyn Identify>>,
    pub(crate) proxy: Proxy,
    /// The inbox whose clock ends sessions, and whose page URL says where the page is.
    pub(crate) inbox: Inbox,
    pub(crate) lifetime: Duration,
    /// The session cookie's name.
    pub(crate) cookie: String,
    /// Keys the anti-forgery token of a switch between people.
    pub(crate) forms: Arc<Secret>,
    /// Signing in through an OpenID provider, when the page offers it.
    #[cfg(feature = "oidc")]
    pub(crate) sign_in: Option<super::OidcSignIn>,
}

impl Gate {
    /// Which key `token` is.
    pub(crate) fn find(&self, token: &str) -> Option<usize> {
        self.keys.iter().position(|(s, _)| s.is_token(token))
    }

    /// The issuer people sign in through, if any.
    pub(crate) fn sign_in_issuer(&self) -> Option<&str> {
        #[cfg(feature = "oidc")]
        return self.sign_in.as_ref().map(super::OidcSignIn::issuer);
        #[cfg(not(feature = "oidc"))]
        None
    }

    /// How the session cookie is set on a response to `parts`, at `mount`.
    pub(crate) fn jar(&self, parts: &Parts, mount: &Mount) -> Jar<'_> {
        let page_url = self.inbox.inner.page_url.as_ref();
        let secure = page_url.is_some_and(|url| url.scheme() == "https")
            || parts.uri.scheme_str() == Some("https")
            || self.proxy.https(parts);
        Jar {
            name: &self.cookie,
            path: session::path(page_url, mount),
            secure,
            lifetime: self.lifetime,
        }
    }

    pub(crate) fn lifetime_ms(&self) -> i64 {
        i64::try_from(self.lifetime.as_millis()).unwrap_or(i64::MAX)
    }

    /// A new session cookie for the holder of key `key`.
    pub(crate) fn open_session(&self, key: usize, jar: &Jar<'_>) -> Option<HeaderValue> {
        let (secret, person) = self.keys.get(key)?;
        let until = self.inbox.now().saturating_add(self.lifetime_ms());
        jar.set(&session::value(secret, &person.id, until)?)
    }
}
