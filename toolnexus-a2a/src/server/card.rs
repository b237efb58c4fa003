//! The agent card at `/.well-known/agent-card.json`: who the agent is, where its JSON-RPC
//! and HTTP+JSON endpoints are, and its skills — one per tool of the toolkit.

use std::sync::Arc;

use std::collections::HashMap;

use a2a::{
    error_code, A2AError, AgentCapabilities, AgentCard, AgentInterface, AgentSkill,
    HttpAuthSecurityScheme, Message, Part, PartContent, SecurityScheme,
    TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC,
};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use toolnexus::Toolkit;

use super::wire::essence;

/// Where the card is served, as A2A 1.0 names it.
pub(crate) const PATH: &str = "/.well-known/agent-card.json";

/// What the card says, fixed when the server is built.
pub(crate) struct CardInfo {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) version: String,
    pub(crate) url: Option<String>,
    pub(crate) skills: Vec<AgentSkill>,
    pub(crate) max_body: usize,
    /// Whether callers must send a bearer token (an identify hook is set).
    pub(crate) bearer: bool,
    /// Where callers get their token, when the card says so.
    pub(crate) security: Option<super::security::CardSecurity>,
    /// Whether push notifications are served.
    pub(crate) push: bool,
    /// The key the card is signed with, if it is.
    pub(crate) signer: Option<Arc<crate::CardSigner>>,
}

/// The name the card gives its bearer scheme.
const BEARER: &str = "bearer";

/// A skill per tool: its name as the id and the name, its description.
pub(crate) fn skills(tk: &Toolkit) -> Vec<AgentSkill> {
    tk.tools()
        .iter()
        .map(|tool| AgentSkill {
            id: tool.name().to_owned(),
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            tags: vec!["tool".to_owned()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        })
        .collect()
}

/// The media types the agent takes and gives: a message's text and its data as JSON.
const MODES: [&str; 2] = ["text/plain", "application/json"];

impl CardInfo {
    /// Takes `message` when the card declares the media type of each of its parts, and
    /// refuses it with `ContentTypeNotSupportedError` naming the first that it does not:
    /// the spec refuses a media type the agent, or the skill invoked, does not support.
    pub(crate) fn takes(&self, message: &Message) -> Result<(), A2AError> {
        let modes = self.input_modes();
        let unsupported = message
            .parts
            .iter()
            .filter_map(media_type)
            .find(|asked| !modes.contains(&essence(asked)));
        match unsupported {
            None => Ok(()),
            Some(asked) => Err(A2AError::new(
                error_code::CONTENT_TYPE_NOT_SUPPORTED,
                format!(
                    "the agent takes parts of {}, not `{asked}`",
                    modes.join(", ")
                ),
            )),
        }
    }

    /// The media types a message's parts may have, without parameters: the card's defaults
    /// and every skill's own `inputModes` together, since a message names no skill.
    fn input_modes(&self) -> Vec<String> {
        let skills = self
            .skills
            .iter()
            .flat_map(|s| s.input_modes.iter().flatten());
        let mut modes: Vec<String> = Vec::new();
        for mode in MODES.iter().copied().chain(skills.map(String::as_str)) {
            let mode = essence(mode);
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        modes
    }
}

/// The media type a part claims: the one it declares, else its kind's (text is
/// `text/plain`, data `application/json`). Bytes or a link that declare none claim none,
/// and are not refused for it.
fn media_type(part: &Part) -> Option<&str> {
    match (part.media_type.as_deref(), &part.content) {
        (Some(declared), _) if !declared.trim().is_empty() => Some(declared),
        (_, PartContent::Text(_)) => Some("text/plain"),
        (_, PartContent::Data(_)) => Some("application/json"),
        (_, PartContent::Raw(_) | PartContent::Url(_)) => None,
    }
}

/// The card, its URL the configured one or else the root of the host it was fetched from.
pub(crate) async fn show(State(info): State<Arc<CardInfo>>, headers: HeaderMap) -> Response {
    let url = match &info.url {
        Some(url) => url.clone(),
        None => {
            let host = headers
                .get(axum::http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}/")
        }
    };
    let card = AgentCard {
        name: info.name.clone(),
        description: info.description.clone(),
        version: info.version.clone(),
        // JSON-RPC first: clients that take the server's preference use it.
        supported_interfaces: vec![
            // The HTTP+JSON paths are appended to its URL (`{url}/message:send`), so it ends
            // without a slash; JSON-RPC posts to its URL as it is, the router's root.
            AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(
                url.trim_end_matches('/').to_owned(),
                TRANSPORT_PROTOCOL_HTTP_JSON,
            ),
        ],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(info.push),
            extensions: None,
            extended_agent_card: Some(false),
        },
        default_input_modes: MODES.iter().map(|m| (*m).to_owned()).collect(),
        default_output_modes: MODES.iter().map(|m| (*m).to_owned()).collect(),
        skills: info.skills.clone(),
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: match &info.security {
            Some(security) => Some(security.schemes()),
            None => info.bearer.then(|| {
                let scheme = SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                    scheme: "Bearer".to_owned(),
                    description: Some(
                        "Authorization: Bearer <token>, as the agent's host issues it".to_owned(),
                    ),
                    bearer_format: None,
                });
                HashMap::from([(BEARER.to_owned(), scheme)])
            }),
        },
        security_requirements: match &info.security {
            Some(security) => Some(security.requirements()),
            None => info
                .bearer
                .then(|| vec![HashMap::from([(BEARER.to_owned(), Vec::new())])]),
        },
        signatures: None,
    };
    let Some(signer) = &info.signer else {
        return Json(card).into_response();
    };
    // Signed as served: the URL a card without one names is this request's host's.
    let mut value = match serde_json::to_value(&card) {
        Ok(value) => value,
        Err(e) => return unsigned(&e.to_string()),
    };
    match signer.sign(&mut value) {
        Ok(()) => Json(value).into_response(),
        Err(e) => unsigned(&e.to_string()),
    }
}

/// A card that could not be signed is not served unsigned: a client that checks would
/// refuse it, and one that does not should not be handed what its owner did not sign.
fn unsigned(why: &str) -> Response {
    tracing::error!(error = %why, "the agent card could not be signed");
    let body = serde_json::json!({"error": "the agent card could not be signed"});
    (axum::http::StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use a2a::Role;
    use serde_json::json;

    use super::*;

    fn card(skill_modes: Option<Vec<String>>) -> CardInfo {
        CardInfo {
            name: "agent".to_owned(),
            description: String::new(),
            version: "1".to_owned(),
            url: None,
            skills: vec![AgentSkill {
                id: "scan".to_owned(),
                name: "scan".to_owned(),
                description: String::new(),
                tags: Vec::new(),
                examples: None,
                input_modes: skill_modes,
                output_modes: None,
                security_requirements: None,
            }],
            max_body: 1024,
            bearer: false,
            security: None,
            push: false,
            signer: None,
        }
    }

    fn message(parts: Vec<Part>) -> Message {
        Message::new(Role::User, parts)
    }

    fn typed(mut part: Part, media_type: &str) -> Part {
        part.media_type = Some(media_type.to_owned());
        part
    }

    #[test]
    fn text_and_data_are_taken_and_other_media_types_refused() {
        let card = card(None);
        let taken = [
            Part::text("hi"),
            Part::data(json!({"a": 1})),
            typed(Part::text("hi"), "Text/Plain; charset=utf-8"),
            typed(Part::text("hi"), ""),
            Part::raw(b"tck".to_vec()),
            Part::url("https://example.com/a"),
        ];
        for part in taken {
            assert!(card.takes(&message(vec![part.clone()])).is_ok(), "{part:?}");
        }
        let refused = [
            typed(Part::raw(b"tck".to_vec()), "application/x-unsupported"),
            typed(Part::url("https://example.com/a.png"), "image/png"),
            typed(Part::text("<b>hi</b>"), "text/html"),
        ];
        for part in refused {
            let both = message(vec![Part::text("hi"), part.clone()]);
            let code = card.takes(&both).map_err(|e| e.code);
            assert_eq!(
                code,
                Err(error_code::CONTENT_TYPE_NOT_SUPPORTED),
                "{part:?}"
            );
        }
    }

    #[test]
    fn a_skill_widens_the_modes_the_card_takes() {
        let image = typed(Part::raw(b"png".to_vec()), "image/png");
        assert!(card(None).takes(&message(vec![image.clone()])).is_err());
        let card = card(Some(vec!["image/png".to_owned()]));
        assert!(card.takes(&message(vec![image])).is_ok());
        let refusal = card.takes(&message(vec![typed(Part::text("x"), "audio/wav")]));
        let said = refusal.err().map(|e| e.message).unwrap_or_default();
        assert!(
            said.contains("text/plain, application/json, image/png"),
            "{said}"
        );
        assert!(said.contains("audio/wav"), "{said}");
    }
}
