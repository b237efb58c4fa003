//! Which tasks this server tells webhooks of: the state the pusher and the push
//! configurations' operations share, apart from the operations so the server's shared
//! state holds it without depending on them.

use std::collections::HashSet;
use std::sync::Mutex;

/// The tasks this server tells of, and the one lock its record changes take: the
/// configurations' operations and the pusher read, change and keep the same record.
pub(crate) struct Pusher {
    watched: Mutex<HashSet<String>>,
    pub(crate) writes: tokio::sync::Mutex<()>,
}

impl Pusher {
    pub(crate) fn new() -> Pusher {
        Pusher {
            watched: Mutex::new(HashSet::new()),
            writes: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn watch(&self, id: &str) {
        self.watched
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(id.to_owned());
    }

    pub(crate) fn unwatch(&self, id: &str) {
        self.watched
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(id);
    }

    pub(crate) fn watched(&self) -> Vec<String> {
        let watched = self
            .watched
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        watched.iter().cloned().collect()
    }
}
