//! The sign-ins under way: for each `state` sent to the provider, the PKCE verifier, the
//! nonce, where to land, and which browser started it. Each is taken once (a replayed
//! callback finds nothing), ends after its lifetime, and there are at most so many: when
//! full, the oldest gives way, so strangers starting sign-ins cannot fill memory.

use std::collections::HashMap;
use std::sync::Mutex;

/// One sign-in under way.
pub(crate) struct Pending {
    /// The PKCE code verifier (RFC 7636), sent only to the token endpoint.
    pub(crate) verifier: String,
    /// The nonce the ID token must carry.
    pub(crate) nonce: String,
    /// Where to land, relative to the router's root (checked already).
    pub(crate) to: String,
    /// The digest of the browser's binding cookie: a callback from another browser (a
    /// link someone was sent) signs nobody in.
    pub(crate) browser: [u8; 32],
    /// When it started, by the inbox's clock.
    pub(crate) started_ms: i64,
}

/// The sign-ins under way, keyed by `state`.
pub(crate) struct PendingSignIns {
    held: Mutex<HashMap<String, Pending>>,
    limit: usize,
    lifetime_ms: i64,
}

impl PendingSignIns {
    pub(crate) fn new(limit: usize, lifetime_ms: i64) -> PendingSignIns {
        PendingSignIns {
            held: Mutex::new(HashMap::new()),
            limit: limit.max(1),
            lifetime_ms,
        }
    }

    /// Keeps `pending` under `state`, at `now_ms`.
    pub(crate) fn insert(&self, state: String, pending: Pending, now_ms: i64) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        held.retain(|_, p| now_ms.saturating_sub(p.started_ms) < self.lifetime_ms);
        while held.len() >= self.limit {
            let oldest = held
                .iter()
                .min_by_key(|(_, p)| p.started_ms)
                .map(|(state, _)| state.clone());
            match oldest {
                Some(state) => held.remove(&state),
                None => break,
            };
        }
        held.insert(state, pending);
    }

    /// The sign-in under `state`, taken out: whatever comes of the callback, the state
    /// serves once. `Err(())` when it was there but had ended.
    pub(crate) fn take(&self, state: &str, now_ms: i64) -> Result<Option<Pending>, ()> {
        let Ok(mut held) = self.held.lock() else {
            return Ok(None);
        };
        match held.remove(state) {
            Some(p) if now_ms.saturating_sub(p.started_ms) >= self.lifetime_ms => Err(()),
            taken => Ok(taken),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.lock().map(|h| h.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(at: i64) -> Pending {
        Pending {
            verifier: "v".into(),
            nonce: "n".into(),
            to: String::new(),
            browser: [0; 32],
            started_ms: at,
        }
    }

    #[test]
    fn a_state_serves_once() {
        let store = PendingSignIns::new(10, 1_000);
        store.insert("s".into(), pending(0), 0);
        assert!(matches!(store.take("s", 10), Ok(Some(_))));
        assert!(matches!(store.take("s", 10), Ok(None)));
        assert!(matches!(store.take("other", 10), Ok(None)));
    }

    #[test]
    fn a_sign_in_ends() {
        let store = PendingSignIns::new(10, 1_000);
        store.insert("s".into(), pending(0), 0);
        assert!(store.take("s", 1_000).is_err());
        // Ended ones are dropped as new ones come.
        store.insert("a".into(), pending(0), 0);
        store.insert("b".into(), pending(2_000), 2_000);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn when_full_the_oldest_gives_way() {
        let store = PendingSignIns::new(2, 10_000);
        store.insert("a".into(), pending(1), 1);
        store.insert("b".into(), pending(2), 2);
        store.insert("c".into(), pending(3), 3);
        assert_eq!(store.len(), 2);
        assert!(matches!(store.take("a", 4), Ok(None)));
        assert!(matches!(store.take("b", 4), Ok(Some(_))));
        assert!(matches!(store.take("c", 4), Ok(Some(_))));
    }
}
