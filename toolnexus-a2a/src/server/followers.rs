//! The tasks streams follow now, each with the channel its one reader bumps when the task
//! changes: the state the server shares, apart from the reading (`watch`) so the server's
//! shared state holds it without depending on it.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// The tasks followed now, each with the channel its reader bumps on a change.
#[derive(Default)]
pub(crate) struct Watches {
    pub(crate) tasks: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Watches {
    /// How many tasks have a reader now.
    #[cfg(test)]
    pub(crate) fn followed(&self) -> usize {
        self.tasks.lock().map(|t| t.len()).unwrap_or_default()
    }
}
