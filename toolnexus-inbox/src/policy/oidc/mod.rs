//! Callers known by the JWT access tokens an OpenID provider issues them (RFC 9068): a
//! resource server's check, as an [`Identify`] every door can take. The provider is found
//! by its issuer URL (OpenID Connect Discovery), its keys are read from its JWKS and kept,
//! and read again when it rotates them.
//!
//! What a token must be to name anyone: a JWS signed with one of the provider's keys by an
//! asymmetric algorithm of the allow-list (never `none`, never an HMAC: the provider's
//! public key is public), from this issuer, for this audience, current (`exp`, `nbf`, with
//! a small leeway for clocks), naming a person in its configured claim and holding the
//! scopes required. Why a token was refused goes to the log; the caller learns nothing
//! more than the door's 401 says, or, for a token good but for a required scope, the 403
//! naming the scopes required.

mod discovery;
// The page's sign-in (`web`) is what reads ID tokens.
#[cfg(feature = "web")]
pub(crate) mod id_token;
mod keys;

use std::collections::HashSet;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use http::request::Parts;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use self::keys::{Key, Keys, Missing};
use crate::clock::Clock;
use crate::error::InboxError;
use crate::policy::identify::{bearer, Identify, Identifying, Verdict};
use crate::policy::people::Person;
use crate::policy::refusal::Refused;

/// The longest token read: a provider's access tokens are a few kilobytes; a bigger one is
/// refused before anything of it is decoded.
const MAX_TOKEN: usize = 16 * 1024;

/// An asymmetric JWS algorithm (RFC 7518 §3, RFC 8037) a token may be signed with. There is
/// no `none` and no HMAC here: a resource server holds only the provider's public keys, and
/// a token "signed" with one as an HMAC secret is a forgery anyone can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlg {
    /// RSASSA-PKCS1-v1_5 with SHA-256: what most providers sign with.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// Ed25519.
    EdDSA,
}

impl SigningAlg {
    /// Every algorithm verified here: the default allow-list.
    pub const ALL: [SigningAlg; 9] = [
        SigningAlg::RS256,
        SigningAlg::RS384,
        SigningAlg::RS512,
        SigningAlg::PS256,
        SigningAlg::PS384,
        SigningAlg::PS512,
        SigningAlg::ES256,
        SigningAlg::ES384,
        SigningAlg::EdDSA,
    ];

    /// Its name in a JWS header's `alg`.
    pub fn as_str(self) -> &'static str {
        match self {
            SigningAlg::RS256 => "RS256",
            SigningAlg::RS384 => "RS384",
            SigningAlg::RS512 => "RS512",
            SigningAlg::PS256 => "PS256",
            SigningAlg::PS384 => "PS384",
            SigningAlg::PS512 => "PS512",
            SigningAlg::ES256 => "ES256",
            SigningAlg::ES384 => "ES384",
            SigningAlg::EdDSA => "EdDSA",
        }
    }

    /// The algorithm a header's `alg` names, if it is one of these.
    pub fn from_name(name: &str) -> Option<SigningAlg> {
        SigningAlg::ALL.into_iter().find(|alg| alg.as_str() == name)
    }

    fn algorithm(self) -> Algorithm {
        match self {
            SigningAlg::RS256 => Algorithm::RS256,
            SigningAlg::RS384 => Algorithm::RS384,
            SigningAlg::RS512 => Algorithm::RS512,
            SigningAlg::PS256 => Algorithm::PS256,
            SigningAlg::PS384 => Algorithm::PS384,
            SigningAlg::PS512 => Algorithm::PS512,
            SigningAlg::ES256 => Algorithm::ES256,
            SigningAlg::ES384 => Algorithm::ES384,
            SigningAlg::EdDSA => Algorithm::EdDSA,
        }
    }
}

impl fmt::Display for SigningAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// People known by the JWT access tokens an OpenID provider issued for this service
/// (`Authorization: Bearer <jwt>`): an [`Identify`] for every door.
///
/// Built with [`OidcTokens::builder`], which finds the provider and reads its keys once;
/// cloning shares the keys. Tokens are never logged nor shown by `Debug`.
///
/// ```no_run
/// use toolnexus_inbox::OidcTokens;
///
/// # async fn build() -> Result<(), toolnexus_inbox::InboxError> {
/// let tokens = OidcTokens::builder("https://login.example.com/realms/staff")
///     .audience("https://agents.example.com")
///     .person_claim("email")
///     .groups_claim("groups")
///     .require_scopes(["agent:call"])
///     .build()
///     .await?;
/// // A door takes it as its sign-in, e.g. `A2aServer::builder(…).identify(tokens)`.
/// # let _ = tokens;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OidcTokens {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<SigningAlg>,
    leeway_s: i64,
    person_claim: String,
    groups_claim: Option<String>,
    required_scopes: Vec<String>,
    keys: Keys,
    clock: Clock,
}

/// How [`OidcTokens`] are checked; [`build`](Self::build) finds the provider.
#[must_use = "a builder does nothing until `build` is awaited"]
pub struct OidcTokensBuilder {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<SigningAlg>,
    leeway: Duration,
    person_claim: String,
    groups_claim: Option<String>,
    required_scopes: Vec<String>,
    refresh_floor: Duration,
    keys_max_age: Duration,
    timeout: Duration,
    clock: Clock,
    http: Option<reqwest::Client>,
}

impl OidcTokens {
    /// Tokens of the provider whose issuer identifier is `issuer` (exactly as its tokens'
    /// `iss` says it, e.g. `https://login.example.com/realms/staff`).
    pub fn builder(issuer: impl Into<String>) -> OidcTokensBuilder {
        OidcTokensBuilder {
            issuer: issuer.into(),
            audiences: Vec::new(),
            algorithms: SigningAlg::ALL.to_vec(),
            leeway: Duration::from_secs(60),
            person_claim: "sub".to_owned(),
            groups_claim: None,
            required_scopes: Vec::new(),
            refresh_floor: Duration::from_secs(30),
            keys_max_age: Duration::from_secs(60 * 60),
            timeout: Duration::from_secs(10),
            clock: Clock::system(),
            http: None,
        }
    }

    /// The issuer its tokens come from.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The scopes every token must hold ([`OidcTokensBuilder::require_scopes`]): what a
    /// door's metadata may advertise, and what its 403 names.
    pub fn required_scopes(&self) -> &[String] {
        &self.inner.required_scopes
    }

    /// The person `token` (the bearer token itself, without `Bearer `) names, or why it
    /// names no one: for a host that reads tokens from elsewhere than the `Authorization`
    /// header. The reason is for the host's log, never for the caller.
    pub async fn verify(&self, token: &str) -> Result<Person, TokenRefused> {
        let claims = signed_claims(&self.inner.keys, &self.inner.algorithms, token).await?;
        self.judge(&claims)
    }

    /// The person the verified `claims` name, if they are this service's and current.
    fn judge(&self, claims: &Map<String, Value>) -> Result<Person, TokenRefused> {
        let inner = &*self.inner;
        let now = inner.clock.now_ms().div_euclid(1000);
        let time = |name: &'static str| match claims.get(name) {
            None => Ok(None),
            // NumericDate may carry a fraction (RFC 7519 §2); whole seconds are enough.
            Some(v) => v
                .as_f64()
                .filter(|t| t.is_finite())
                .map(|t| Some(t.floor() as i64))
                .ok_or(TokenRefused::Malformed("a time claim is not a number")),
        };
        let exp = time("exp")?.ok_or(TokenRefused::Malformed("it has no `exp`"))?;
        if now > exp.saturating_add(inner.leeway_s) {
            return Err(TokenRefused::Expired);
        }
        if time("nbf")?.is_some_and(|nbf| now.saturating_add(inner.leeway_s) < nbf) {
            return Err(TokenRefused::NotYetValid);
        }
        if claims.get("iss").and_then(Value::as_str) != Some(inner.issuer.as_str()) {
            return Err(TokenRefused::Issuer);
        }
        let audiences = strings(claims.get("aud"));
        if !audiences.iter().any(|aud| inner.audiences.contains(aud)) {
            return Err(TokenRefused::Audience);
        }
        let person = person(claims, &inner.person_claim, inner.groups_claim.as_deref())?;
        // Judged last: a token lacking a scope is otherwise good, and the door tells its
        // client so (403), which it must not for a token that names no one.
        if !inner.required_scopes.is_empty() {
            let held: HashSet<String> = match claims.get("scope") {
                Some(scope) => words(scope),
                // Entra ID and others list them as `scp`.
                None => claims.get("scp").map(words).unwrap_or_default(),
            };
            if let Some(missing) = inner.required_scopes.iter().find(|s| !held.contains(*s)) {
                return Err(TokenRefused::Scope(missing.clone()));
            }
        }
        Ok(person)
    }
}

impl Identify for OidcTokens {
    fn identify<'a>(&'a self, parts: &'a Parts) -> Identifying<'a> {
        Box::pin(async move { self.verdict(parts).await.ok() })
    }

    /// A token that is good but for a required scope is
    /// [`Refused::InsufficientScope`], naming every required scope; any other refusal is
    /// [`Refused::Unidentified`], its reason logged and not told.
    fn verdict<'a>(&'a self, parts: &'a Parts) -> Verdict<'a> {
        Box::pin(async move {
            let token = bearer(&parts.headers).ok_or_else(|| Refused::unidentified(parts))?;
            self.verify(token).await.map_err(|refusal| {
                tracing::info!(issuer = %self.inner.issuer, reason = %refusal, "a bearer token was refused");
                match refusal {
                    TokenRefused::Scope(_) => {
                        Refused::insufficient_scope(self.inner.required_scopes.iter().cloned())
                    }
                    _ => Refused::unidentified(parts),
                }
            })
        })
    }
}

impl fmt::Debug for OidcTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcTokens")
            .field("issuer", &self.inner.issuer)
            .field("audiences", &self.inner.audiences)
            .field("keys", &self.inner.keys.len())
            .finish_non_exhaustive()
    }
}

impl OidcTokensBuilder {
    /// An audience the tokens must be issued for (their `aud`): this service's resource
    /// identifier at the provider. At least one is required; a token for any of them is
    /// taken.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The algorithms a token may be signed with, of those [`SigningAlg`] offers; all of
    /// them unless told.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlg>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// How far apart this host's clock and the provider's may be when `exp` and `nbf` are
    /// checked; 60 seconds unless told.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The claim that names the person: `sub` unless told (`email`, `preferred_username`,
    /// `oid`…). A dotted name reaches into nested claims when no claim has the whole name.
    pub fn person_claim(mut self, claim: impl Into<String>) -> Self {
        self.person_claim = claim.into();
        self
    }

    /// The claim that lists the person's groups: an array of names (`groups`, `roles`,
    /// `realm_access.roles`) or a space-separated string (`scope`). None unless told.
    pub fn groups_claim(mut self, claim: impl Into<String>) -> Self {
        self.groups_claim = Some(claim.into());
        self
    }

    /// Scopes every token must hold (in `scope`, or `scp`), beside being for this audience.
    pub fn require_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The least time between two reads of the provider's keys caused by tokens naming a
    /// key it does not hold; 30 seconds unless told. A rotation is followed at once; a
    /// flood of made-up key ids costs the provider one read per floor.
    pub fn refresh_floor(mut self, floor: Duration) -> Self {
        self.refresh_floor = floor;
        self
    }

    /// How long the provider's keys are used before they are read again, so a key it
    /// withdrew stops verifying; an hour unless told. While the provider cannot be
    /// reached, the keys held go on verifying.
    pub fn keys_max_age(mut self, max_age: Duration) -> Self {
        self.keys_max_age = max_age;
        self
    }

    /// How long a read of the provider's documents may take, connection included; 10
    /// seconds unless told. A request waiting on a read waits no longer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Where the validator reads the time, for `exp`, `nbf` and the refresh floor: this
    /// host's clock unless told (a test moves its own).
    pub fn clock(mut self, now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Clock::custom(now);
        self
    }

    /// The HTTP client that reads the provider's documents (for a host's proxy or its own
    /// roots). Its own timeouts apply then, not [`timeout`](Self::timeout)'s.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Finds the provider (`{issuer}/.well-known/openid-configuration`, whose `issuer`
    /// must be the one configured) and reads its keys. [`InboxError::InvalidProvider`]
    /// says what is wrong: a setting, the provider's answer, or that it cannot be reached.
    pub async fn build(self) -> Result<OidcTokens, InboxError> {
        let issuer = self.issuer;
        let refuse = |reason: String| InboxError::InvalidProvider {
            url: issuer.clone(),
            reason,
            source: None,
        };
        secure_url(&issuer).map_err(refuse)?;
        if self.audiences.is_empty() || self.audiences.iter().any(|a| a.trim().is_empty()) {
            return Err(refuse(
                "no audience: name this service's resource identifier with `audience`".into(),
            ));
        }
        if self.algorithms.is_empty() {
            return Err(refuse("the allow-list of algorithms is empty".into()));
        }
        if self.person_claim.trim().is_empty() {
            return Err(refuse("the person claim has no name".into()));
        }
        let http = discovery::client(&issuer, self.http, self.timeout)?;
        let metadata = discovery::metadata(&http, &issuer).await?;
        let jwks_uri = discovery::endpoint(&metadata, "jwks_uri", &issuer)?;
        let keys = Keys::read(
            jwks_uri,
            http,
            self.refresh_floor,
            self.keys_max_age,
            self.clock.clone(),
        )
        .await?;
        let leeway_s = i64::try_from(self.leeway.as_secs()).unwrap_or(i64::MAX);
        Ok(OidcTokens {
            inner: Arc::new(Inner {
                issuer,
                audiences: self.audiences,
                algorithms: self.algorithms,
                leeway_s,
                person_claim: self.person_claim,
                groups_claim: self.groups_claim,
                required_scopes: self.required_scopes,
                keys,
                clock: self.clock,
            }),
        })
    }
}

impl fmt::Debug for OidcTokensBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcTokensBuilder")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .finish_non_exhaustive()
    }
}

/// Why a token names no one ([`OidcTokens::verify`]): for the host's log, never for the
/// caller, who is told only that the token was not accepted. Nothing of the token is in
/// it but, shortened and quoted, the algorithm or key id its header names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenRefused {
    /// It is not a JWS this validator can read; why.
    Malformed(&'static str),
    /// Its algorithm is not on the allow-list, or not one the named key is for.
    Algorithm(String),
    /// The key it names is not among the provider's keys, even as just read.
    UnknownKey(String),
    /// The key it names was not among the provider's keys, which were read too recently
    /// to be read again (the refresh floor).
    UnknownKeyFloor(String),
    /// The provider's keys cannot be read.
    KeysUnreachable,
    /// Its signature does not verify with the key it names.
    Signature,
    /// Its `exp` has passed, leeway included.
    Expired,
    /// Its `nbf` has not come yet, leeway included.
    NotYetValid,
    /// Its `iss` is not the provider's.
    Issuer,
    /// Its `aud` names none of this service's audiences.
    Audience,
    /// It lacks this required scope.
    Scope(String),
    /// It has no claim of this name holding a person's id.
    NoPerson(String),
}

impl std::error::Error for TokenRefused {}

impl fmt::Display for TokenRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenRefused::Malformed(why) => write!(f, "the token is malformed: {why}"),
            TokenRefused::Algorithm(alg) => write!(f, "the algorithm {alg} is not allowed"),
            TokenRefused::UnknownKey(kid) => write!(f, "the key {kid} is not the provider's"),
            TokenRefused::UnknownKeyFloor(kid) => write!(
                f,
                "the key {kid} is not among the provider's keys, read again too recently to read now"
            ),
            TokenRefused::KeysUnreachable => f.write_str("the provider's keys cannot be read"),
            TokenRefused::Signature => f.write_str("the signature does not verify"),
            TokenRefused::Expired => f.write_str("the token has expired"),
            TokenRefused::NotYetValid => f.write_str("the token is not valid yet (nbf)"),
            TokenRefused::Issuer => f.write_str("the token is from another issuer"),
            TokenRefused::Audience => f.write_str("the token is for another audience"),
            TokenRefused::Scope(scope) => write!(f, "the token lacks the scope {scope:?}"),
            TokenRefused::NoPerson(claim) => write!(f, "the token has no {claim:?} claim naming a person"),
        }
    }
}

/// The claims of `token` once it proves to be a JWS signed with one of `keys` by one of
/// `algorithms`; what they say is judged apart, by the kind of token it is.
async fn signed_claims(
    keys: &Keys,
    algorithms: &[SigningAlg],
    token: &str,
) -> Result<Map<String, Value>, TokenRefused> {
    if token.len() > MAX_TOKEN {
        return Err(TokenRefused::Malformed("it is over 16 KiB"));
    }
    let header = header(token)?;
    let alg_name = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or(TokenRefused::Malformed("its header has no `alg`"))?;
    let alg = SigningAlg::from_name(alg_name)
        .filter(|alg| algorithms.contains(alg))
        .ok_or_else(|| TokenRefused::Algorithm(shown(alg_name)))?;
    if header.contains_key("crit") {
        // RFC 7515 §4.1.11: extensions this validator does not know must be refused.
        return Err(TokenRefused::Malformed(
            "its header names critical extensions",
        ));
    }
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or(TokenRefused::Malformed("its header has no `kid`"))?;
    let key = keys.key(kid).await.map_err(|missing| match missing {
        Missing::Unknown => TokenRefused::UnknownKey(shown(kid)),
        Missing::Floor => TokenRefused::UnknownKeyFloor(shown(kid)),
        Missing::Unreachable => TokenRefused::KeysUnreachable,
    })?;
    verify(token, alg, &key)
}

/// The person verified `claims` name: their id from `person_claim`, their groups from
/// `groups_claim` (sorted), their display name from `name`.
fn person(
    claims: &Map<String, Value>,
    person_claim: &str,
    groups_claim: Option<&str>,
) -> Result<Person, TokenRefused> {
    let id = claim(claims, person_claim)
        .and_then(Value::as_str)
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| TokenRefused::NoPerson(person_claim.to_owned()))?;
    let groups = match groups_claim {
        Some(name) => claim(claims, name).map(words).unwrap_or_default(),
        None => HashSet::new(),
    };
    let mut groups: Vec<String> = groups.into_iter().collect();
    groups.sort();
    let mut person = Person::new(id).groups(groups);
    if let Some(name) = claims.get("name").and_then(Value::as_str) {
        person = person.name(name);
    }
    Ok(person)
}

/// The token's JOSE header, read without trusting it.
fn header(token: &str) -> Result<Map<String, Value>, TokenRefused> {
    let mut segments = token.split('.');
    let (Some(first), Some(_), Some(_), None) = (
        segments.next(),
        segments.next(),
        segments.next(),
        segments.next(),
    ) else {
        return Err(TokenRefused::Malformed(
            "it is not three dot-separated segments",
        ));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(first)
        .map_err(|_| TokenRefused::Malformed("its header is not base64url"))?;
    serde_json::from_slice(&bytes)
        .map_err(|_| TokenRefused::Malformed("its header is not a JSON object"))
}

/// The claims of `token` once its signature verifies with `key` under `alg`. The claims
/// are judged apart ([`OidcTokens::judge`]) against the validator's own clock.
fn verify(token: &str, alg: SigningAlg, key: &Key) -> Result<Map<String, Value>, TokenRefused> {
    if !key.fits(alg) {
        return Err(TokenRefused::Algorithm(format!(
            "{alg} (not one the named key is for)"
        )));
    }
    let mut validation = Validation::new(alg.algorithm());
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
        .map(|data| data.claims)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => TokenRefused::Signature,
            _ => TokenRefused::Malformed("its signature or claims cannot be read"),
        })
}

/// The claim `name`, or, when there is none of that name, the nested one a dotted name
/// reaches (`realm_access.roles`).
fn claim<'c>(claims: &'c Map<String, Value>, name: &str) -> Option<&'c Value> {
    claims.get(name).or_else(|| {
        let mut parts = name.split('.');
        let first = claims.get(parts.next()?)?;
        parts.try_fold(first, |value, part| value.get(part))
    })
}

/// The strings a claim holds: one string, or an array of them.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The words a claim holds: a space-separated string (`scope`) or an array of names.
fn words(value: &Value) -> HashSet<String> {
    match value {
        Value::String(s) => s.split_whitespace().map(str::to_owned).collect(),
        other => strings(Some(other))
            .into_iter()
            .filter(|w| !w.trim().is_empty())
            .collect(),
    }
}

/// A value the caller chose, fit for a log line: short, and with its quotes escaped.
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(64).collect();
    format!("{cut:?}")
}

/// Whether `url` may be read for keys: https, or http to this host alone (a provider
/// beside the service, or in a test).
fn secure_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|_| format!("{url:?} is not an absolute URL"))?;
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
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "{url:?} is neither https nor http to this host: keys read in the clear could be anyone's"
        )),
    }
}
