//! The agent card at `/.well-known/agent-card.json`: who the agent is, where its JSON-RPC
//! and HTTP+JSON endpoints are, and its skills — one per tool of the toolkit.

use std::sync::Arc;

use std::collections::HashMap;

use a2a::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, HttpAuthSecurityScheme,
    SecurityScheme, TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC,
};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use toolnexus::Toolkit;

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

const MODES: [&str; 2] = ["text/plain", "application/json"];

/// The card, its URL the configured one or else the root of the host it was fetched from.
pub(crate) async fn show(State(info): State<Arc<CardInfo>>, headers: HeaderMap) -> Json<AgentCard> {
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
    Json(AgentCard {
        name: info.name.clone(),
        description: info.description.clone(),
        version: info.version.clone(),
        // JSON-RPC first: clients that take the server's preference use it.
        supported_interfaces: vec![
            AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(url, TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: Some(false),
        },
        default_input_modes: MODES.iter().map(|m| (*m).to_owned()).collect(),
        default_output_modes: MODES.iter().map(|m| (*m).to_owned()).collect(),
        skills: info.skills.clone(),
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: info.bearer.then(|| {
            let scheme = SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".to_owned(),
                description: Some(
                    "Authorization: Bearer <token>, as the agent's host issues it".to_owned(),
                ),
                bearer_format: None,
            });
            HashMap::from([(BEARER.to_owned(), scheme)])
        }),
        security_requirements: info
            .bearer
            .then(|| vec![HashMap::from([(BEARER.to_owned(), Vec::new())])]),
        signatures: None,
    })
}
