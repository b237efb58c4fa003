//! Everything this crate can refuse or fail with.

use toolnexus_inbox::InboxError;

/// Why a message could not be taken, or a task could not be served.
///
/// The refusals (`NotAnAnswer`, `UnknownRequest`, `InvalidAnswer`, …) change nothing: the
/// task keeps waiting as it was. None of them carries a database URL or a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The continuation does not read as an answer to what the task waits on: a data part
    /// that is no `Answer`, text that is neither an approval nor a decline, or nothing at
    /// all.
    #[error("the message is not an answer to what the task waits on: {0}")]
    NotAnAnswer(String),
    /// The continuation answers a request id the task does not wait on.
    #[error("no request `{id}` waits on this task (waiting: {waiting})")]
    UnknownRequest {
        /// The id the message named.
        id: String,
        /// The ids that do wait, comma-separated.
        waiting: String,
    },
    /// The answer does not fit its request: a form's data that misses or misfills a field,
    /// or edited arguments that do not fit the tool.
    #[error("the answer to request `{id}` does not fit: {source}")]
    InvalidAnswer {
        /// The request answered.
        id: String,
        /// The form's check: the field at fault, when one is, and every problem.
        source: toolnexus::form::AnswerError,
    },
    /// A task's record in the inbox cannot be read back.
    #[error("the record of task `{id}` is unreadable: {reason}")]
    Corrupt {
        /// The task.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Building the server failed: its public URL does not parse.
    #[error("the server's URL `{0}` is not an absolute http(s) URL")]
    BadUrl(String),
    /// The inbox refused or failed.
    #[error(transparent)]
    Inbox(#[from] InboxError),
}
