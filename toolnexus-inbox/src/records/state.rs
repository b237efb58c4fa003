//! The closed sets the database keeps in its state columns — where a parked run stands,
//! where a notification's delivery stands — and how each is spelled there.

use std::fmt;

/// Where a parked run stands.
///
/// `Waiting` → (an answer) → `Answered` → (a worker claims it) → `Running` → `Done`, or
/// back to `Answered` after a failed attempt, or `Failed` once the attempts are spent. A run
/// waiting on several requests is `Answered` once the last of them is; each answered
/// request reads `Answered` from its own answer on ([`Parked::state`](crate::Parked::state)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParkedState {
    /// Waiting for a person's answer.
    Waiting,
    /// Answered: waiting for a worker to resume the run (or, for one request of several,
    /// for the run's other requests to be answered).
    Answered,
    /// A worker holds its lease and is resuming it.
    Running,
    /// Resumed: its result is stored (when it halted again, its new request is parked).
    Done,
    /// Given up: the attempts were spent, or the row is unreadable.
    Failed,
}

impl ParkedState {
    /// Every state, in the order a run goes through them.
    pub(crate) const ALL: [ParkedState; 5] = [
        ParkedState::Waiting,
        ParkedState::Answered,
        ParkedState::Running,
        ParkedState::Done,
        ParkedState::Failed,
    ];

    /// The spelling stored in the database (and shown to people).
    pub fn as_str(self) -> &'static str {
        match self {
            ParkedState::Waiting => "waiting",
            ParkedState::Answered => "answered",
            ParkedState::Running => "running",
            ParkedState::Done => "done",
            ParkedState::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

impl fmt::Display for ParkedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a notification stands ([`Delivery::state`](crate::Delivery::state)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeliveryState {
    /// Not delivered yet: waiting for its first attempt or for its next.
    Pending,
    /// The webhook answered an attempt with a 2xx status.
    Delivered,
    /// Every attempt failed; it is not tried again.
    Failed,
}

impl DeliveryState {
    /// Every state.
    pub(crate) const ALL: [DeliveryState; 3] = [
        DeliveryState::Pending,
        DeliveryState::Delivered,
        DeliveryState::Failed,
    ];

    /// The spelling stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

impl fmt::Display for DeliveryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::{DeliveryState, ParkedState};

    #[test]
    fn spellings_round_trip() {
        for s in ParkedState::ALL {
            assert_eq!(ParkedState::parse(s.as_str()), Some(s));
        }
        assert_eq!(ParkedState::parse("paused"), None);
        for s in DeliveryState::ALL {
            assert_eq!(DeliveryState::parse(s.as_str()), Some(s));
        }
        assert_eq!(DeliveryState::parse("sent"), None);
    }
}
