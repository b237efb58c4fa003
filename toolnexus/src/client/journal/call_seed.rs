//! [`CallSeed`]: what identifies a run up to a turn. The driver derives it, a tool call's
//! context and the journal's step keys read it; it sits apart so neither reaches into the
//! other for it.

use std::fmt;
use std::sync::Arc;

/// What identifies a run up to a turn, for the keys of the turn's calls
/// ([`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key)) and of its
/// journal steps. Held in parts and written out only when a key is made: most calls never
/// ask for one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallSeed {
    /// The run's own id and how many messages came before the turn.
    Run { id: Arc<str>, at: usize },
    /// A transcript without a run id: the gates' key.
    Key(Arc<str>),
}

impl fmt::Display for CallSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallSeed::Run { id, at } => write!(f, "{id}\0{at}"),
            CallSeed::Key(key) => f.write_str(key),
        }
    }
}
