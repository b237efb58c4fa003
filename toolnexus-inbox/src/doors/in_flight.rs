//! What a door has under way in this process — a task's first run, a thread's run, a
//! re-run it drives — so a second request for the same id is told it is busy rather than
//! starting it twice.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The ids in flight in this process, each with an optional value (such as the handle that
/// stops its work). Cloning shares the set.
///
/// An id leaves the set when the [`InFlightGuard`] that entered it is dropped: when its work
/// ends, fails, panics or is aborted. A panic elsewhere while the set was locked does not
/// leave an id busy for the life of the process: every change is one insert or one
/// removal, so the set is sound after it, and the lock is recovered.
///
/// ```
/// use toolnexus_inbox::InFlight;
///
/// let live: InFlight = InFlight::new();
/// let guard = live.enter("task-1").expect("free");
/// assert!(live.enter("task-1").is_none(), "busy while its guard lives");
/// drop(guard);
/// assert!(!live.contains("task-1"));
/// ```
pub struct InFlight<V = ()> {
    set: Arc<Mutex<HashMap<String, Option<V>>>>,
}

impl<V> InFlight<V> {
    /// An empty set.
    pub fn new() -> Self {
        InFlight {
            set: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Option<V>>> {
        self.set.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Enters `id`, unless it is in flight already (`None`): it stays in flight as long as
    /// the guard lives.
    pub fn enter(&self, id: &str) -> Option<InFlightGuard<V>> {
        let mut set = self.lock();
        if set.contains_key(id) {
            return None;
        }
        set.insert(id.to_owned(), None);
        Some(InFlightGuard {
            set: Arc::clone(&self.set),
            id: id.to_owned(),
        })
    }

    /// Whether `id` is in flight.
    pub fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Attaches `value` to `id` while it is in flight; `false` (and `value` dropped) when
    /// it no longer is, as when its work ended before the value was at hand.
    pub fn attach(&self, id: &str, value: V) -> bool {
        match self.lock().get_mut(id) {
            Some(slot) => {
                *slot = Some(value);
                true
            }
            None => false,
        }
    }

    /// Takes the value attached to `id`, which stays in flight until its guard is dropped.
    pub fn detach(&self, id: &str) -> Option<V> {
        self.lock().get_mut(id).and_then(Option::take)
    }
}

impl<V> Default for InFlight<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> Clone for InFlight<V> {
    fn clone(&self) -> Self {
        InFlight {
            set: Arc::clone(&self.set),
        }
    }
}

impl<V> fmt::Debug for InFlight<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("ids", &self.lock().len())
            .finish()
    }
}

/// Holds an id in its [`InFlight`] set; dropping it frees the id.
#[must_use = "the id leaves the set when the guard is dropped"]
pub struct InFlightGuard<V = ()> {
    set: Arc<Mutex<HashMap<String, Option<V>>>>,
    id: String,
}

impl<V> InFlightGuard<V> {
    /// The id it holds.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl<V> fmt::Debug for InFlightGuard<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlightGuard")
            .field("id", &self.id)
            .finish()
    }
}

impl<V> Drop for InFlightGuard<V> {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    #[test]
    fn a_poisoned_lock_leaves_no_id_busy() {
        let live: InFlight<u32> = InFlight::new();
        let guard = live.enter("t").unwrap();
        assert!(live.attach("t", 7));
        let poisoner = live.clone();
        let _ = std::thread::spawn(move || {
            let _held = poisoner.set.lock().unwrap();
            panic!("a panic while the set is locked");
        })
        .join();
        assert!(live.set.is_poisoned());
        assert_eq!(live.detach("t"), Some(7));
        drop(guard);
        assert!(!live.contains("t"), "freed despite the poisoned lock");
        assert!(live.enter("t").is_some(), "free for the next request");
        assert!(!live.attach("gone", 1));
    }
}
