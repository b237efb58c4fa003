//! Answers taken from outside the process, checked against the requests a halted run
//! waits on before any is recorded: the rule every host that takes them over a protocol
//! (A2A, AG-UI) applies, so none of them restates it.

use crate::form::FitError;
use crate::{Answer, Request};

/// Why answers cannot be taken for the requests a halted run waits on
/// ([`check_answers`]). Nothing was recorded: every request still waits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerSetError {
    /// An answer names no request that waits: forged, another run's, or already answered.
    #[error("no request `{id}` waits here (waiting: {waiting})")]
    Unknown {
        /// The id the answer names.
        id: String,
        /// The ids that do wait, comma-separated.
        waiting: String,
    },
    /// Two answers name one request.
    #[error("request `{id}` is answered twice")]
    Twice {
        /// The request.
        id: String,
    },
    /// An answer does not fit its request ([`Request::check_answer`]): a form's data that
    /// misses or misfills a field, or edited arguments that do not fit the tool.
    #[error("the answer to request `{id}` does not fit: {source}")]
    Invalid {
        /// The request.
        id: String,
        /// The form's check: the field at fault, when one is, and every problem.
        #[source]
        source: FitError,
    },
}

/// Checks `answers` against `waiting`, the requests a halted run waits on: each names one
/// of them by its id, none is answered twice, and each fits its request
/// ([`Request::check_answer`]). It does not ask that every request be answered: a host
/// whose protocol answers them one at a time takes part of them.
///
/// ```
/// use toolnexus::{check_answers, Answer, AnswerSetError, Request};
///
/// let waiting = [
///     Request::new("approval", "Buy a gpu?").with_id("r1"),
///     Request::new("approval", "Buy a tpu?").with_id("r2"),
/// ];
/// assert!(check_answers(&waiting, &[Answer::ok("r2")]).is_ok());
/// assert!(matches!(
///     check_answers(&waiting, &[Answer::ok("r9")]),
///     Err(AnswerSetError::Unknown { id, waiting }) if id == "r9" && waiting == "r1, r2"
/// ));
/// assert!(matches!(
///     check_answers(&waiting, &[Answer::ok("r1"), Answer::decline("r1", "declined")]),
///     Err(AnswerSetError::Twice { id }) if id == "r1"
/// ));
/// ```
pub fn check_answers(waiting: &[Request], answers: &[Answer]) -> Result<(), AnswerSetError> {
    for (i, answer) in answers.iter().enumerate() {
        let id = answer.id.as_str();
        let Some(request) = waiting.iter().find(|r| r.id == id) else {
            return Err(AnswerSetError::Unknown {
                id: id.to_owned(),
                waiting: waiting
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if answers[..i].iter().any(|a| a.id == id) {
            return Err(AnswerSetError::Twice { id: id.to_owned() });
        }
        request
            .check_answer(answer)
            .map_err(|source| AnswerSetError::Invalid {
                id: id.to_owned(),
                source,
            })?;
    }
    Ok(())
}
