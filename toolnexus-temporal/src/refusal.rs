//! [`AnswerRefusal`]: why the `answer` update refused an answer, as a type. The workflow
//! raises it, and the clients of this crate (the inbox's forwarder, [`Runs`](crate::Runs))
//! tell the cases apart by it; its wording is for people and may change.
//!
//! It lives apart from the workflow because both sides of Temporal read it: the workflow
//! writes it into the update's failure, a client reads it back out.
//!
//! On the wire, Temporal wraps an update handler's error in an application failure of no
//! type, and builds that failure's cause from the error's `source()`. So the refusal's
//! [`code`](AnswerRefusal::code) travels as the type of that cause, an application failure,
//! where a client of any SDK reads it; the failure's message is the refusal's wording.

use std::error::Error as StdError;
use std::fmt;

use temporalio_common::protos::temporal::api::failure::v1::Failure;
use temporalio_sdk::ApplicationFailure;

/// Why the `answer` update refused an answer. The run changed nothing: it still waits on
/// whatever it waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AnswerRefusal {
    /// It arrived unencrypted at a worker that encrypts its runs with a payload codec key.
    Unencrypted,
    /// It is not an answer's JSON, or names no request.
    Malformed,
    /// The request it names is answered already (or was declined as expired).
    AlreadyAnswered,
    /// The run has ended: nothing waits any more.
    Ended,
    /// It names no request the run waits on, or its data does not fit the request.
    Unfit,
    /// An approval the run would not trust
    /// ([`Toolkit::judge_approval`](toolnexus::Toolkit::judge_approval)), e.g. one of a gate
    /// whose rule names responders, without the inbox's receipts.
    Untrusted,
}

impl AnswerRefusal {
    const ALL: [AnswerRefusal; 6] = [
        AnswerRefusal::Unencrypted,
        AnswerRefusal::Malformed,
        AnswerRefusal::AlreadyAnswered,
        AnswerRefusal::Ended,
        AnswerRefusal::Unfit,
        AnswerRefusal::Untrusted,
    ];

    /// The refusal's name on the wire: the type of the application failure that is the
    /// cause of the update's failure.
    pub fn code(self) -> &'static str {
        match self {
            AnswerRefusal::Unencrypted => "ToolnexusAnswerUnencrypted",
            AnswerRefusal::Malformed => "ToolnexusAnswerMalformed",
            AnswerRefusal::AlreadyAnswered => "ToolnexusAnswerAlreadyAnswered",
            AnswerRefusal::Ended => "ToolnexusAnswerRunEnded",
            AnswerRefusal::Unfit => "ToolnexusAnswerUnfit",
            AnswerRefusal::Untrusted => "ToolnexusAnswerUntrusted",
        }
    }

    /// The refusal a failed `answer` update carries, found by its code along the failure's
    /// causes; `None` for a failure that is not one of the workflow's refusals.
    pub(crate) fn of_failure(failure: &Failure) -> Option<Self> {
        let mut at = Some(failure);
        while let Some(failure) = at {
            let kind = failure.maybe_application_failure().map(|info| &info.r#type);
            if let Some(refusal) = kind.and_then(|kind| Self::from_code(kind)) {
                return Some(refusal);
            }
            at = failure.cause.as_deref();
        }
        None
    }

    fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.code() == code)
    }
}

/// A refusal with its wording, as the update's handler and validator return it.
#[derive(Debug)]
pub(crate) struct Refused {
    message: String,
    /// The refusal as Temporal types it, reached through `source()` (see the module's doc).
    typed: Box<ApplicationFailure>,
}

impl Refused {
    pub(crate) fn new(refusal: AnswerRefusal, message: impl Into<String>) -> Self {
        let typed = Box::new(
            ApplicationFailure::builder(refusal.code())
                .type_name(refusal.code().to_owned())
                .non_retryable(true)
                .build(),
        );
        Refused {
            message: message.into(),
            typed,
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Refused {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.typed)
    }
}

#[cfg(test)]
mod tests {
    use temporalio_common::data_converters::{
        DefaultFailureConverter, FailureConverter, PayloadConverter, SerializationContextData,
    };
    use temporalio_common::error::{OutgoingError, OutgoingWorkflowError};

    use super::*;

    /// What the workflow's runtime does with an update handler's error.
    fn as_the_update_fails(error: Refused) -> Failure {
        let boxed: Box<dyn StdError + Send + Sync> = Box::new(error);
        DefaultFailureConverter::default().to_failure(
            OutgoingError::Workflow(OutgoingWorkflowError::Application(Box::new(
                ApplicationFailure::new(boxed),
            ))),
            &PayloadConverter::default(),
            &SerializationContextData::None,
        )
    }

    #[test]
    fn the_refusal_crosses_the_wire_as_a_type_and_its_words_as_the_message() {
        for refusal in AnswerRefusal::ALL {
            let failure = as_the_update_fails(Refused::new(refusal, "request `r1` is refused"));
            assert_eq!(failure.message, "request `r1` is refused");
            assert_eq!(AnswerRefusal::of_failure(&failure), Some(refusal));
        }
        let other = Failure::application_failure("request `r1` is already answered".into(), true);
        assert_eq!(AnswerRefusal::of_failure(&other), None);
    }
}
