//! How a [`RemoteAgent`] is configured and its card fetched.

use std::fmt;
use std::time::Duration;

use a2a::{AgentCard, VERSION};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION};
use reqwest::Client;
use serde_json::json;

use super::agent::RemoteAgent;
use super::card;
use super::rpc::{self, Rpc, CARD_LIMIT};
use crate::error::A2aError;

/// The header naming the protocol version (`A2A-Version`, lower-cased as `HeaderName`
/// requires).
const A2A_VERSION: &str = "a2a-version";
/// How long one call (the message and the polls or streams after it) may take unless told.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a task that is still working is polled.
const DEFAULT_POLL: Duration = Duration::from_millis(250);

/// Configures a [`RemoteAgent`]; [`connect`](Self::connect) fetches its card.
///
/// Header values given here (keys, tokens) are kept out of `Debug` and of every error.
///
/// ```no_run
/// use std::time::Duration;
/// use toolnexus_a2a::RemoteAgent;
///
/// # async fn demo() -> Result<(), toolnexus_a2a::A2aError> {
/// let agent = RemoteAgent::builder("http://127.0.0.1:9999/shop")
///     .header("x-api-key", "secret")
///     .name("shop")
///     .description("Buys things, asking a person first")
///     .timeout(Duration::from_secs(30))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a builder does nothing until `connect` is awaited"]
pub struct RemoteAgentBuilder {
    url: String,
    headers: HeaderMap,
    // The first invalid header, reported by `connect` so that the chain stays unbroken.
    invalid: Option<String>,
    name: Option<String>,
    description: Option<String>,
    timeout: Duration,
    poll: Duration,
    card_key: Option<crate::CardKey>,
}

impl RemoteAgent {
    /// A builder for the agent whose card is at `url`: a URL ending in `.json` is the card
    /// itself, any other is the agent's base URL, with its card at
    /// `/.well-known/agent-card.json` below it.
    pub fn builder(url: impl Into<String>) -> RemoteAgentBuilder {
        RemoteAgentBuilder::new(url.into())
    }

    /// Fetches the card at `url` with the default settings (see [`RemoteAgent::builder`]).
    pub async fn connect(url: impl Into<String>) -> Result<RemoteAgent, A2aError> {
        Self::builder(url).connect().await
    }
}

impl RemoteAgentBuilder {
    fn new(url: String) -> Self {
        Self {
            url,
            headers: HeaderMap::new(),
            invalid: None,
            name: None,
            description: None,
            timeout: DEFAULT_TIMEOUT,
            poll: DEFAULT_POLL,
            card_key: None,
        }
    }

    /// Sends this header with every request (the card's too), its value marked sensitive.
    /// An invalid name or value makes [`connect`](Self::connect) fail with
    /// [`A2aError::InvalidHeader`].
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let name = name.as_ref();
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value.as_ref()),
        ) {
            (Ok(key), Ok(mut value)) => {
                value.set_sensitive(true);
                self.headers.insert(key, value);
            }
            _ => {
                self.invalid.get_or_insert_with(|| name.to_owned());
            }
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn bearer_auth(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header(AUTHORIZATION.as_str(), value)
    }

    /// The tool's name, instead of the card's (sanitized to `[a-zA-Z0-9_-]`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The tool's description for the model, instead of the card's.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// How long fetching the card, and each call (its message and the polls or the event
    /// streams of a task still working), may take; 120 s unless set. A stream that stays
    /// silent this long ends the call as a poll that gets no answer does.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often a task the agent left working is polled with `GetTask`; 250 ms unless set.
    /// An agent whose card declares streaming is not polled, unless a broken stream
    /// cannot be resubscribed to.
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll = every;
        self
    }

    /// Takes the agent's card only when one of its signatures is `key`'s (an Ed25519
    /// JWS over the card's RFC 8785 form, as the specification has it): a card changed
    /// on its way, or served by someone else, fails [`connect`](Self::connect) with
    /// [`A2aError::CardSignature`], and nothing is sent to the agent.
    pub fn card_key(mut self, key: crate::CardKey) -> Self {
        self.card_key = Some(key);
        self
    }

    /// Fetches the agent card and picks its interface of protocol 1.0: JSON-RPC when it
    /// offers one, HTTP+JSON otherwise.
    pub async fn connect(self) -> Result<RemoteAgent, A2aError> {
        if let Some(name) = self.invalid {
            return Err(A2aError::InvalidHeader { name });
        }
        let card_url = card::card_url(&self.url)?;
        let mut headers = self.headers;
        // Without it an A2A 1.0 server reads the request as protocol 0.3.
        headers.insert(
            HeaderName::from_static(A2A_VERSION),
            HeaderValue::from_static(VERSION),
        );
        toolnexus::__private::ensure_crypto_provider();
        let http = Client::builder()
            .default_headers(headers)
            .timeout(self.timeout)
            .build()
            .map_err(A2aError::Client)?;
        let card = fetch_card(&http, &card_url, self.timeout, self.card_key.as_ref()).await?;
        let (endpoint, binding) = card::endpoint(&card, &card_url)?;
        let streaming = card.capabilities.streaming == Some(true);
        let name = sanitize(self.name.as_deref().unwrap_or(&card.name));
        let description = self
            .description
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| match card.description.trim() {
                "" => format!("Sends a message to the remote A2A agent `{name}`"),
                given => given.to_owned(),
            });
        Ok(RemoteAgent {
            schema: json!({
                "type": "object",
                "properties": {
                    "message": {
                        "type": "string",
                        "description": "What to ask the agent, in plain words"
                    }
                },
                "required": ["message"]
            }),
            name,
            description,
            card,
            endpoint_shown: card::shown(&endpoint),
            rpc: Rpc {
                http,
                endpoint,
                binding,
                timeout: self.timeout,
            },
            poll: self.poll,
            streaming,
        })
    }
}

async fn fetch_card(
    http: &Client,
    url: &reqwest::Url,
    timeout: Duration,
    key: Option<&crate::CardKey>,
) -> Result<AgentCard, A2aError> {
    let at = card::shown(url);
    let response = http
        .get(url.clone())
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| rpc::transport(&at, timeout, e))?;
    if !response.status().is_success() {
        return Err(A2aError::Status {
            url: at,
            status: response.status().as_u16(),
        });
    }
    let body = rpc::read_limited(response, CARD_LIMIT, &at, timeout).await?;
    let Some(key) = key else {
        return serde_json::from_slice(&body).map_err(|source| A2aError::Card { url: at, source });
    };
    // Checked as it came, before anything of it is read into the card.
    let card: serde_json::Value =
        serde_json::from_slice(&body).map_err(|source| A2aError::Card {
            url: at.clone(),
            source,
        })?;
    if let Err(reason) = key.check(&card) {
        return Err(A2aError::CardSignature { url: at, reason });
    }
    serde_json::from_value(card).map_err(|source| A2aError::Card { url: at, source })
}

/// A tool name from a card's name: every character outside `[a-zA-Z0-9_-]` becomes `_`.
fn sanitize(name: &str) -> String {
    let clean: String = name
        .trim()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    if clean.is_empty() {
        "remote_agent".to_owned()
    } else {
        clean
    }
}

impl fmt::Debug for RemoteAgentBuilder {
    // Header values are secrets: only their names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgentBuilder")
            .field(
                "url",
                &reqwest::Url::parse(&self.url)
                    .map_or_else(|_| self.url.clone(), |u| card::shown(&u)),
            )
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("card_key", &self.card_key)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize("Shop Agent (v2)"), "Shop_Agent__v2_");
        assert_eq!(sanitize("  "), "remote_agent");
    }

    #[test]
    fn debug_shows_header_names_only() {
        let builder =
            RemoteAgent::builder("http://ada:pass-w0rd@127.0.0.1:1/").bearer_auth("hunter2-token");
        let shown = format!("{builder:?}");
        assert!(shown.contains("authorization"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("pass-w0rd"), "{shown}");
    }

    #[tokio::test]
    async fn a_password_in_the_url_stays_out_of_errors() {
        let err = RemoteAgent::connect("http://ada:pass-w0rd@127.0.0.1:9/")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("http://127.0.0.1:9/.well-known/agent-card.json"),
            "{err}"
        );
        assert!(!err.contains("pass-w0rd"), "{err}");
    }

    #[tokio::test]
    async fn a_bad_header_is_named_without_its_value() {
        let err = RemoteAgent::builder("http://127.0.0.1:1/")
            .header("x-key", "line\nbreak-secret")
            .connect()
            .await
            .unwrap_err();
        assert!(matches!(&err, A2aError::InvalidHeader { name } if name == "x-key"));
        assert!(!err.to_string().contains("secret"));
    }
}
