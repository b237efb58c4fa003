//! What the endpoint can do, for AG-UI's capability discovery: `GET capabilities` beside
//! the run endpoint answers the protocol's `AgentCapabilities` document, which a front
//! end's `getCapabilities()` returns. It is built from what the server holds, so it says
//! what is true of this endpoint and nothing more: the tools and their schemas, and what
//! every run here does — streams, ends with interrupts that a resume answers (approvals,
//! forms, a gate's arguments edited), sends state and message snapshots and state deltas,
//! keeps threads across restarts in the inbox, streams a reasoning model's reasoning.
//!
//! A caller the endpoint would refuse a run is refused the document too (401, or 403 for
//! a token without the scopes required): which tools an agent holds is the host's to tell.

use std::sync::Arc;

use axum::extract::State;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use toolnexus::Toolkit;

use super::handle::refusal;
use super::Shared;

/// How the agent names itself in its capabilities, unless the host says otherwise.
pub(crate) const DEFAULT_NAME: &str = "toolnexus agent";

/// What the agent says of itself ([`AguiServerBuilder::describe`](super::AguiServerBuilder::describe)).
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            name: DEFAULT_NAME.to_owned(),
            description: None,
        }
    }
}

pub(crate) async fn capabilities(State(shared): State<Arc<Shared>>, parts: Parts) -> Response {
    if let Err(refused) = shared.caller(&parts).await {
        return refusal(&refused);
    }
    axum::Json(document(&shared.identity, &shared.tk)).into_response()
}

/// The capabilities of an endpoint that says `identity` of itself and serves `tk`.
pub(crate) fn document(identity: &Identity, tk: &Toolkit) -> Value {
    let mut who = Map::new();
    who.insert("name".to_owned(), json!(identity.name));
    who.insert("type".to_owned(), json!("toolnexus"));
    who.insert("version".to_owned(), json!(env!("CARGO_PKG_VERSION")));
    if let Some(description) = &identity.description {
        who.insert("description".to_owned(), json!(description));
    }
    let tools: Vec<Value> = tk
        .declarations()
        .map(|d| {
            json!({
                "name": d.name,
                "description": d.description,
                "parameters": d.input_schema,
            })
        })
        .collect();
    json!({
        "identity": who,
        // Runs stream as server-sent events over one POST; nothing else is served.
        "transport": {"streaming": true, "websocket": false, "httpBinary": false,
                      "pushNotifications": false, "resumable": false},
        "tools": {
            "supported": !tools.is_empty(),
            "items": tools,
            // One turn's calls run side by side; the front end's own tools are not taken.
            "parallelCalls": true,
            "clientProvided": false,
        },
        // The state is what a waiting run waits on; threads outlive the process.
        "state": {"snapshots": true, "deltas": true, "memory": true, "persistentState": true},
        "reasoning": {"supported": true, "streaming": true, "encrypted": false},
        "humanInTheLoop": {
            "supported": true,
            "approvals": true,
            "interrupts": true,
            // A gate's approval takes `editedArgs`, as far as its rules let a person edit.
            "approveWithEdits": true,
            "interventions": false,
            "feedback": false,
        },
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolnexus::{NativeTool, ToolContext, ToolResult, Toolkit};

    use super::{document, Identity};

    #[test]
    fn the_tools_are_listed_with_their_schemas_and_the_identity_as_told() {
        let lookup = NativeTool::of(
            "lookup",
            "Finds a price",
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            |_args: serde_json::Value, _ctx: ToolContext| async move { ToolResult::ok("3") },
        );
        let tk = Toolkit::builder().tool(lookup).build().expect("a toolkit");
        let identity = Identity {
            name: "shop".to_owned(),
            description: Some("Buys things".to_owned()),
        };
        let doc = document(&identity, &tk);
        assert_eq!(doc["identity"]["name"], "shop");
        assert_eq!(doc["identity"]["description"], "Buys things");
        assert_eq!(doc["tools"]["items"][0]["name"], "lookup");
        assert_eq!(
            doc["tools"]["items"][0]["parameters"]["properties"]["q"]["type"],
            "string"
        );
        let empty = document(&Identity::default(), &Toolkit::empty());
        assert_eq!(empty["tools"]["supported"], false);
        assert!(empty["identity"].get("description").is_none());
    }
}
