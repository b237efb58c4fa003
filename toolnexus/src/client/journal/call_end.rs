//! [`CallEnd`]: how a tool call ended. The driver makes it and the journal records and
//! replays it; it sits apart so the journal need not reach into the driver.

use serde_json::Value;

use crate::{Answer, ToolOutcome};

/// How a call ended, with what a gate made of it.
pub(crate) struct CallEnd {
    pub(crate) outcome: ToolOutcome,
    /// The arguments it ran with, when a person approved other arguments than the model's.
    pub(crate) edited: Option<Value>,
    /// The decision its gate was settled with, kept on its result in the transcript.
    pub(crate) approval: Option<Answer>,
}

impl From<ToolOutcome> for CallEnd {
    fn from(outcome: ToolOutcome) -> Self {
        CallEnd {
            outcome,
            edited: None,
            approval: None,
        }
    }
}
