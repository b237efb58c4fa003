//! The protocol's errors: what each refusal of this crate and the inbox is on the wire.

use a2a::{A2AError, FieldViolation, TypedDetail};
use toolnexus_inbox::InboxError;

use crate::error::A2aError;

/// The A2A error a refusal or failure answers with. Refusals say what to change (a refusal
/// of the inbox is read through a batch to the answer it names); a failure of the store is
/// logged here and answered as an internal error, without its details.
pub(crate) fn to_protocol(error: A2aError) -> A2AError {
    match error {
        A2aError::NotAnAnswer(_) | A2aError::UnknownRequest { .. } => {
            A2AError::invalid_params(error.to_string())
        }
        A2aError::InvalidAnswer { ref source, .. } => {
            let violation = source.field.clone().map(|field| FieldViolation {
                field,
                description: error.to_string(),
            });
            let params = A2AError::invalid_params(error.to_string());
            match violation {
                Some(v) => params.with_details(vec![TypedDetail::bad_request(vec![v])]),
                None => params,
            }
        }
        A2aError::Inbox(e) => match e.cause() {
            InboxError::InvalidAnswer { .. } => {
                A2AError::invalid_params(format!("the answer does not fit: {e}"))
            }
            InboxError::NotWaiting { .. }
            | InboxError::Expired(_)
            | InboxError::NotAllowed { .. }
            | InboxError::AlreadyCounted { .. } => {
                A2AError::unsupported_operation(format!("the task takes no answer now: {e}"))
            }
            InboxError::AnsweredTwice(_) | InboxError::OtherRun { .. } => {
                A2AError::invalid_params(e.to_string())
            }
            _ => internal(A2aError::Inbox(e)),
        },
        other => internal(other),
    }
}

/// A failure of the server's own: logged, and answered without its details.
fn internal(error: A2aError) -> A2AError {
    tracing::error!(%error, "an A2A request failed");
    A2AError::internal("the server could not serve the request; it is logged")
}

/// A message to a task that is over.
pub(crate) fn terminal(id: &str) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` is over: send a message without a taskId to start a new one"
    ))
}

/// A message to a task that is not waiting for one.
pub(crate) fn busy(id: &str) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` is not waiting for input: its run goes on (another message answered it)"
    ))
}
