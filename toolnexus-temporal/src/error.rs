//! [`TemporalError`]: what can go wrong between this crate and a Temporal server.

use crate::refusal::AnswerRefusal;

/// An error of the Temporal integration. Messages name what failed and what to do; none
/// carries a key or a payload.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemporalError {
    /// The codec's key is unusable.
    #[error("the payload codec's key is unusable: {0}")]
    Key(String),
    /// The server's address is not `HOST:PORT` or a URL.
    #[error("`{address}` is not a Temporal address: give HOST:PORT (e.g. 127.0.0.1:7233)")]
    Address {
        /// What was given.
        address: String,
    },
    /// The server could not be reached.
    #[error("could not connect to Temporal at {address}: {reason}")]
    Connect {
        /// The server's address.
        address: String,
        /// Why.
        reason: String,
    },
    /// The worker could not be set up or stopped with an error.
    #[error("the Temporal worker failed: {0}")]
    Worker(String),
    /// A run was started under an id a run already has.
    #[error("run `{run}` is already started: give a new run an id of its own")]
    AlreadyStarted {
        /// The run's workflow id.
        run: String,
    },
    /// No run has this id in the namespace (or its history is gone).
    #[error("no run `{run}` is known to Temporal in this namespace")]
    NotFound {
        /// The run's workflow id.
        run: String,
    },
    /// The run refused an answer, and changed nothing; [`AnswerRefusal`] says why.
    #[error("run `{run}` refused the answer: {message}")]
    Refused {
        /// The run's workflow id.
        run: String,
        /// Why, as a type to match on.
        refusal: AnswerRefusal,
        /// Why, in the run's words, for a person.
        message: String,
    },
    /// Starting, querying, updating or awaiting a run failed otherwise.
    #[error("{0}")]
    Run(String),
}
