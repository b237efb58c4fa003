//! Access tokens checked by [`OidcTokens`] against a real OpenID provider (panva's
//! `oidc-provider`, `TOOLNEXUS_TEST_OIDC`, set up by scripts/test.sh): what it accepts
//! and names, what it refuses (forgeries included), how it follows a key rotation and
//! keeps its refresh floor, and the same tokens at a door.

mod door;
mod forged;
mod keys;
mod sign_in;
mod tokens;

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};
use toolnexus_inbox::{Identify, OidcTokens, OidcTokensBuilder, Person, Refused, TokenRefused};
use toolnexus_test_support::oidc::Provider;

/// The resource the validator guards: the audience its tokens must be for.
const AUDIENCE: &str = "https://agent.toolnexus.test";
/// Another resource of the same provider's.
const OTHER: &str = "https://other.toolnexus.test";

/// A validator of `provider`'s tokens for [`AUDIENCE`], naming people by `email` and
/// their groups by `groups`, refined by `more`.
async fn validator(
    provider: &Provider,
    more: impl FnOnce(OidcTokensBuilder) -> OidcTokensBuilder,
) -> OidcTokens {
    let builder = OidcTokens::builder(provider.issuer())
        .audience(AUDIENCE)
        .person_claim("email")
        .groups_claim("groups");
    more(builder)
        .build()
        .await
        .unwrap_or_else(|e| panic!("the validator builds: {e}"))
}

/// Whom `tokens` names for a request carrying `token` as its bearer token.
async fn who(tokens: &OidcTokens, token: &str) -> Option<Person> {
    let (parts, ()) = http::Request::builder()
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_parts();
    tokens.identify(&parts).await
}

/// What a door hears from `tokens` for a request carrying `token`, if any, as its bearer
/// token.
async fn verdict(tokens: &OidcTokens, token: Option<&str>) -> Result<Person, Refused> {
    let mut request = http::Request::builder();
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let (parts, ()) = request
        .body(())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_parts();
    tokens.verdict(&parts).await
}

/// Why `tokens` names nobody for `token`; a door asking through `Identify` right after
/// gets nobody too.
async fn refusal(tokens: &OidcTokens, token: &str) -> TokenRefused {
    let refused = match tokens.verify(token).await {
        Ok(person) => panic!("the token names {person:?}"),
        Err(refused) => refused,
    };
    assert_eq!(who(tokens, token).await, None, "a door gets nobody");
    refused
}

/// The JSON of one of a JWT's first two segments.
fn segment(token: &str, index: usize) -> Map<String, Value> {
    let part = token
        .split('.')
        .nth(index)
        .expect("a JWT has three segments");
    let bytes = URL_SAFE_NO_PAD.decode(part).expect("base64url");
    serde_json::from_slice(&bytes).expect("a JSON object")
}

/// The key id in a token's header.
fn kid(token: &str) -> String {
    segment(token, 0)["kid"]
        .as_str()
        .expect("the provider names its key")
        .to_owned()
}

/// How long the provider's access tokens live (its `accessTokenTTL`).
const TOKEN_LIFETIME: Duration = Duration::from_secs(300);
