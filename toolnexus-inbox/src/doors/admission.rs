//! Who a door takes a request from, decided the same way at every door: the host's
//! sign-in names the caller, a door without one has a single responder, and a caller
//! the sign-in does not know is refused unless the door was opened to anonymous callers
//! on purpose. The door maps a refusal to its protocol's 401, or 403 for a token lacking a
//! scope it requires; the challenge it sends is written by the refusal
//! ([`Refused`]), so every door says the same thing to a client that must sign in.

use std::fmt;
use std::sync::Arc;

use http::request::Parts;

use crate::policy::identify::Identify;
use crate::policy::people::Person;
use crate::policy::refusal::{Refused, Unidentified};

/// The most bytes a request body may have at a door unless told otherwise: room for a
/// long conversation, bounded so one request cannot take the server's memory.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// Who a door takes requests from: the person the host's sign-in
/// ([`Identify`]) names, or, at a door without one, its responder.
///
/// Closed by default: with a hook, a caller it does not know is refused unless
/// [`allow_anonymous`](Self::allow_anonymous) lets them in as a stand-in labelled like the
/// responder, who shares what such callers start and never counts toward a quorum of
/// several people.
///
/// ```
/// use toolnexus_inbox::{Admission, BearerTokens, Person};
///
/// let tokens = BearerTokens::new().with("tok-ada", Person::new("ada@example.com"));
/// let door = Admission::new(Person::stand_in("web client")).identify(tokens);
///
/// let (parts, ()) = http::Request::builder()
///     .header("authorization", "Bearer tok-ada")
///     .body(())
///     .unwrap()
///     .into_parts();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// assert_eq!(door.caller(&parts).await.unwrap().id, "ada@example.com");
///
/// let (parts, ()) = http::Request::new(()).into_parts();
/// let refused = door.caller(&parts).await.unwrap_err();
/// assert_eq!(refused.challenge(Some("Shop")), "Bearer realm=\"Shop\"");
/// # });
/// ```
#[derive(Clone)]
pub struct Admission {
    identify: Option<Arc<dyn Identify>>,
    responder: Person,
    allow_anonymous: bool,
    require_identity: bool,
}

impl Admission {
    /// A door where every caller is `responder` until a hook is given
    /// ([`identify`](Self::identify)).
    pub fn new(responder: impl Into<Person>) -> Self {
        Self {
            identify: None,
            responder: responder.into(),
            allow_anonymous: false,
            require_identity: false,
        }
    }

    /// Names each caller with `hook`, refusing whoever it does not know.
    pub fn identify(mut self, hook: impl Identify) -> Self {
        self.identify = Some(Arc::new(hook));
        self
    }

    /// Who every caller is at a door without a hook, and the label of the stand-in
    /// anonymous callers come as.
    pub fn responder(mut self, who: impl Into<Person>) -> Self {
        self.responder = who.into();
        self
    }

    /// Whether a caller the hook does not know comes in as a stand-in instead of being
    /// refused. Without a hook it changes nothing.
    pub fn allow_anonymous(mut self, allow: bool) -> Self {
        self.allow_anonymous = allow;
        self
    }

    /// Whether a door without a hook refuses every caller instead of taking them as the
    /// responder: for a host that must not serve before its sign-in is wired.
    pub fn require_identity(mut self, require: bool) -> Self {
        self.require_identity = require;
        self
    }

    /// Whether a hook names the callers.
    pub fn identifies(&self) -> bool {
        self.identify.is_some()
    }

    /// Whether callers a hook does not know come in as a stand-in.
    pub fn allows_anonymous(&self) -> bool {
        self.allow_anonymous
    }

    /// Whether a door without a hook refuses everyone.
    pub fn requires_identity(&self) -> bool {
        self.require_identity
    }

    /// Who every caller is without a hook.
    pub fn responder_person(&self) -> &Person {
        &self.responder
    }

    /// Who sent a request with `parts`, read from its headers alone so that a caller who
    /// must be known is refused before their body is read. A token lacking a required
    /// scope is refused here like any other: [`admit`](Self::admit) tells the two apart.
    pub async fn caller(&self, parts: &Parts) -> Result<Person, Unidentified> {
        self.admit(parts).await.map_err(|refused| match refused {
            Refused::Unidentified(refused) => refused,
            Refused::InsufficientScope(_) => Unidentified::of(parts),
        })
    }

    /// [`caller`](Self::caller), saying why a caller is refused: unknown (401), or known by
    /// a token that lacks a scope the hook requires (403, [`Identify::verdict`]). Where
    /// anonymous callers are allowed, both come in as the stand-in, as they would without
    /// their token.
    pub async fn admit(&self, parts: &Parts) -> Result<Person, Refused> {
        match &self.identify {
            Some(hook) => match hook.verdict(parts).await {
                Ok(person) => Ok(person),
                Err(_) if self.allow_anonymous => Ok(Person::stand_in(self.responder.id.clone())),
                Err(refused) => Err(refused),
            },
            None if self.require_identity => Err(Refused::unidentified(parts)),
            None => Ok(self.responder.clone()),
        }
    }
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The hook is the host's and may hold credentials: only whether there is one shows.
        f.debug_struct("Admission")
            .field("identify", &self.identify.is_some())
            .field("responder", &self.responder.id)
            .field("allow_anonymous", &self.allow_anonymous)
            .field("require_identity", &self.require_identity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{Admission, Person, Refused};

    fn parts(authorization: Option<&str>) -> http::request::Parts {
        let mut request = http::Request::builder();
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        request
            .body(())
            .map(|r| r.into_parts().0)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn ada(parts: &http::request::Parts) -> Option<Person> {
        let sent = parts.headers.get("authorization")?;
        (sent == "Bearer tok-ada").then(|| Person::new("ada@example.com"))
    }

    #[tokio::test]
    async fn without_a_hook_every_caller_is_the_responder_unless_identity_is_required() {
        let door = Admission::new(Person::stand_in("client"));
        assert_eq!(
            door.caller(&parts(None)).await,
            Ok(Person::stand_in("client"))
        );
        let closed = door.require_identity(true);
        assert!(closed.caller(&parts(None)).await.is_err());
    }

    #[tokio::test]
    async fn a_hook_names_callers_and_refuses_strangers_unless_anonymous_is_allowed() {
        let door = Admission::new(Person::stand_in("client")).identify(ada);
        let known = door.caller(&parts(Some("Bearer tok-ada"))).await;
        assert_eq!(known.map(|p| p.id), Ok("ada@example.com".to_owned()));
        let stranger = door.caller(&parts(Some("Bearer nope"))).await;
        assert_eq!(
            stranger.map(|p| p.id),
            Err(super::Unidentified::of(&parts(Some("x"))))
        );
        let open = door.allow_anonymous(true);
        let stand_in = open.caller(&parts(None)).await.map(|p| p.is_identified());
        assert_eq!(stand_in, Ok(false));
    }

    #[tokio::test]
    async fn the_challenge_quotes_the_realm_and_says_when_a_token_was_refused() {
        let door = Admission::new(Person::stand_in("client")).identify(ada);
        let none = door
            .caller(&parts(None))
            .await
            .err()
            .map(|r| r.challenge(None));
        assert_eq!(none.as_ref().map(|v| v.as_bytes()), Some(&b"Bearer"[..]));
        let refused = door.caller(&parts(Some("Bearer x"))).await.err();
        let value = refused.map(|r| r.challenge(Some("Shop \"agent\"\\")));
        assert_eq!(
            value.as_ref().map(|v| v.as_bytes()),
            Some(&b"Bearer realm=\"Shop agent\", error=\"invalid_token\""[..])
        );
    }

    #[tokio::test]
    async fn the_resource_challenge_names_the_metadata_quoted() {
        let door = Admission::new(Person::stand_in("client")).identify(ada);
        let refused = door.caller(&parts(Some("Bearer x"))).await.err();
        let url = "https://t.example/.well-known/oauth-protected-resource/mcp\", x=\"y";
        let value = refused.map(|r| r.resource_challenge(None, url));
        assert_eq!(
            value.as_ref().map(|v| v.as_bytes()),
            Some(&b"Bearer resource_metadata=\"https://t.example/.well-known/oauth-protected-resource/mcp, x=y\", error=\"invalid_token\""[..])
        );
    }

    /// A hook that knows ada, and knows a token that lacks the scope it requires.
    struct Scoped;

    impl crate::Identify for Scoped {
        fn identify<'a>(&'a self, parts: &'a http::request::Parts) -> crate::Identifying<'a> {
            Box::pin(std::future::ready(ada(parts)))
        }

        fn verdict<'a>(&'a self, parts: &'a http::request::Parts) -> crate::Verdict<'a> {
            let sent = parts.headers.get("authorization");
            let verdict = match ada(parts) {
                Some(ada) => Ok(ada),
                None if sent.is_some_and(|s| s == "Bearer tok-narrow") => {
                    Err(Refused::insufficient_scope(["agent:call"]))
                }
                None => Err(Refused::unidentified(parts)),
            };
            Box::pin(std::future::ready(verdict))
        }
    }

    #[tokio::test]
    async fn admit_tells_a_token_lacking_a_scope_from_a_stranger() {
        let door = Admission::new(Person::stand_in("client")).identify(Scoped);
        let narrow = parts(Some("Bearer tok-narrow"));
        let refused = door.admit(&narrow).await.expect_err("refused");
        assert_eq!(refused, Refused::insufficient_scope(["agent:call"]));
        assert_eq!(refused.status(), 403);
        // `caller` keeps its 401-only answer.
        let unidentified = door.caller(&narrow).await.expect_err("refused");
        assert!(unidentified.sent_credentials());
        let stranger = door.admit(&parts(Some("Bearer x"))).await;
        assert_eq!(stranger.map_err(|r| r.status().as_u16()), Err(401));
        // A door open to anonymous callers lets them in as the stand-in, as without a token.
        let open = door.allow_anonymous(true);
        let stand_in = open.admit(&narrow).await.map(|p| p.is_identified());
        assert_eq!(stand_in, Ok(false));
    }

    #[test]
    fn debug_shows_no_hook() {
        let door = Admission::new(Person::stand_in("client")).identify(ada);
        let shown = format!("{door:?}");
        assert!(shown.contains("identify: true"), "{shown}");
    }
}
