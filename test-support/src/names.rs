//! Names no other test uses, so suites that share a server (a database cluster, a Temporal
//! namespace, a task queue) never meet each other's records.

use std::sync::atomic::{AtomicUsize, Ordering};

/// A name no other test of any run uses: the prefix, the process, a counter and the time.
pub fn unique(prefix: &str) -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}
