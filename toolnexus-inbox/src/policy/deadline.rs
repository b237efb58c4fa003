//! The rules for when nobody answers: requests escalated after a set wait
//! ([`Escalation`]), and what expiry does to a request of each kind ([`Expiry`]). Applying
//! them is the inbox's housekeeping (`overdue`).

use std::time::Duration;

use serde_json::Value;
use toolnexus::{Answer, Refusal, Request, RequestKind};

use crate::policy::people::Responder;

/// A second notification for a request nobody answered in time
/// ([`InboxBuilder::escalate`](crate::InboxBuilder::escalate)): to the webhooks it names
/// (else to every webhook told of [`Event::Escalated`](crate::Event::Escalated)), and,
/// when it names responders, they may answer the request from then on too.
///
/// ```
/// use std::time::Duration;
/// use toolnexus_inbox::{Escalation, Inbox};
///
/// let builder = Inbox::builder("sqlite::memory:").escalate(
///     Escalation::after(Duration::from_secs(30 * 60))
///         .kind("approval")
///         .notify(["managers"])
///         .responders(["group:leads"]),
/// );
/// # drop(builder);
/// ```
#[derive(Debug, Clone)]
pub struct Escalation {
    pub(crate) after: Duration,
    kinds: Vec<RequestKind>,
    pub(crate) notify: Vec<String>,
    pub(crate) responders: Vec<Responder>,
}

impl Escalation {
    /// Escalates a request still unanswered `after` it was parked.
    pub fn after(after: Duration) -> Escalation {
        Escalation {
            after,
            kinds: Vec::new(),
            notify: Vec::new(),
            responders: Vec::new(),
        }
    }

    /// Only requests of `kind` (call it again for more); default every kind.
    pub fn kind(mut self, kind: impl Into<RequestKind>) -> Escalation {
        self.kinds.push(kind.into());
        self
    }

    /// The webhooks told, by name ([`Webhook::name`](crate::Webhook::name)).
    pub fn notify<I, S>(mut self, webhooks: I) -> Escalation
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.notify = webhooks.into_iter().map(Into::into).collect();
        self
    }

    /// People (`"ada@example.com"`) or groups (`"group:leads"`) who may answer the request
    /// once it is escalated, besides those who already could. A request anyone may answer
    /// stays so.
    pub fn responders<I, S>(mut self, responders: I) -> Escalation
    where
        I: IntoIterator<Item = S>,
        S: Into<Responder>,
    {
        self.responders = responders.into_iter().map(Into::into).collect();
        self
    }

    pub(crate) fn covers(&self, request: &Request) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&request.kind)
    }
}

/// What happens to a request of a kind when it expires
/// ([`InboxBuilder::on_expiry`](crate::InboxBuilder::on_expiry)).
///
/// Every kind is declined by default, as `Answer::refuse(id, Refusal::Expired)`: the
/// model is told nobody answered. Silence is not consent — a purchase nobody approved is
/// not bought, a form nobody filled in has no values, a sign-in nobody gave grants
/// nothing — so anything else is the host's choice for a kind where it is safe.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Expiry {
    /// Declined with `expired` (the default).
    #[default]
    Decline,
    /// Approved, as if a person had said yes.
    Approve,
    /// Answered with this data (checked against the request's form like any answer; data
    /// that does not fit declines instead).
    Answer(Value),
}

/// A kind's expiry rule: its action, and a deadline for requests that set none.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExpiryRule {
    pub(crate) action: Expiry,
    pub(crate) after: Option<Duration>,
}

impl Expiry {
    /// The answer this action gives request `id`.
    pub(crate) fn answer(&self, id: &str) -> Answer {
        match self {
            Expiry::Decline => Answer::refuse(id, Refusal::Expired),
            Expiry::Approve => {
                Answer::ok(id).with_note("approved by default: nobody answered in time")
            }
            Expiry::Answer(data) => Answer::ok(id)
                .with_data(data.clone())
                .with_note("answered by default: nobody answered in time"),
        }
    }
}
