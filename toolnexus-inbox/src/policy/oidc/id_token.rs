//! The ID tokens a provider hands a relying party at the end of a sign-in (OpenID Connect
//! Core §3.1.3.7): signed with one of its keys by an allow-listed asymmetric algorithm,
//! from this issuer, for this client (`aud`, and `azp` when there are several audiences),
//! current (`exp`, `nbf`, `iat`, with a leeway), and carrying the nonce the sign-in sent,
//! so a token issued for another sign-in is refused. The keys are the same machinery as
//! [`OidcTokens`](super::OidcTokens)'s: read from the provider's JWKS, kept, and read again
//! when it rotates them.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::keys::Keys;
use super::{discovery, person, signed_claims, strings, SigningAlg, TokenRefused};
use crate::clock::Clock;
use crate::error::InboxError;
use crate::policy::people::Person;

/// How old an ID token may be when it arrives: the provider issues it as the code is
/// redeemed, moments before; an older one was kept somewhere.
const ISSUED_WITHIN_S: i64 = 10 * 60;

/// What the provider of a sign-in is asked for and how its ID tokens are judged.
pub(crate) struct Rules {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) algorithms: Vec<SigningAlg>,
    pub(crate) leeway: Duration,
    pub(crate) person_claim: String,
    pub(crate) groups_claim: Option<String>,
    pub(crate) refresh_floor: Duration,
    pub(crate) keys_max_age: Duration,
    pub(crate) timeout: Duration,
    pub(crate) clock: Clock,
    pub(crate) http: Option<reqwest::Client>,
}

/// A provider found for signing people in: where to send them, where to redeem the code,
/// and its keys.
pub(crate) struct SignInProvider {
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    /// Whether the token endpoint takes the client's secret as HTTP Basic
    /// (`client_secret_basic`, the default of OpenID Connect) rather than in the form.
    pub(crate) basic_auth: bool,
    pub(crate) http: reqwest::Client,
    pub(crate) id_tokens: IdTokens,
}

/// Finds the provider of `rules` and reads its keys.
pub(crate) async fn discover(rules: Rules) -> Result<SignInProvider, InboxError> {
    let issuer = rules.issuer;
    let refuse = |reason: String| InboxError::InvalidProvider {
        url: issuer.clone(),
        reason,
        source: None,
    };
    super::secure_url(&issuer).map_err(refuse)?;
    if rules.client_id.trim().is_empty() {
        return Err(refuse("the client id is empty".into()));
    }
    if rules.algorithms.is_empty() {
        return Err(refuse("the allow-list of algorithms is empty".into()));
    }
    if rules.person_claim.trim().is_empty() {
        return Err(refuse("the person claim has no name".into()));
    }
    let http = discovery::client(&issuer, rules.http, rules.timeout)?;
    let metadata = discovery::metadata(&http, &issuer).await?;
    let authorization_endpoint = discovery::endpoint(&metadata, "authorization_endpoint", &issuer)?;
    let token_endpoint = discovery::endpoint(&metadata, "token_endpoint", &issuer)?;
    let jwks_uri = discovery::endpoint(&metadata, "jwks_uri", &issuer)?;
    if discovery::listed(&metadata, "code_challenge_methods_supported")
        .is_some_and(|methods| !methods.iter().any(|m| m == "S256"))
    {
        return Err(refuse(
            "it does not take PKCE's S256 challenges (code_challenge_methods_supported)".into(),
        ));
    }
    if discovery::listed(&metadata, "response_types_supported")
        .is_some_and(|types| !types.iter().any(|t| t == "code"))
    {
        return Err(refuse(
            "it offers no authorization code flow (response_types_supported)".into(),
        ));
    }
    // Absent, the list means `client_secret_basic` alone (OpenID Connect Discovery §3).
    let methods = discovery::listed(&metadata, "token_endpoint_auth_methods_supported");
    let basic_auth = methods
        .as_ref()
        .is_none_or(|m| m.iter().any(|m| m == "client_secret_basic"));
    let keys = Keys::read(
        jwks_uri,
        http.clone(),
        rules.refresh_floor,
        rules.keys_max_age,
        rules.clock.clone(),
    )
    .await?;
    Ok(SignInProvider {
        authorization_endpoint,
        token_endpoint,
        basic_auth,
        http,
        id_tokens: IdTokens {
            issuer,
            client_id: rules.client_id,
            algorithms: rules.algorithms,
            leeway_s: i64::try_from(rules.leeway.as_secs()).unwrap_or(i64::MAX),
            person_claim: rules.person_claim,
            groups_claim: rules.groups_claim,
            keys,
            clock: rules.clock,
        },
    })
}

/// The judge of one client's ID tokens.
pub(crate) struct IdTokens {
    issuer: String,
    client_id: String,
    algorithms: Vec<SigningAlg>,
    leeway_s: i64,
    person_claim: String,
    groups_claim: Option<String>,
    keys: Keys,
    clock: Clock,
}

impl IdTokens {
    /// The issuer the tokens come from.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The person ID token `token` names, if it is this client's, current, and carries
    /// `nonce`.
    pub(crate) async fn verify(&self, token: &str, nonce: &str) -> Result<Person, IdTokenRefused> {
        let claims = signed_claims(&self.keys, &self.algorithms, token).await?;
        self.judge(&claims, nonce)
    }

    fn judge(&self, claims: &Map<String, Value>, nonce: &str) -> Result<Person, IdTokenRefused> {
        let now = self.clock.now_ms().div_euclid(1000);
        let time = |name: &'static str| match claims.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|t| t.is_finite())
                .map(|t| Some(t.floor() as i64))
                .ok_or(TokenRefused::Malformed("a time claim is not a number")),
        };
        if claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(TokenRefused::Issuer.into());
        }
        let audiences = strings(claims.get("aud"));
        if !audiences.contains(&self.client_id) {
            return Err(TokenRefused::Audience.into());
        }
        // Core §3.1.3.7 (4, 5): with other audiences beside this client, `azp` must name it.
        let azp = claims.get("azp").and_then(Value::as_str);
        if azp.is_some_and(|azp| azp != self.client_id) || (audiences.len() > 1 && azp.is_none()) {
            return Err(IdTokenRefused::AuthorizedParty);
        }
        let exp = time("exp")?.ok_or(TokenRefused::Malformed("it has no `exp`"))?;
        if now > exp.saturating_add(self.leeway_s) {
            return Err(TokenRefused::Expired.into());
        }
        if time("nbf")?.is_some_and(|nbf| now.saturating_add(self.leeway_s) < nbf) {
            return Err(TokenRefused::NotYetValid.into());
        }
        let iat = time("iat")?.ok_or(TokenRefused::Malformed("it has no `iat`"))?;
        if iat > now.saturating_add(self.leeway_s)
            || now.saturating_sub(iat) > ISSUED_WITHIN_S.saturating_add(self.leeway_s)
        {
            return Err(IdTokenRefused::IssuedAt);
        }
        if claims.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Err(IdTokenRefused::Nonce);
        }
        Ok(person(
            claims,
            &self.person_claim,
            self.groups_claim.as_deref(),
        )?)
    }
}

/// Why an ID token names no one: for the host's log, never for the person signing in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdTokenRefused {
    /// What any of the provider's tokens can be refused for.
    Token(TokenRefused),
    /// Its `nonce` is not the one this sign-in sent: it was issued for another.
    Nonce,
    /// Its `iat` is in the future, or too long ago.
    IssuedAt,
    /// It is for several audiences and does not name this client as its `azp`, or names
    /// another.
    AuthorizedParty,
}

impl From<TokenRefused> for IdTokenRefused {
    fn from(refused: TokenRefused) -> Self {
        IdTokenRefused::Token(refused)
    }
}

impl fmt::Display for IdTokenRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdTokenRefused::Token(refused) => refused.fmt(f),
            IdTokenRefused::Nonce => f.write_str("the ID token's nonce is not this sign-in's"),
            IdTokenRefused::IssuedAt => {
                f.write_str("the ID token was issued in the future or too long ago (iat)")
            }
            IdTokenRefused::AuthorizedParty => {
                f.write_str("the ID token's authorized party (azp) is not this client")
            }
        }
    }
}
