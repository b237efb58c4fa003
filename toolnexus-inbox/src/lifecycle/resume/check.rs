//! The call check: an answer settles the call its request was parked for, and no other. A
//! transcript changed since the park (by a bug, or by hand in the database) could carry
//! the answer to a different call, so a claimed run is held to the stored tool and
//! arguments before anything runs.

use toolnexus::halted::HaltedTurn;
use toolnexus::{ClientError, Message};

use crate::store::requests::StoredAnswer;

/// The first answered request whose call the transcript no longer shows as it was parked
/// (the stored tool and arguments, kept apart from the transcript), as the error refusing
/// it. A request whose placeholder or call the transcript lacks is left to the resume,
/// which refuses such a transcript itself.
pub(super) fn changed_call(messages: &[Message], stored: &[StoredAnswer]) -> Option<ClientError> {
    let turn = HaltedTurn::of(messages).ok()?;
    stored.iter().find_map(|parked| {
        let (tool, args) = (parked.tool_name.as_deref()?, parked.tool_args.as_deref()?);
        let call = turn.asked(&parked.id)?.call;
        let as_parked = serde_json::from_str::<serde_json::Value>(args)
            .map(|args| toolnexus::call_digest(tool, &args));
        let now = toolnexus::call_digest(&call.name, &call.args);
        (as_parked.ok() != Some(now)).then(|| ClientError::CallChanged {
            call: call.id.clone(),
            tool: call.name.clone(),
            request: parked.id.clone(),
        })
    })
}
