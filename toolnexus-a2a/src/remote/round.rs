//! A remote task's keys carried inside a suspension's request id.
//!
//! A tool re-run after a suspension receives only the [`Answer`](toolnexus::Answer), whose
//! id echoes the request's. The continuation needs the remote `taskId` and `contextId` (and
//! the remote's own request id, when it gave one); putting them in the id (through
//! [`toolnexus::round`], which adds the nonce) makes the transcript of a halted run all a
//! resume needs, in this process or another.

use serde::{Deserialize, Serialize};
use toolnexus::round::RoundId;

/// One interruption of a remote task: what a continuation must name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Round {
    /// The remote task's id.
    #[serde(rename = "t")]
    pub(super) task_id: String,
    /// The remote task's context id.
    #[serde(rename = "c")]
    pub(super) context_id: String,
    /// The id of the request the remote agent's status message carried, if it had one.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub(super) remote_id: Option<String>,
}

impl Round {
    pub(super) fn new(task_id: String, context_id: String, remote_id: Option<String>) -> Self {
        Self {
            task_id,
            context_id,
            remote_id,
        }
    }
}

// A new id on every call, even when a task asks the same twice.
impl RoundId for Round {
    const PREFIX: &'static str = "a2a-";
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

    use super::*;

    #[test]
    fn a_round_survives_its_id() {
        let round = Round::new("task \"1\"".into(), "ctx/2".into(), Some("req-3".into()));
        let id = round.to_id();
        assert!(id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_eq!(Round::from_id(&id), Some(round.clone()));
        assert_ne!(
            Round::new("t".into(), "c".into(), None).to_id(),
            Round::new("t".into(), "c".into(), None).to_id()
        );
        assert_eq!(Round::from_id("mcp-abc"), None);
        assert_eq!(Round::from_id("a2a-!!!"), None);
        assert_eq!(
            Round::from_id(&format!(
                "{}{}",
                Round::PREFIX,
                URL_SAFE_NO_PAD.encode("[1]")
            )),
            None
        );
    }
}
