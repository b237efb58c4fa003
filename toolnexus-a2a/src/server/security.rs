//! How the card tells a client where to get the bearer token the agent takes: an OpenID
//! provider (`openIdConnect`, its discovery document) or an OAuth 2.0 token endpoint with
//! the client-credentials flow (`oauth2`), and the scopes a token must hold, as the card's
//! security requirement. The door checks tokens with its identify hook; this only says
//! where they come from.

use std::collections::HashMap;

use a2a::{
    ClientCredentialsOAuthFlow, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme,
    SecurityRequirement, SecurityScheme,
};

use crate::error::A2aError;

/// Where a client gets the token this agent takes, as its card declares it
/// ([`A2aServerBuilder::card_security`](crate::A2aServerBuilder::card_security)): the
/// card's `securitySchemes` holds one scheme, and its `securityRequirements` names it with
/// the scopes a token must hold.
///
/// ```
/// use toolnexus_a2a::CardSecurity;
///
/// // The provider whose tokens the identify hook (e.g. `OidcTokens`) checks.
/// let oidc = CardSecurity::open_id_connect("https://login.example.com/realms/staff")
///     .scope("agent:call", "Call the agent");
/// assert_eq!(
///     oidc.discovery_url(),
///     Some("https://login.example.com/realms/staff/.well-known/openid-configuration")
/// );
///
/// // A token endpoint partners' services reach with their client credentials.
/// let oauth = CardSecurity::client_credentials("https://login.example.com/token")
///     .scope("agent:call", "Call the agent");
/// assert_eq!(oauth.scopes(), ["agent:call"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSecurity {
    flow: Flow,
    /// The authorization server's metadata, for an `oauth2` scheme.
    metadata_url: Option<String>,
    /// Scope names with what each allows, in the order given.
    scopes: Vec<(String, String)>,
    description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Flow {
    OpenIdConnect { discovery_url: String },
    ClientCredentials { token_url: String },
}

impl CardSecurity {
    /// Tokens from the OpenID provider whose issuer identifier is `issuer`: the card names
    /// its discovery document (`{issuer}/.well-known/openid-configuration`) as the scheme's
    /// `openIdConnectUrl`.
    pub fn open_id_connect(issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        Self::with(Flow::OpenIdConnect { discovery_url })
    }

    /// Tokens from the OAuth 2.0 token endpoint at `token_url`, by the client-credentials
    /// grant: an `oauth2` scheme with a `clientCredentials` flow.
    pub fn client_credentials(token_url: impl Into<String>) -> Self {
        Self::with(Flow::ClientCredentials {
            token_url: token_url.into(),
        })
    }

    fn with(flow: Flow) -> Self {
        Self {
            flow,
            metadata_url: None,
            scopes: Vec::new(),
            description: None,
        }
    }

    /// A scope every token must hold, and what it allows (the `oauth2` flow's scope map
    /// shows it; both schemes' requirement names the scope).
    pub fn scope(mut self, name: impl Into<String>, allows: impl Into<String>) -> Self {
        self.scopes.push((name.into(), allows.into()));
        self
    }

    /// The authorization server's metadata (RFC 8414) for an `oauth2` scheme, as its
    /// `oauth2MetadataUrl`. An OpenID provider is found by its discovery URL already: given
    /// to [`open_id_connect`](Self::open_id_connect), it is refused at build.
    pub fn metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// What the card says of the scheme to a person reading it.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The scopes a token must hold, in the order given.
    pub fn scopes(&self) -> Vec<&str> {
        self.scopes.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// The OpenID provider's discovery URL, for an `openIdConnect` scheme.
    pub fn discovery_url(&self) -> Option<&str> {
        match &self.flow {
            Flow::OpenIdConnect { discovery_url } => Some(discovery_url),
            Flow::ClientCredentials { .. } => None,
        }
    }

    /// The name the card gives the scheme.
    fn name(&self) -> &'static str {
        match self.flow {
            Flow::OpenIdConnect { .. } => "oidc",
            Flow::ClientCredentials { .. } => "oauth2",
        }
    }

    /// Refuses a URL a client could not be sent to (absolute https, or http on loopback),
    /// a malformed scope, and metadata given to an `openIdConnect` scheme.
    pub(super) fn check(&self) -> Result<(), A2aError> {
        let first = match &self.flow {
            Flow::OpenIdConnect { .. } if self.metadata_url.is_some() => {
                return Err(A2aError::CardSecurity(
                    "an OpenID provider is found by its discovery URL: `metadata_url` is for \
                     `client_credentials`"
                        .to_owned(),
                ));
            }
            Flow::OpenIdConnect { discovery_url } => discovery_url,
            Flow::ClientCredentials { token_url } => token_url,
        };
        for url in std::iter::once(first).chain(&self.metadata_url) {
            reachable(url)?;
        }
        if self.scopes.iter().any(|(name, _)| invalid_scope(name)) {
            return Err(A2aError::CardSecurity(
                "a scope is blank or holds a space, a quote or a backslash".to_owned(),
            ));
        }
        Ok(())
    }

    /// The card's `securitySchemes`.
    pub(super) fn schemes(&self) -> HashMap<String, SecurityScheme> {
        let scheme = match &self.flow {
            Flow::OpenIdConnect { discovery_url } => {
                SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                    open_id_connect_url: discovery_url.clone(),
                    description: self.description.clone(),
                })
            }
            Flow::ClientCredentials { token_url } => SecurityScheme::OAuth2(OAuth2SecurityScheme {
                flows: OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                    token_url: token_url.clone(),
                    scopes: self.scopes.iter().cloned().collect(),
                    refresh_url: None,
                }),
                description: self.description.clone(),
                oauth2_metadata_url: self.metadata_url.clone(),
            }),
        };
        HashMap::from([(self.name().to_owned(), scheme)])
    }

    /// The card's `securityRequirements`: this scheme, with every scope.
    pub(super) fn requirements(&self) -> Vec<SecurityRequirement> {
        let scopes = self.scopes.iter().map(|(name, _)| name.clone()).collect();
        vec![HashMap::from([(self.name().to_owned(), scopes)])]
    }
}

/// A scope-token is printable ASCII without a space, a quote or a backslash (RFC 6749
/// §3.3).
fn invalid_scope(name: &str) -> bool {
    name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
}

/// Whether a client may be sent to `url`: https, or http to this host alone.
fn reachable(url: &str) -> Result<(), A2aError> {
    let refuse = |reason: &str| A2aError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let uri: axum::http::Uri = url.parse().map_err(|_| refuse("it is not a URL"))?;
    let host = uri
        .host()
        .ok_or_else(|| refuse("it is not an absolute URL"))?;
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http") if loopback => Ok(()),
        _ => Err(refuse(
            "a card's token URLs must be https (http only on loopback)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_schemes_serialize_as_a2a_1_0_names_them() {
        let oidc = CardSecurity::open_id_connect("https://login.example.com/")
            .scope("agent:call", "Call the agent");
        let schemes = serde_json::to_value(oidc.schemes()).unwrap_or_default();
        assert_eq!(
            schemes,
            json!({"oidc": {"openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://login.example.com/.well-known/openid-configuration"}}})
        );
        let oauth = CardSecurity::client_credentials("https://login.example.com/token")
            .scope("agent:call", "Call the agent")
            .metadata_url("https://login.example.com/.well-known/oauth-authorization-server");
        let schemes = serde_json::to_value(oauth.schemes()).unwrap_or_default();
        let scheme = &schemes["oauth2"]["oauth2SecurityScheme"];
        assert_eq!(
            scheme["flows"]["clientCredentials"],
            json!({"tokenUrl": "https://login.example.com/token",
                   "scopes": {"agent:call": "Call the agent"}})
        );
        assert_eq!(
            scheme["oauth2MetadataUrl"],
            "https://login.example.com/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            oauth.requirements(),
            [HashMap::from([(
                "oauth2".to_owned(),
                vec!["agent:call".to_owned()]
            )])]
        );
    }

    #[test]
    fn a_url_a_client_cannot_be_sent_to_or_a_bad_scope_is_refused() {
        for url in ["http://login.example.com", "/token", "ftp://127.0.0.1/x"] {
            let refused = CardSecurity::client_credentials(url).check();
            assert!(
                matches!(refused, Err(A2aError::InvalidUrl { .. })),
                "{url}: {refused:?}"
            );
        }
        assert!(CardSecurity::open_id_connect("http://127.0.0.1:9")
            .check()
            .is_ok());
        let misplaced = CardSecurity::open_id_connect("https://login.example.com")
            .metadata_url("https://login.example.com/.well-known/oauth-authorization-server")
            .check();
        assert!(
            matches!(misplaced, Err(A2aError::CardSecurity(_))),
            "{misplaced:?}"
        );
        let spaced = CardSecurity::open_id_connect("https://login.example.com")
            .scope("agent call", "two scopes in one")
            .check();
        assert!(
            matches!(spaced, Err(A2aError::CardSecurity(_))),
            "{spaced:?}"
        );
    }
}
