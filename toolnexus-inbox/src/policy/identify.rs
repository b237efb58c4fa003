//! Who is asking: the host's authentication turns a request into a [`Person`], at every
//! door alike — the inbox page, A2A, AG-UI, MCP. The inbox then checks that person against
//! who may answer each request, and the audit trail names them.

use std::collections::HashMap;
use std::fmt;
use std::future::{self, Future};
use std::path::Path;
use std::pin::Pin;

use http::request::Parts;
use sha2::{Digest, Sha256};

use crate::error::InboxError;
use crate::policy::people::Person;
use crate::policy::refusal::Refused;

/// The host's own sign-in, asked for every request a door takes: its session cookie, its
/// OIDC middleware's extension, a bearer token ([`BearerTokens`]), whatever it trusts.
/// `None`: nobody the host knows.
///
/// It may wait (a token validator fetches its provider's new keys when it meets one it has
/// not seen), so it answers with a future; any `Fn(&Parts) -> Option<Person>` is one, ready
/// at once:
///
/// ```
/// use futures::FutureExt;
/// use http::request::Parts;
/// use toolnexus_inbox::{Identify, Person};
///
/// // A host whose auth layer put the person into the request's extensions.
/// let from_layer = |parts: &Parts| parts.extensions.get::<Person>().cloned();
/// let (parts, ()) = http::Request::new(()).into_parts();
/// // A closure's answer is ready at once: no runtime needed to read it.
/// assert_eq!(from_layer.identify(&parts).now_or_never(), Some(None));
/// ```
pub trait Identify: Send + Sync + 'static {
    /// The person who sent this request, if the host knows them.
    fn identify<'a>(&'a self, parts: &'a Parts) -> Identifying<'a>;

    /// The person who sent this request, or why the door refuses it: what a door asks.
    /// Whoever [`identify`](Self::identify) does not name is
    /// [`Refused::Unidentified`] unless a hook says more: one that checks scopes
    /// (`OidcTokens`, feature `oidc`) answers [`Refused::InsufficientScope`] for a token
    /// that is valid but lacks them, so the door answers 403 and the client knows
    /// to ask for a token with more scopes instead of signing in again.
    fn verdict<'a>(&'a self, parts: &'a Parts) -> Verdict<'a> {
        Box::pin(async move {
            self.identify(parts)
                .await
                .ok_or_else(|| Refused::unidentified(parts))
        })
    }
}

/// What [`Identify::identify`] answers: the person, once the hook knows.
pub type Identifying<'a> = Pin<Box<dyn Future<Output = Option<Person>> + Send + 'a>>;

/// What [`Identify::verdict`] answers: the person, or why the request is refused.
pub type Verdict<'a> = Pin<Box<dyn Future<Output = Result<Person, Refused>> + Send + 'a>>;

impl<F> Identify for F
where
    F: Fn(&Parts) -> Option<Person> + Send + Sync + 'static,
{
    fn identify<'a>(&'a self, parts: &'a Parts) -> Identifying<'a> {
        Box::pin(future::ready(self(parts)))
    }
}

/// Who a person is now, by their id: the host's directory (its identity provider, its
/// staff list). The inbox asks it when someone answers under a delegation, so the rights
/// handed over are the giver's as they are today — a giver who left the group, or left,
/// no longer lends what they lost ([`InboxBuilder::directory`](crate::InboxBuilder::directory)).
/// `None`: nobody the host knows now.
///
/// Any `Fn(&str) -> Option<Person>` is one, and so is [`BearerTokens`].
///
/// ```
/// use toolnexus_inbox::{Directory, Person};
///
/// let staff = |id: &str| (id == "ada@example.com").then(|| Person::new(id).groups(["finance"]));
/// assert_eq!(staff.person("ada@example.com").unwrap().groups, ["finance"]);
/// assert!(staff.person("mallory@example.com").is_none());
/// ```
pub trait Directory: Send + Sync + 'static {
    /// The person with id `id` as the host knows them now, if it does.
    fn person(&self, id: &str) -> Option<Person>;
}

impl<F> Directory for F
where
    F: Fn(&str) -> Option<Person> + Send + Sync + 'static,
{
    fn person(&self, id: &str) -> Option<Person> {
        self(id)
    }
}

/// People known by the bearer token they send (`Authorization: Bearer <token>`): the
/// simplest sign-in a door can require, for partners and services.
///
/// Tokens are kept as their SHA-256 digests, looked up by digest, and never shown by
/// `Debug`.
///
/// ```
/// use futures::FutureExt;
/// use toolnexus_inbox::{BearerTokens, Identify};
///
/// let tokens = BearerTokens::parse("tok-alice alice@shop.example finance\n# a comment\ntok-bob bob@partner.example\n")?;
/// let ask = |token: &str| {
///     let request = http::Request::builder().header("authorization", format!("Bearer {token}"));
///     let (parts, ()) = request.body(()).unwrap().into_parts();
///     tokens.identify(&parts).now_or_never().flatten()
/// };
/// let alice = ask("tok-alice").expect("known");
/// assert_eq!(alice.id, "alice@shop.example");
/// assert_eq!(alice.groups, ["finance"]);
/// assert!(ask("tok-nobody").is_none());
/// assert!(!format!("{tokens:?}").contains("tok-alice"));
/// # Ok::<(), toolnexus_inbox::InboxError>(())
/// ```
#[derive(Clone, Default)]
pub struct BearerTokens {
    people: HashMap<[u8; 32], Person>,
}

impl BearerTokens {
    /// No one yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `person`, known by `token`.
    pub fn with(mut self, token: &str, person: Person) -> Self {
        self.people.insert(digest(token), person);
        self
    }

    /// Reads lines of `TOKEN ID [GROUP,GROUP…]` (blank lines and `#` comments skipped);
    /// [`InboxError::InvalidTokens`] names the line that is not one, without its token.
    pub fn parse(text: &str) -> Result<Self, InboxError> {
        let mut tokens = Self::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(token), Some(id)) = (words.next(), words.next()) else {
                return Err(InboxError::InvalidTokens(format!(
                    "line {} holds a token without the person it names: write `TOKEN ID [GROUP,GROUP…]`",
                    n + 1
                )));
            };
            let groups = words
                .flat_map(|w| w.split(','))
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>();
            tokens = tokens.with(token, Person::new(id).groups(groups));
        }
        Ok(tokens)
    }

    /// [`parse`](Self::parse) of the file at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, InboxError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            InboxError::InvalidTokens(format!("{} cannot be read: {e}", path.display()))
        })?;
        Self::parse(&text)
    }

    /// How many people it knows.
    pub fn len(&self) -> usize {
        self.people.len()
    }

    /// Whether it knows nobody.
    pub fn is_empty(&self) -> bool {
        self.people.is_empty()
    }
}

impl Identify for BearerTokens {
    fn identify<'a>(&'a self, parts: &'a Parts) -> Identifying<'a> {
        let person =
            bearer(&parts.headers).and_then(|token| self.people.get(&digest(token)).cloned());
        Box::pin(future::ready(person))
    }
}

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1, the scheme in
/// any letter case), if the request carries one.
pub(crate) fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The people the tokens name, by id (letter case aside): a directory as current as the
/// token file.
impl Directory for BearerTokens {
    fn person(&self, id: &str) -> Option<Person> {
        let found = self.people.values().find(|p| p.id.eq_ignore_ascii_case(id));
        found.cloned()
    }
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokens")
            .field("people", &self.people.len())
            .finish()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}
