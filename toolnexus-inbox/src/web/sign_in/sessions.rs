//! The sessions of people signed in through the provider, kept in this process: the
//! cookie holds a random id and nothing else, the person (id, name, groups) stays here, so
//! a cookie can neither be read for who it is nor altered into someone else, and signing
//! out ends it for whoever holds a copy. Ids are kept as their SHA-256 digests. There are
//! at most so many: when full, the one nearest its end gives way.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::policy::people::Person;

/// What a session cookie amounts to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// No cookie.
    None,
    /// A running session of this person; `key` names it for its sign-out form.
    Valid { person: Person, key: String },
    /// A cookie of no running session: ended, signed out, or never this page's.
    Gone,
}

struct Held {
    person: Person,
    until_ms: i64,
}

/// The running sessions, by the digest of their id.
pub(crate) struct Sessions {
    held: Mutex<HashMap<[u8; 32], Held>>,
    limit: usize,
}

impl Sessions {
    pub(crate) fn new(limit: usize) -> Sessions {
        Sessions {
            held: Mutex::new(HashMap::new()),
            limit: limit.max(1),
        }
    }

    /// Opens a session of `person` under `id` (a new random value) until `until_ms`.
    pub(crate) fn open(&self, id: &str, person: Person, now_ms: i64, until_ms: i64) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        held.retain(|_, s| s.until_ms > now_ms);
        while held.len() >= self.limit {
            let nearest = held
                .iter()
                .min_by_key(|(_, s)| s.until_ms)
                .map(|(key, _)| *key);
            match nearest {
                Some(key) => held.remove(&key),
                None => break,
            };
        }
        held.insert(digest(id), Held { person, until_ms });
    }

    /// The session cookie `id` names, at `now_ms`.
    pub(crate) fn find(&self, id: Option<&str>, now_ms: i64) -> Found {
        let Some(id) = id else {
            return Found::None;
        };
        let key = digest(id);
        let Ok(mut held) = self.held.lock() else {
            return Found::Gone;
        };
        match held.get(&key) {
            Some(s) if s.until_ms > now_ms => Found::Valid {
                person: s.person.clone(),
                key: super::super::secret::hex(&key),
            },
            Some(_) => {
                held.remove(&key);
                Found::Gone
            }
            None => Found::Gone,
        }
    }

    /// Ends the session cookie `id` names; whether there was one.
    pub(crate) fn end(&self, id: &str) -> bool {
        self.held
            .lock()
            .map(|mut held| held.remove(&digest(id)).is_some())
            .unwrap_or(false)
    }
}

fn digest(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_runs_until_it_ends_or_is_ended() {
        let sessions = Sessions::new(10);
        sessions.open("id-1", Person::new("alice"), 0, 1_000);
        assert!(
            matches!(sessions.find(Some("id-1"), 10), Found::Valid { person, .. } if person.id == "alice")
        );
        assert_eq!(sessions.find(Some("id-2"), 10), Found::Gone);
        assert_eq!(sessions.find(None, 10), Found::None);
        assert_eq!(sessions.find(Some("id-1"), 1_000), Found::Gone);
        sessions.open("id-3", Person::new("bob"), 0, 1_000);
        assert!(sessions.end("id-3"));
        assert_eq!(sessions.find(Some("id-3"), 10), Found::Gone);
        assert!(!sessions.end("id-3"));
    }

    #[test]
    fn when_full_the_session_nearest_its_end_gives_way() {
        let sessions = Sessions::new(2);
        sessions.open("a", Person::new("a"), 0, 300);
        sessions.open("b", Person::new("b"), 0, 100);
        sessions.open("c", Person::new("c"), 0, 200);
        assert_eq!(sessions.find(Some("b"), 1), Found::Gone);
        assert!(matches!(sessions.find(Some("a"), 1), Found::Valid { .. }));
        assert!(matches!(sessions.find(Some("c"), 1), Found::Valid { .. }));
    }
}
