//! Where a parked run stands, and how that is spelled in the database.

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
        Some(match s {
            "waiting" => ParkedState::Waiting,
            "answered" => ParkedState::Answered,
            "running" => ParkedState::Running,
            "done" => ParkedState::Done,
            "failed" => ParkedState::Failed,
            _ => return None,
        })
    }
}

impl fmt::Display for ParkedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ParkedState;

    #[test]
    fn spelling_round_trips() {
        for s in [
            ParkedState::Waiting,
            ParkedState::Answered,
            ParkedState::Running,
            ParkedState::Done,
            ParkedState::Failed,
        ] {
            assert_eq!(ParkedState::parse(s.as_str()), Some(s));
        }
        assert_eq!(ParkedState::parse("paused"), None);
    }
}
