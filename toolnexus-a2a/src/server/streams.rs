//! How many event streams (`SubscribeToTask`, `SendStreamingMessage`) are open at once:
//! each holds a connection and a task of the server's, so a caller opening them without
//! end would take the server's memory. A stream over a bound is refused before it opens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use a2a::A2AError;
use toolnexus_inbox::Person;

/// The streams open now, per identified caller and in all.
pub(crate) struct Streams {
    total: usize,
    per_caller: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    all: usize,
    /// Per identified caller's id; callers the door did not identify are one stand-in,
    /// so they are bounded by the total alone.
    by: HashMap<String, usize>,
}

/// One open stream, counted until dropped.
pub(crate) struct Slot {
    streams: Arc<Streams>,
    caller: Option<String>,
}

impl Streams {
    pub(crate) fn new(total: usize, per_caller: usize) -> Arc<Streams> {
        Arc::new(Streams {
            total,
            per_caller,
            open: Mutex::new(Open::default()),
        })
    }

    /// Counts a stream `who` opens; refused when it would pass a bound.
    pub(crate) fn open(self: &Arc<Self>, who: &Person) -> Result<Slot, A2AError> {
        // A panic elsewhere while counting leaves counts a guard will still correct.
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.all >= self.total {
            return Err(A2AError::unsupported_operation(format!(
                "too many streams: this agent serves at most {} at once; try again once \
                 one has closed, or read the task with GetTask",
                self.total
            )));
        }
        let caller = who.is_identified().then(|| who.id.to_ascii_lowercase());
        if let Some(id) = &caller {
            let mine = open.by.get(id).copied().unwrap_or(0);
            if mine >= self.per_caller {
                return Err(A2AError::unsupported_operation(format!(
                    "too many streams: a caller may have at most {} open at once; close one \
                     (or read the task with GetTask) and subscribe again",
                    self.per_caller
                )));
            }
            open.by.insert(id.clone(), mine + 1);
        }
        open.all += 1;
        Ok(Slot {
            streams: self.clone(),
            caller,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .streams
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.all = open.all.saturating_sub(1);
        if let Some(id) = &self.caller
            && let Some(mine) = open.by.get_mut(id)
        {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                open.by.remove(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use toolnexus_inbox::Person;

    use super::Streams;

    #[test]
    fn a_caller_over_their_bound_is_refused_until_one_of_theirs_closes() {
        let streams = Streams::new(3, 2);
        let ada = Person::new("ada@example.com");
        let first = streams.open(&ada).ok();
        let second = streams.open(&ada).ok();
        assert!(first.is_some() && second.is_some());
        let refused = streams.open(&ada).err().map(|e| e.code);
        assert_eq!(refused, Some(a2a::error_code::UNSUPPORTED_OPERATION));
        let bob = streams.open(&Person::new("bob@example.com"));
        assert!(bob.is_ok(), "another caller has bounds of their own");
        drop(first);
        let again = streams.open(&ada);
        assert!(again.is_ok(), "one of Ada's closed: room for another");
        let carol = streams.open(&Person::new("carol@example.com"));
        assert!(
            carol.is_err(),
            "the total is reached: Ada's two and Bob's one"
        );
        drop(bob);
        assert!(streams.open(&Person::new("carol@example.com")).is_ok());
    }

    #[test]
    fn stand_ins_are_bounded_by_the_total() {
        let streams = Streams::new(3, 1);
        let anonymous = Person::stand_in("a2a client");
        let held: Vec<_> = (0..3)
            .filter_map(|_| streams.open(&anonymous).ok())
            .collect();
        assert_eq!(held.len(), 3);
        assert!(streams.open(&Person::new("ada@example.com")).is_err());
    }
}
