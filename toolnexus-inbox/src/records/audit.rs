//! The audit trail: every change of a parked run, appended in the transaction that makes
//! the change and never rewritten, so the trail and the run can never disagree.

use std::time::SystemTime;

use crate::store::Conn;

use crate::error::InboxError;
use crate::store::audit::{self as trail, NewEntry};

/// What happened to a run, in an [`AuditEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditKind {
    /// The run was parked on a request (one entry per request it waits on).
    Parked,
    /// A person answered a request; the detail is the answer as JSON.
    Answered,
    /// A person approved a request that needs several people, and it waits for more (the
    /// actor is who approved, `bob for ada` under a delegation; the detail the answer).
    Approved,
    /// A request passed its `expiresAt` and was declined as expired.
    Expired,
    /// A worker claimed the run to resume it, under a new attempt number.
    Claimed,
    /// The resumed run ended, or halted again (the detail names its new request).
    Resumed,
    /// An attempt failed and the run will be resumed again after the lease.
    AttemptFailed,
    /// The run was given up: no attempts left, or it cannot be resumed at all.
    Failed,
    /// A webhook took a notification (the actor is the webhook, the detail the event).
    Notified,
    /// A notification was given up after its last attempt failed.
    NotificationFailed,
    /// A request nobody answered in time was escalated (the detail says after how long,
    /// and to whom).
    Escalated,
    /// A resume was refused before anything ran: the call a request would settle is not
    /// the one it was parked for (the detail names the call and the request).
    Refused,
    /// The run was cancelled while it waited: its open requests were refused as cancelled
    /// and it will not resume (the actor is who cancelled).
    Cancelled,
    /// An answer was refused: who tried and why (the detail), so an attempt to answer
    /// without the right is on the record.
    AnswerRefused,
    /// A person handed their answering rights to another (a delegation's own trail,
    /// `delegation:ID`; the detail says to whom and until when).
    Delegated,
    /// A delegation was ended before its time, by its giver or an administrator.
    DelegationRevoked,
}

impl AuditKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AuditKind::Parked => "parked",
            AuditKind::Answered => "answered",
            AuditKind::Approved => "approved",
            AuditKind::Expired => "expired",
            AuditKind::Claimed => "claimed",
            AuditKind::Resumed => "resumed",
            AuditKind::AttemptFailed => "attempt_failed",
            AuditKind::Failed => "failed",
            AuditKind::Notified => "notified",
            AuditKind::NotificationFailed => "notification_failed",
            AuditKind::Escalated => "escalated",
            AuditKind::Refused => "refused",
            AuditKind::Cancelled => "cancelled",
            AuditKind::AnswerRefused => "answer_refused",
            AuditKind::Delegated => "delegated",
            AuditKind::DelegationRevoked => "delegation_revoked",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<AuditKind> {
        [
            AuditKind::Parked,
            AuditKind::Answered,
            AuditKind::Approved,
            AuditKind::Expired,
            AuditKind::Claimed,
            AuditKind::Resumed,
            AuditKind::AttemptFailed,
            AuditKind::Failed,
            AuditKind::Notified,
            AuditKind::NotificationFailed,
            AuditKind::Escalated,
            AuditKind::Refused,
            AuditKind::Cancelled,
            AuditKind::AnswerRefused,
            AuditKind::Delegated,
            AuditKind::DelegationRevoked,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

impl std::fmt::Display for AuditKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str().replace('_', " "))
    }
}

/// One change of a run ([`Inbox::audit`](crate::Inbox::audit)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuditEntry {
    /// When it happened (this host's clock).
    pub at: SystemTime,
    /// What happened.
    pub kind: AuditKind,
    /// The request it concerns, when it concerns one (parked, answered, expired).
    pub request: Option<String>,
    /// Who did it: the person who answered, the worker that claimed or resumed, the
    /// webhook notified.
    pub actor: Option<String>,
    /// The claim's attempt number, for what a worker did.
    pub attempt: Option<u32>,
    /// More about it: the answer as JSON, the error of a failed attempt, the outcome.
    pub detail: Option<String>,
}

/// An entry about to be appended to run `run`'s trail.
pub(crate) struct Record<'a> {
    pub(crate) run: &'a str,
    pub(crate) kind: AuditKind,
    pub(crate) request: Option<&'a str>,
    pub(crate) actor: Option<&'a str>,
    pub(crate) attempt: Option<i64>,
    pub(crate) detail: Option<&'a str>,
}

impl<'a> Record<'a> {
    pub(crate) fn new(run: &'a str, kind: AuditKind) -> Self {
        Record {
            run,
            kind,
            request: None,
            actor: None,
            attempt: None,
            detail: None,
        }
    }

    /// Appends the entry, at time `at`, inside the caller's transaction, which has locked
    /// the run's row.
    pub(crate) async fn append(self, conn: &mut Conn, at: i64) -> Result<(), InboxError> {
        let entry = NewEntry {
            run: self.run,
            kind: self.kind.as_str(),
            request: self.request,
            actor: self.actor,
            attempt: self.attempt,
            detail: self.detail,
            at,
        };
        trail::append(conn, &entry).await
    }
}
