//! What a sub-agent's call keeps in the calling run's transcript while it waits: the
//! agent's halted run and which of the calling run's requests stands for which of its
//! own. It travels on the call's placeholder, so any process that resumes the calling run
//! resumes the agent's run too.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{Message, ToolContext};

/// Names the ids a sub-agent derives apart from any other v5 ids made of the same text.
const AGENTS: Uuid = Uuid::from_u128(0x4d2a_9c71_e5b8_4f06_a3d9_18c4_7b6e_f250);

/// A sub-agent's halted run, as its call keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Kept {
    /// The agent tool's name: a run kept by one agent is never taken up by another.
    pub(super) agent: String,
    /// The agent's halted transcript.
    pub(super) run: Vec<Message>,
    /// Each request the call waits on, with the request of the agent's run it stands for.
    pub(super) asked: Vec<Asked>,
}

/// One request the calling run waits on, and the one of the agent's run behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Asked {
    /// The calling run's request id.
    pub(super) id: String,
    /// The agent's run's request id.
    pub(super) inner: String,
}

/// What identifies a call of an agent tool wherever it is run again: its
/// [`idempotency_key`](ToolContext::idempotency_key) in a run's loop, else its call id,
/// else nothing (a call made by hand, whose ids are then drawn afresh and kept).
pub(super) fn scope(ctx: &ToolContext) -> Option<String> {
    ctx.idempotency_key().or_else(|| ctx.call_id.clone())
}

/// The id of the agent's run for a call in `scope`: derived from the call, so the run's
/// own keys (its calls' idempotency keys, its journal's steps) are the same in every
/// process that runs the call again, and apart from every other call's.
pub(super) fn run_id(scope: Option<&str>) -> String {
    match scope {
        Some(scope) => Uuid::new_v5(&AGENTS, format!("run\0{scope}").as_bytes()).to_string(),
        None => Uuid::new_v4().to_string(),
    }
}

/// The calling run's id for the request `inner` of agent `agent`, in `scope`: the agent
/// first, so a person reading it knows where it comes from, and a digest of the call and
/// the inner id, so no two calls' or two requests' ids meet.
pub(super) fn request_id(agent: &str, scope: &str, inner: &str) -> String {
    let id = Uuid::new_v5(&AGENTS, format!("request\0{scope}\0{inner}").as_bytes());
    format!("{agent}-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_calls_and_the_requests_own() {
        let a = request_id("payments", "call-a", "approval-1");
        assert!(a.starts_with("payments-"));
        assert_eq!(a, request_id("payments", "call-a", "approval-1"));
        assert_ne!(a, request_id("payments", "call-b", "approval-1"));
        assert_ne!(a, request_id("payments", "call-a", "approval-2"));
        assert_eq!(run_id(Some("k")), run_id(Some("k")));
        assert_ne!(run_id(Some("k")), run_id(Some("l")));
        assert_ne!(run_id(None), run_id(None));
    }
}
