//! When nobody answers: requests escalated after a set wait ([`Escalation`]), and what
//! expiry does to a request of each kind ([`Expiry`]).

use std::time::Duration;

use serde_json::Value;
use sqlx::Connection;
use toolnexus::{Answer, Refusal, Request};

use crate::audit::{AuditKind, Record};
use crate::clock::ms;
use crate::notify::lock_run;
use crate::parked::parked_from;
use crate::{Inbox, InboxError};

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
    kinds: Vec<String>,
    pub(crate) notify: Vec<String>,
    pub(crate) responders: Vec<String>,
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
    pub fn kind(mut self, kind: impl Into<String>) -> Escalation {
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
        S: Into<String>,
    {
        self.responders = responders.into_iter().map(Into::into).collect();
        self
    }

    fn covers(&self, request: &Request) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|k| k == request.kind.as_str())
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

impl Inbox {
    /// The expiry rule for requests of `kind`.
    pub(crate) fn expiry_rule(&self, kind: &str) -> Option<&ExpiryRule> {
        self.inner.expiry.get(kind)
    }

    /// Escalates every waiting request whose escalation is due and not done yet: one
    /// audit entry and one notification each, exactly once whichever worker does it.
    /// Returns how many it escalated. A [`Worker`](crate::Worker) calls it as part of its
    /// housekeeping.
    pub async fn escalate_due(&self) -> Result<usize, InboxError> {
        let rules = &self.inner.escalations;
        let Some(soonest) = rules.iter().map(|e| ms(e.after)).min() else {
            return Ok(0);
        };
        let now = self.now();
        let candidates: Vec<(String, String, String, String, i64)> = sqlx::query_as(concat!(
            "SELECT q.id, q.run_id, r.agent, q.request, q.parked_at",
            parked_from!(),
            " WHERE q.answered_at IS NULL AND r.state = 'waiting' AND q.escalated_at IS NULL \
             AND q.parked_at <= $1 ORDER BY q.parked_at, q.id"
        ))
        .bind(now.saturating_sub(soonest))
        .fetch_all(&self.inner.pool)
        .await?;
        let mut escalated = 0;
        for (id, run, agent, request, parked_at) in candidates {
            let Ok(request) = serde_json::from_str::<Request>(&request) else {
                tracing::warn!(id = %id, "skipping an unreadable request in escalation");
                continue;
            };
            let waited = now.saturating_sub(parked_at);
            let Some(rule) = rules
                .iter()
                .find(|e| e.covers(&request) && ms(e.after) <= waited)
            else {
                continue;
            };
            if self.escalate(&run, &agent, &request, waited, rule).await? {
                escalated += 1;
            }
        }
        Ok(escalated)
    }

    async fn escalate(
        &self,
        run: &str,
        agent: &str,
        request: &Request,
        waited: i64,
        rule: &Escalation,
    ) -> Result<bool, InboxError> {
        let now = self.now();
        let to = crate::inbox::to_json(&request.id, &rule.responders)?;
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        lock_run(&mut tx, run).await?;
        let marked = sqlx::query(
            "UPDATE toolnexus_inbox_requests SET escalated_at = $1, escalated_to = $2 \
             WHERE id = $3 AND escalated_at IS NULL AND answered_at IS NULL",
        )
        .bind(now)
        .bind(&to)
        .bind(&request.id)
        .execute(&mut *tx)
        .await?;
        if marked.rows_affected() == 0 {
            // Answered, or escalated by another worker, since it was read.
            tx.rollback().await?;
            return Ok(false);
        }
        let detail = format!(
            "after {} s{}",
            waited / 1000,
            if rule.responders.is_empty() {
                String::new()
            } else {
                format!(", now also for {}", rule.responders.join(", "))
            }
        );
        Record {
            request: Some(&request.id),
            actor: Some(&self.inner.worker),
            detail: Some(&detail),
            ..Record::new(run, AuditKind::Escalated)
        }
        .append(&mut tx, now)
        .await?;
        let notice = || self.notice_escalated(run, agent, request, waited, &rule.responders);
        self.enqueue(&mut tx, notice, Some(rule.notify.as_slice()))
            .await?;
        tx.commit().await?;
        self.wake_deliverers();
        Ok(true)
    }
}
