//! What the handles of this process on one database share, whichever handle made it: the
//! wakers of each agent's idle workers, SQLite's turn to write. Each value lives while a
//! handle holds it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// Values of type `T` by database (as its pool was opened, [`Store::key`](super::Store::key))
/// and name.
pub(crate) struct PerDatabase<T>(Mutex<BTreeMap<(String, String), Weak<T>>>);

impl<T: Default> PerDatabase<T> {
    pub(crate) const fn new() -> Self {
        PerDatabase(Mutex::new(BTreeMap::new()))
    }

    fn map(&self) -> MutexGuard<'_, BTreeMap<(String, String), Weak<T>>> {
        // Entries are inserted and removed whole; a panic elsewhere leaves the map consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value of `name` on database `db`, made when no handle holds one.
    pub(crate) fn get(&self, db: &str, name: &str) -> Arc<T> {
        let mut all = self.map();
        // Handles come and go with their inboxes; what they left goes as others come.
        all.retain(|_, value| value.strong_count() > 0);
        let key = (db.to_owned(), name.to_owned());
        if let Some(shared) = all.get(&key).and_then(Weak::upgrade) {
            return shared;
        }
        let shared = Arc::new(T::default());
        all.insert(key, Arc::downgrade(&shared));
        shared
    }

    /// The value of `name` on database `db`, when a handle holds one.
    pub(crate) fn find(&self, db: &str, name: &str) -> Option<Arc<T>> {
        self.map()
            .get(&(db.to_owned(), name.to_owned()))
            .and_then(Weak::upgrade)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_on_one_database_share_a_value_while_one_holds_it() {
        let shared: PerDatabase<Mutex<u8>> = PerDatabase::new();
        let first = shared.get("sqlite://a.db", "shop");
        assert!(Arc::ptr_eq(&first, &shared.get("sqlite://a.db", "shop")));
        assert!(!Arc::ptr_eq(
            &first,
            &shared.get("sqlite://a.db", "billing")
        ));
        assert!(!Arc::ptr_eq(&first, &shared.get("sqlite://b.db", "shop")));
        assert!(shared.find("sqlite://a.db", "shop").is_some());
        drop(first);
        assert!(shared.find("sqlite://a.db", "shop").is_none());
    }
}
