//! Why a door turns a caller away, and what it tells them: a caller the sign-in cannot
//! name gets 401 (RFC 6750 §3.1 `invalid_token` when credentials came), one whose valid
//! token lacks a scope the door requires gets 403 `insufficient_scope` naming the scopes,
//! so a client can ask its provider for a token that has them. Every door writes the same
//! challenge from these; nothing the client sent is echoed.

use std::fmt;

use http::request::Parts;
use http::{HeaderValue, StatusCode};

/// A request refused because no one it could be from is known: no credentials, or
/// credentials the host's sign-in does not accept. A door answers it with 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unidentified {
    sent_credentials: bool,
}

/// A request whose credentials name someone, but lack scopes the door requires (RFC 6750
/// §3.1): a door answers it with 403 and the scopes, never with who the token named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientScope {
    scopes: Vec<String>,
}

/// Why a door turns a request away ([`Admission::admit`](crate::Admission::admit),
/// [`Identify::verdict`](crate::Identify::verdict)).
///
/// ```
/// use toolnexus_inbox::Refused;
///
/// let (parts, ()) = http::Request::builder()
///     .header("authorization", "Bearer tok")
///     .body(())
///     .unwrap()
///     .into_parts();
/// let refused = Refused::unidentified(&parts);
/// assert_eq!(refused.status(), 401);
/// assert_eq!(refused.challenge(None), "Bearer error=\"invalid_token\"");
///
/// // A 401 may say which scopes to ask for.
/// let scopes = ["agent:call".to_owned()];
/// assert_eq!(
///     refused.resource_challenge_scoped(None, "https://t.example/m", &scopes),
///     "Bearer resource_metadata=\"https://t.example/m\", error=\"invalid_token\", scope=\"agent:call\""
/// );
///
/// let lacking = Refused::insufficient_scope(["agent:call"]);
/// assert_eq!(lacking.status(), 403);
/// assert_eq!(
///     lacking.resource_challenge(None, "https://t.example/.well-known/oauth-protected-resource"),
///     "Bearer resource_metadata=\"https://t.example/.well-known/oauth-protected-resource\", \
///      error=\"insufficient_scope\", scope=\"agent:call\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// Nobody the door knows: 401.
    Unidentified(Unidentified),
    /// Someone, lacking a scope the door requires: 403.
    InsufficientScope(InsufficientScope),
}

impl Unidentified {
    /// The refusal of a request with `parts`, which says whether credentials came.
    pub fn of(parts: &Parts) -> Self {
        Self {
            sent_credentials: parts.headers.contains_key(http::header::AUTHORIZATION),
        }
    }

    /// Whether the request carried credentials at all (an `Authorization` header), so the
    /// refusal may say they were not accepted.
    pub fn sent_credentials(&self) -> bool {
        self.sent_credentials
    }

    /// The `WWW-Authenticate` value the 401 carries (RFC 6750 §3): `Bearer`, with the
    /// `realm` when given, and `error="invalid_token"` when credentials came and were not
    /// accepted. Nothing the client sent is echoed.
    pub fn challenge(&self, realm: Option<&str>) -> HeaderValue {
        self.resource_challenge_opt(realm, None)
    }

    /// [`challenge`](Self::challenge) naming, as `resource_metadata`, where the door's
    /// protected resource metadata is (RFC 9728 §5.1), so a client can find where to get a
    /// token.
    pub fn resource_challenge(&self, realm: Option<&str>, metadata_url: &str) -> HeaderValue {
        self.resource_challenge_opt(realm, Some(metadata_url))
    }

    fn resource_challenge_opt(&self, realm: Option<&str>, metadata: Option<&str>) -> HeaderValue {
        let error = self.sent_credentials.then_some("invalid_token");
        challenge(realm, metadata, error, &[])
    }
}

impl fmt::Display for Unidentified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sent_credentials {
            true => f.write_str("the credentials sent identify no one this door knows"),
            false => {
                f.write_str("this door needs a credential: send `Authorization: Bearer <token>`")
            }
        }
    }
}

impl std::error::Error for Unidentified {}

impl InsufficientScope {
    /// The scopes a token must hold here.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }
}

impl fmt::Display for InsufficientScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the token does not hold the scopes this door requires: {}",
            self.scopes.join(" ")
        )
    }
}

impl std::error::Error for InsufficientScope {}

impl Refused {
    /// The refusal of a request with `parts` whose sender is not known
    /// ([`Unidentified::of`]).
    pub fn unidentified(parts: &Parts) -> Self {
        Refused::Unidentified(Unidentified::of(parts))
    }

    /// The refusal of a token that names someone but lacks `scopes`: every scope the door
    /// requires, so that the client asks for all of them at once.
    pub fn insufficient_scope<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        Refused::InsufficientScope(InsufficientScope { scopes })
    }

    /// The HTTP status a door answers with: 401 or 403.
    pub fn status(&self) -> StatusCode {
        match self {
            Refused::Unidentified(_) => StatusCode::UNAUTHORIZED,
            Refused::InsufficientScope(_) => StatusCode::FORBIDDEN,
        }
    }

    /// The `WWW-Authenticate` value the answer carries: [`Unidentified::challenge`], or,
    /// for a scope, `Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1).
    pub fn challenge(&self, realm: Option<&str>) -> HeaderValue {
        self.challenge_opt(realm, None)
    }

    /// [`challenge`](Self::challenge) naming the door's protected resource metadata as
    /// `resource_metadata` (RFC 9728 §5.1), as MCP's authorization spec has a server do in
    /// both its 401 and its 403.
    pub fn resource_challenge(&self, realm: Option<&str>, metadata_url: &str) -> HeaderValue {
        self.challenge_opt(realm, Some(metadata_url))
    }

    /// [`resource_challenge`](Self::resource_challenge) whose 401 names, as `scope`, the
    /// scopes a token for this resource needs (RFC 6750 §3), as MCP's authorization spec
    /// has a server say, so that a client asks for those and no more. A 403 names the
    /// scopes its token lacks, whatever `scopes` says.
    pub fn resource_challenge_scoped(
        &self,
        realm: Option<&str>,
        metadata_url: &str,
        scopes: &[String],
    ) -> HeaderValue {
        match self {
            Refused::Unidentified(refused) => {
                let error = refused.sent_credentials.then_some("invalid_token");
                challenge(realm, Some(metadata_url), error, scopes)
            }
            Refused::InsufficientScope(_) => self.resource_challenge(realm, metadata_url),
        }
    }

    fn challenge_opt(&self, realm: Option<&str>, metadata: Option<&str>) -> HeaderValue {
        match self {
            Refused::Unidentified(refused) => refused.resource_challenge_opt(realm, metadata),
            Refused::InsufficientScope(lacking) => {
                challenge(realm, metadata, Some("insufficient_scope"), &lacking.scopes)
            }
        }
    }
}

impl From<Unidentified> for Refused {
    fn from(refused: Unidentified) -> Self {
        Refused::Unidentified(refused)
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Unidentified(refused) => refused.fmt(f),
            Refused::InsufficientScope(lacking) => lacking.fmt(f),
        }
    }
}

impl std::error::Error for Refused {}

/// `Bearer` with its parameters, each a quoted-string stripped of what cannot be in one.
fn challenge(
    realm: Option<&str>,
    metadata_url: Option<&str>,
    error: Option<&str>,
    scopes: &[String],
) -> HeaderValue {
    // A quoted-string may hold neither a bare quote or backslash nor controls.
    let quoted = |value: &str| -> String {
        value
            .chars()
            .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
            .collect()
    };
    let mut params = Vec::new();
    if let Some(realm) = realm {
        params.push(format!("realm=\"{}\"", quoted(realm)));
    }
    if let Some(url) = metadata_url {
        params.push(format!("resource_metadata=\"{}\"", quoted(url)));
    }
    if let Some(error) = error {
        params.push(format!("error=\"{error}\""));
    }
    if !scopes.is_empty() {
        let scopes: Vec<String> = scopes.iter().map(|s| quoted(s)).collect();
        params.push(format!("scope=\"{}\"", scopes.join(" ")));
    }
    let value = match params.is_empty() {
        true => "Bearer".to_owned(),
        false => format!("Bearer {}", params.join(", ")),
    };
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}
