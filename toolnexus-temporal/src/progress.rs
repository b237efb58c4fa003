//! [`Progress`]: what a run has done across its stretches, so the result it ends with
//! covers the whole run and not only its last stretch.

use serde::{Deserialize, Serialize};
use toolnexus::{RunResult, ToolCallRecord, Usage};

/// Every call a run has made, its tokens and its turns, summed over its stretches.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Progress {
    /// The calls, in the order they were made; a call that waited and then ran appears
    /// once, as it ended.
    #[serde(default)]
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    /// Tokens used.
    #[serde(default)]
    pub(crate) usage: Usage,
    /// Turns taken.
    #[serde(default)]
    pub(crate) turns: usize,
}

impl Progress {
    /// Adds a stretch's calls, tokens and turns.
    pub(crate) fn absorb(&mut self, stretch: &RunResult) {
        for call in &stretch.tool_calls {
            match self.tool_calls.iter_mut().find(|c| c.id == call.id) {
                Some(earlier) => *earlier = call.clone(),
                None => self.tool_calls.push(call.clone()),
            }
        }
        self.usage += stretch.usage;
        self.turns += stretch.turns;
    }

    /// The run's result: the last stretch's, with the whole run's calls, tokens and turns.
    pub(crate) fn into_result(self, last: RunResult) -> RunResult {
        RunResult {
            tool_calls: self.tool_calls,
            usage: self.usage,
            turns: self.turns,
            ..last
        }
    }
}
