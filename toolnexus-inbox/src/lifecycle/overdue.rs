//! Housekeeping for requests nobody answers in time: escalating them once
//! ([`Inbox::escalate_due`]) and applying their kind's expiry action
//! ([`Inbox::expire_due`]).

use toolnexus::{Answer, Refusal, Request};
use tracing::Instrument;

use crate::clock::ms;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::deadline::{Escalation, Expiry};
use crate::policy::people::{listed, Source};
use crate::records::audit::{AuditKind, Record};
use crate::records::spans;
use crate::store::{json, requests, runs};

impl Inbox {
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
        let candidates =
            requests::due_to_escalate(&self.inner.store.pool, now.saturating_sub(soonest)).await?;
        let mut escalated = 0;
        for candidate in candidates {
            let Ok(request) = serde_json::from_str::<Request>(&candidate.request) else {
                tracing::warn!(id = %candidate.id, "skipping an unreadable request in escalation");
                continue;
            };
            let (run, agent) = (candidate.run_id, candidate.agent);
            let waited = now.saturating_sub(candidate.parked_at);
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
        let to = json(&request.id, &rule.responders)?;
        let mut tx = self.inner.store.write().await?;
        runs::lock(&mut tx, run).await?;
        if !requests::mark_escalated(&mut tx, &request.id, &to, now).await? {
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
                format!(", now also for {}", listed(&rule.responders))
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
        self.note_change();
        Ok(true)
    }

    /// Settles every waiting request whose `expiresAt` has passed with its kind's expiry
    /// action ([`InboxBuilder::on_expiry`](crate::InboxBuilder::on_expiry)): by default declined as expired
    /// (`Answer::refuse(id, Refusal::Expired)`), so the resumed run tells the model.
    /// Returns how many expired. A run whose requests are then all answered resumes as
    /// usual.
    pub async fn expire_due(&self) -> Result<usize, InboxError> {
        let span = spans::expire(&self.inner.agent);
        let expired = self.expire_in_span().instrument(span.clone()).await;
        if let Ok(n) = &expired {
            span.record(
                "toolnexus.inbox.expired",
                i64::try_from(*n).unwrap_or(i64::MAX),
            );
        }
        expired
    }

    async fn expire_in_span(&self) -> Result<usize, InboxError> {
        let due = requests::due_to_expire(&self.inner.store.pool, self.now()).await?;
        let mut expired = 0;
        for requests::Due { id, request } in due {
            // An unreadable request gets the default; answering it reports what is wrong.
            let request = serde_json::from_str::<Request>(&request).ok();
            // Silence is not the consent of several people: a request that needs more
            // than one approval is declined when it expires, whatever its kind's rule.
            let quorum = request.as_ref().map_or(1, Request::quorum);
            let kind = request.map(|r| r.kind);
            let action = kind
                .as_ref()
                .and_then(|kind| self.expiry_rule(kind))
                .filter(|_| quorum == 1)
                .map_or(&Expiry::Decline, |rule| &rule.action);
            let mut outcome = self.record_answer(action.answer(&id), Source::Expiry).await;
            if let Err(InboxError::InvalidAnswer { .. }) = &outcome {
                let kind = kind.as_ref().map_or("", |k| k.as_str());
                tracing::warn!(id = %id, kind = %kind, "the expiry answer does not fit the request's form; declining");
                outcome = self
                    .record_answer(Answer::refuse(&id, Refusal::Expired), Source::Expiry)
                    .await;
            }
            match outcome {
                Ok(()) => expired += 1,
                // Answered in the meantime: the person was first.
                Err(InboxError::NotWaiting { .. } | InboxError::UnknownRequest(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }
}
