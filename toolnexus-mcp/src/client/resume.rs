//! An `input_required` round, or a task's input request, carried inside a suspension's
//! request id.
//!
//! A tool re-run after a suspension receives only the [`Answer`](toolnexus::Answer), whose
//! id echoes the request's; the retry needs the key of the server's input request and its
//! `requestState`, or the task the request belongs to. Putting both in the id (through
//! [`toolnexus::round`], which adds the nonce) lets a halted run be persisted and resumed in
//! another process with nothing else stored. The content is the server's own opaque
//! state, which the protocol already treats as untrusted when it comes back.

use serde::{Deserialize, Serialize};
use toolnexus::round::RoundId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Round {
    /// The key of the input request in the server's `inputRequests`.
    #[serde(rename = "k")]
    pub(super) key: String,
    /// The server's `requestState`, echoed byte for byte.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(super) state: Option<String>,
    /// The server's task that asked, when the request is a task's: the answer goes back
    /// by `tasks/update` to it.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub(super) task: Option<String>,
}

impl Round {
    pub(super) fn new(key: String, state: Option<String>) -> Self {
        Self {
            key,
            state,
            task: None,
        }
    }

    /// The input request `key` of the server's task `task`.
    pub(super) fn in_task(key: String, task: String) -> Self {
        Self {
            task: Some(task),
            ..Self::new(key, None)
        }
    }
}

// A new id on every call, even when a server repeats key and state.
impl RoundId for Round {
    const PREFIX: &'static str = "mcp-";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_survives_its_id() {
        let round = Round::new("ask".into(), Some("st.ate \"quoted\"\n".into()));
        let id = round.to_id();
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(Round::from_id(&id), Some(round));
        let in_task = Round::in_task("confirm".into(), "task-1".into());
        assert_eq!(Round::from_id(&in_task.to_id()), Some(in_task));
        assert_eq!(Round::from_id("not-ours"), None);
        assert_eq!(Round::from_id("mcp-!!!"), None);
    }
}
