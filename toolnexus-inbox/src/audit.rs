//! The audit trail: every change of a parked run, appended in the transaction that makes
//! the change and never rewritten, so the trail and the run can never disagree.

use std::time::SystemTime;

use sqlx::AnyConnection;

use crate::clock::from_ms;
use crate::{Inbox, InboxError};

/// What happened to a run, in an [`AuditEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditKind {
    /// The run was parked on a request (one entry per request it waits on).
    Parked,
    /// A person answered a request; the detail is the answer as JSON.
    Answered,
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
}

impl AuditKind {
    fn as_str(self) -> &'static str {
        match self {
            AuditKind::Parked => "parked",
            AuditKind::Answered => "answered",
            AuditKind::Expired => "expired",
            AuditKind::Claimed => "claimed",
            AuditKind::Resumed => "resumed",
            AuditKind::AttemptFailed => "attempt_failed",
            AuditKind::Failed => "failed",
            AuditKind::Notified => "notified",
            AuditKind::NotificationFailed => "notification_failed",
            AuditKind::Escalated => "escalated",
        }
    }

    fn parse(text: &str) -> Option<AuditKind> {
        [
            AuditKind::Parked,
            AuditKind::Answered,
            AuditKind::Expired,
            AuditKind::Claimed,
            AuditKind::Resumed,
            AuditKind::AttemptFailed,
            AuditKind::Failed,
            AuditKind::Notified,
            AuditKind::NotificationFailed,
            AuditKind::Escalated,
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

/// One change of a run ([`Inbox::audit`]).
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

    /// Appends the entry, at time `at`, inside the caller's transaction. Every caller has already
    /// written the run's row in that transaction, which holds the row's lock (SQLite: the
    /// database's) until commit, so two entries of one run never race for a number.
    pub(crate) async fn append(self, conn: &mut AnyConnection, at: i64) -> Result<(), InboxError> {
        sqlx::query(
            "INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, \
             attempt, detail) SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7 \
             FROM toolnexus_inbox_audit WHERE run_id = $1",
        )
        .bind(self.run)
        .bind(at)
        .bind(self.kind.as_str())
        .bind(self.request)
        .bind(self.actor)
        .bind(self.attempt)
        .bind(self.detail)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}

impl Inbox {
    /// The audit trail of the run that request `id` belongs to (any of its requests),
    /// oldest first; empty when no run has that request. A run resumed into a new
    /// parking continues under the new request's id ([`Parked::next`](crate::Parked::next)).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// assert!(inbox.audit("no-such-request").await?.is_empty());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn audit(&self, id: &str) -> Result<Vec<AuditEntry>, InboxError> {
        let rows: Vec<AuditRow> = sqlx::query_as(
            "SELECT at, kind, request_id, actor, attempt, detail FROM toolnexus_inbox_audit \
             WHERE run_id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1) \
             ORDER BY seq",
        )
        .bind(id)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter()
            .map(|(at, kind, request, actor, attempt, detail)| {
                let kind = AuditKind::parse(&kind).ok_or_else(|| InboxError::Corrupt {
                    id: id.to_owned(),
                    reason: format!("audit entry of unknown kind {kind:?}"),
                })?;
                Ok(AuditEntry {
                    at: from_ms(at),
                    kind,
                    request,
                    actor,
                    attempt: attempt.map(|a| u32::try_from(a).unwrap_or(u32::MAX)),
                    detail,
                })
            })
            .collect()
    }
}

type AuditRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);
