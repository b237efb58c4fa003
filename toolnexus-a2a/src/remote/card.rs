//! Where an agent's card is, and which of its interfaces this client speaks.

use a2a::{AgentCard, AgentInterface, TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC};
use reqwest::Url;

use crate::error::A2aError;

/// The well-known path of an agent card (A2A 1.0, section 8.2).
const WELL_KNOWN: &str = ".well-known/agent-card.json";

/// The protocol binding an agent is called over: the interface of its card the client
/// chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binding {
    /// JSON-RPC 2.0, every method a POST to the endpoint.
    JsonRpc,
    /// HTTP+JSON, each method at its path below the endpoint.
    Rest,
}

/// The card's URL for what a user gave: a URL ending in `.json` is the card itself; any
/// other is the agent's base URL, whose card is at `/.well-known/agent-card.json` below it.
pub(super) fn card_url(given: &str) -> Result<Url, A2aError> {
    let url = http_url(given)?;
    if url.path().ends_with(".json") {
        return Ok(url);
    }
    let mut base = url;
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    base.join(WELL_KNOWN).map_err(|e| A2aError::InvalidUrl {
        url: given.to_owned(),
        reason: e.to_string(),
    })
}

/// The endpoint of protocol version 1.0 the card offers, JSON-RPC when it offers one and
/// HTTP+JSON otherwise, resolved against the card's own URL when it is relative.
pub(super) fn endpoint(card: &AgentCard, card_url: &Url) -> Result<(Url, Binding), A2aError> {
    let interfaces = &card.supported_interfaces;
    let chosen = [Binding::JsonRpc, Binding::Rest]
        .into_iter()
        .find_map(|binding| {
            let found = interfaces.iter().find(|i| speaks(i, binding))?;
            Some((found, binding))
        });
    let Some((chosen, binding)) = chosen else {
        return Err(A2aError::NoInterface {
            url: shown(card_url),
            offered: offered(card),
        });
    };
    let url = card_url
        .join(&chosen.url)
        .map_err(|e| A2aError::InvalidUrl {
            url: chosen.url.clone(),
            reason: e.to_string(),
        })?;
    let mut url = http_url(url.as_str())?;
    // The HTTP+JSON paths are joined below the interface's URL, which must then end in a
    // slash to keep its last segment.
    if binding == Binding::Rest && !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok((url, binding))
}

/// `url` as errors, logs and `Debug` show it: without a user name or password, which
/// reqwest still sends (as basic auth) from the URL itself.
pub(super) fn shown(url: &Url) -> String {
    let mut bare = url.clone();
    // Both only fail for URLs that cannot have credentials, which then have none.
    let _ = bare.set_password(None);
    let _ = bare.set_username("");
    bare.to_string()
}

fn speaks(interface: &AgentInterface, binding: Binding) -> bool {
    let version = interface.protocol_version.trim();
    let name = match binding {
        Binding::JsonRpc => TRANSPORT_PROTOCOL_JSONRPC,
        Binding::Rest => TRANSPORT_PROTOCOL_HTTP_JSON,
    };
    interface.protocol_binding.eq_ignore_ascii_case(name)
        && (version == "1.0" || version.starts_with("1.0."))
}

fn offered(card: &AgentCard) -> String {
    if card.supported_interfaces.is_empty() {
        return "nothing".to_owned();
    }
    card.supported_interfaces
        .iter()
        .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
        .collect::<Vec<_>>()
        .join(", ")
}

fn http_url(given: &str) -> Result<Url, A2aError> {
    let invalid = |reason: String| A2aError::InvalidUrl {
        url: given.to_owned(),
        reason,
    };
    let url = Url::parse(given).map_err(|e| invalid(e.to_string()))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(invalid(format!(
            "the scheme `{other}` is not http or https"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_well_known_path() {
        let at = |u: &str| card_url(u).map(|u| u.to_string());
        assert_eq!(
            at("http://127.0.0.1:9/shop").unwrap(),
            "http://127.0.0.1:9/shop/.well-known/agent-card.json"
        );
        assert_eq!(
            at("http://127.0.0.1:9/").unwrap(),
            "http://127.0.0.1:9/.well-known/agent-card.json"
        );
        assert_eq!(
            at("https://x.example/cards/shop.json").unwrap(),
            "https://x.example/cards/shop.json"
        );
        assert!(matches!(at("ftp://x/"), Err(A2aError::InvalidUrl { .. })));
        assert!(matches!(at("not a url"), Err(A2aError::InvalidUrl { .. })));
    }

    #[test]
    fn credentials_in_a_url_are_never_shown() {
        let url = Url::parse("https://ada:hunter2@x.example/a2a?tenant=1").unwrap();
        assert_eq!(shown(&url), "https://x.example/a2a?tenant=1");
    }

    fn card(interfaces: serde_json::Value) -> AgentCard {
        serde_json::from_value(serde_json::json!({
            "name": "n", "description": "d", "version": "1", "capabilities": {},
            "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
            "supportedInterfaces": interfaces,
        }))
        .unwrap()
    }

    #[test]
    fn jsonrpc_of_protocol_one_is_chosen_first_then_http_json() {
        let at = Url::parse("http://h/a/.well-known/agent-card.json").unwrap();
        let mixed = card(serde_json::json!([
            {"url": "http://h/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://h/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "/a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ]));
        let (url, binding) = endpoint(&mixed, &at).unwrap();
        assert_eq!(
            (url.as_str(), binding),
            ("http://h/a/rpc", Binding::JsonRpc)
        );
        let rest = card(serde_json::json!([
            {"url": "http://h/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "/a/rest", "protocolBinding": "http+json", "protocolVersion": "1.0"},
        ]));
        let (url, binding) = endpoint(&rest, &at).unwrap();
        assert_eq!((url.as_str(), binding), ("http://h/a/rest/", Binding::Rest));
        let none = card(serde_json::json!([
            {"url": "http://h/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ]));
        let err = endpoint(&none, &at).unwrap_err().to_string();
        assert!(err.contains("offers: JSONRPC 0.3"), "{err}");
    }
}
