//! Answering a waiting request: whether the answer may be taken is a pure decision
//! ([`decide`]) over what the answer's transaction read under the run's lock; the writes it
//! implies — the answer, the run ready to resume once its last request is, the audit entry,
//! the notification — follow in that transaction.

use serde_json::Value;
use toolnexus::receipt::{ReceiptAnswer, Statement};
use toolnexus::{Answer, Receipt, Request};
use tracing::Instrument;

use crate::clock::rfc3339_millis;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::lifecycle::admit::{Admitted, Ballot};
use crate::lifecycle::vote::{self, Approvals, StoredVote};
use crate::policy::delegation::{self, Delegation};
use crate::policy::people::key_of;
use crate::policy::people::{stored_responders, Person, Source};
use crate::records::audit::{AuditKind, Record};
use crate::records::spans;
use crate::records::state::ParkedState;
use crate::store::delegations;
use crate::store::requests::{self, ToAnswer};
use crate::store::runs::{self, Locked};
use crate::store::{json, Tx};

/// An answer the decision took: the request it answers, the answer as stored, the vote it
/// adds, and whether it resolves the request (else it is one approval toward a quorum).
struct Taken {
    request: Request,
    stored: String,
    vote: StoredVote,
    for_whom: Option<String>,
    resolves: bool,
}

impl Inbox {
    /// Answers a waiting request. The first answer wins: a second one, an answer to an
    /// unknown id, to a run no longer waiting or after the request's `expiresAt` is an
    /// error and changes nothing. When the request carries a form (`data.schema`), an `ok`
    /// answer's data must fit it, and edited arguments
    /// ([`Answer::with_args`](toolnexus::Answer::with_args)) must fit a gate's `argsSchema`
    /// ([`InboxError::InvalidAnswer`] names the field).
    ///
    /// When the request is one of several its run waits on, the run is ready to resume
    /// once the last of them is answered, whatever the order and however the answers race.
    ///
    /// A request that names who may answer it ([`responders`](Self::responders)) is
    /// refused here with [`InboxError::NotAllowed`]: an answer from nobody in particular
    /// is not known to come from one of them. Use [`answer_as`](Self::answer_as).
    pub async fn answer(&self, answer: Answer) -> Result<(), InboxError> {
        self.record_answer(answer, Source::Person(None)).await
    }

    /// [`answer`](Self::answer), as `who` (a [`Person`], or a plain id such as
    /// `"ada@example.com"`): recorded on the row and in the audit trail, with the time.
    /// When the request names its responders, `who` must be one of them, else
    /// [`InboxError::NotAllowed`] and nothing changes.
    pub async fn answer_as(
        &self,
        answer: Answer,
        who: impl Into<Person>,
    ) -> Result<(), InboxError> {
        self.record_answer(answer, Source::Person(Some(who.into())))
            .await
    }

    /// Answers several requests of run `run` (any of its requests' ids) at once, as `who`:
    /// all or none, in one transaction. Each answer is taken as [`answer_as`](Self::answer_as)
    /// takes one; when any is refused, none is recorded — no answer, no audit entry, no
    /// notification — and the error is [`InboxError::Batch`], naming the refused request,
    /// with the refusal as its source ([`InboxError::cause`]). An answer to a request of
    /// another run is refused with [`InboxError::OtherRun`], two answers to one request with
    /// [`InboxError::AnsweredTwice`].
    ///
    /// What a door uses when one message of its protocol answers several questions.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus::Answer;
    /// use toolnexus_inbox::{Inbox, InboxError};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let refused = inbox.answer_all("run-1", vec![Answer::ok("q1")], "ada").await;
    /// assert!(matches!(refused, Err(InboxError::Batch { request, .. }) if request == "q1"));
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn answer_all(
        &self,
        run: &str,
        answers: Vec<Answer>,
        who: impl Into<Person>,
    ) -> Result<(), InboxError> {
        let source = Source::Person(Some(who.into()));
        let Some(first) = answers.first() else {
            return Ok(());
        };
        let span = spans::answer(first, &source);
        let recorded = self
            .record_batch(run, &answers, &source)
            .instrument(span.clone())
            .await;
        if let Err(e) = &recorded {
            spans::failed(&span, e);
        }
        recorded
    }

    async fn record_batch(
        &self,
        run: &str,
        answers: &[Answer],
        source: &Source,
    ) -> Result<(), InboxError> {
        let mut tx = self.inner.store.write().await?;
        // The batch names its run by any of its requests; the answers' runs are run ids.
        let run = requests::run_of(&mut tx, run)
            .await?
            .unwrap_or_else(|| run.to_owned());
        let run = run.as_str();
        let mut ready = None;
        let mut refused = None;
        for (i, answer) in answers.iter().enumerate() {
            let taken = if answers[..i].iter().any(|a| a.id == answer.id) {
                Err(InboxError::AnsweredTwice(answer.id.clone()))
            } else {
                self.answer_in(&mut tx, answer, source, Some(run)).await
            };
            match taken {
                Ok(Some(agent)) => ready = Some(agent),
                Ok(None) => {}
                Err(e) => {
                    refused = Some(InboxError::Batch {
                        request: answer.id.clone(),
                        source: Box::new(e),
                    });
                    break;
                }
            }
        }
        if let Some(refused) = refused {
            if let Err(e) = tx.rollback().await {
                tracing::warn!(error = %e, "could not roll back a refused batch of answers");
            }
            if let InboxError::Batch {
                request,
                source: why,
            } = &refused
            {
                self.audit_refused(request, source, why).await;
            }
            return Err(refused);
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.note_change();
        if let Some(agent) = ready {
            self.wake_workers(&agent);
        }
        Ok(())
    }

    /// Records an answer in one transaction, in its span; a refusal rolls it back,
    /// changing nothing.
    pub(crate) async fn record_answer(
        &self,
        answer: Answer,
        source: Source,
    ) -> Result<(), InboxError> {
        let span = spans::answer(&answer, &source);
        let recorded = self
            .record_answer_in_span(answer, source)
            .instrument(span.clone())
            .await;
        if let Err(e) = &recorded {
            spans::failed(&span, e);
        }
        recorded
    }

    async fn record_answer_in_span(
        &self,
        answer: Answer,
        source: Source,
    ) -> Result<(), InboxError> {
        let mut tx = self.inner.store.write().await?;
        match self.answer_in(&mut tx, &answer, &source, None).await {
            Ok(ready) => {
                tx.commit().await?;
                self.wake_deliverers();
                self.note_change();
                if let Some(agent) = ready {
                    self.wake_workers(&agent);
                }
                Ok(())
            }
            Err(refused) => {
                // The refusal is what the caller needs to hear; a rollback that fails
                // leaves nothing behind either, as the transaction never commits.
                if let Err(e) = tx.rollback().await {
                    tracing::warn!(error = %e, "could not roll back a refused answer");
                }
                self.audit_refused(&answer.id, &source, &refused).await;
                Err(refused)
            }
        }
    }

    /// Wakes an idle worker of `agent` for a run an answer just readied. On PostgreSQL
    /// every process hears the answer's `NOTIFY`, and this handle's own workers are woken
    /// here at once; elsewhere every worker of `agent` in this process may take it, through
    /// whichever handle the answer came.
    fn wake_workers(&self, agent: &str) {
        let store = &self.inner.store;
        if store.announces() {
            if agent == self.inner.agent {
                self.inner.answered.notify_one();
            }
        } else {
            crate::inbox::wakers::wake(store.key(), agent);
        }
    }

    /// The answer's reads, decision and writes, inside its transaction: the run's agent when
    /// it was the run's last open request, so the run is now ready to resume. With `of_run`, an
    /// answer to a request of any other run is refused.
    ///
    /// The run's row is locked first, so answers to one run's requests take turns:
    /// whichever comes last sees every other answer and marks the run answered, and no
    /// answer is lost to a race. Approvals toward a quorum take turns the same way, so two
    /// people approving at once are both counted, and the request resolves exactly once.
    async fn answer_in(
        &self,
        tx: &mut Tx,
        answer: &Answer,
        source: &Source,
        of_run: Option<&str>,
    ) -> Result<Option<String>, InboxError> {
        let now = self.now();
        let Some(run) = runs::lock_of_request(tx, &answer.id).await? else {
            return Err(InboxError::UnknownRequest(answer.id.clone()));
        };
        if let Some(expected) = of_run
            && run.id != expected
        {
            return Err(InboxError::OtherRun {
                request: answer.id.clone(),
                run: expected.to_owned(),
            });
        }
        // Read under the lock: an answer committed before it was taken is seen here.
        let row = requests::to_answer(tx, &answer.id).await?;
        let request: Request =
            serde_json::from_str(&row.request).map_err(|e| InboxError::Corrupt {
                id: answer.id.clone(),
                reason: format!("request: {e}"),
            })?;
        let rule = request.rule().map_err(|e| InboxError::InvalidRule {
            id: answer.id.clone(),
            reason: e.to_string(),
        })?;
        let responders = match source {
            Source::Person(_) => {
                let escalated_to = stored_responders(row.escalated_to.as_deref());
                self.inner
                    .rules
                    .responders(&request, &run.agent, &escalated_to)
            }
            Source::Expiry => None,
        };
        // Someone not named may still hold the rights of someone who is.
        let delegated = match (source.person(), &responders) {
            (Some(who), Some(list)) if !who.is_one_of(list) => {
                let rows = delegations::in_force_to(tx, &key_of(&who.id), now).await?;
                self.current(delegation::readable(rows))
            }
            _ => Vec::new(),
        };
        let votes = vote::stored(row.votes.as_deref());
        let requester = match source {
            Source::Person(_) if rule.not_requester || self.inner.not_requester => {
                runs::requester_of(tx, &run.id).await?
            }
            _ => None,
        };
        let ballot = Ballot {
            request: &answer.id,
            responders: responders.as_deref(),
            delegated: &delegated,
            votes: &votes,
            quorum: rule.quorum,
            requester: requester.as_deref(),
        };
        let quorum = ballot.quorum;
        let mut taken = self.decide(&run, &row, request, &ballot, answer, source, now)?;
        taken.vote.receipt = self.receipt_of(&run.id, &row, &taken.vote, taken.resolves, quorum)?;
        let mut all = votes;
        all.push(taken.vote);
        // The answer the run resumes with, and the webhook tells of, carries the receipts
        // of every vote that made it, and only those: receipts an answer came with are
        // never trusted.
        let mut resolved = answer.clone();
        if taken.resolves {
            resolved.receipts = all.iter().filter_map(|v| v.receipt.clone()).collect();
            taken.stored = json(&answer.id, &resolved)?;
        }
        let votes = json(&answer.id, &all)?;
        let (by, for_whom) = (source.who(), taken.for_whom.as_deref());
        let actor = vote::label(by, for_whom);
        let actor = by.map(|_| actor.as_str());
        let approvals = Approvals::of(&all, quorum);

        if !taken.resolves {
            // One more approval toward the quorum: the request still waits for the rest.
            requests::record_votes(tx, &answer.id, &votes).await?;
            runs::touch(tx, &run.id, now).await?;
            Record {
                request: Some(&answer.id),
                actor,
                detail: Some(&taken.stored),
                ..Record::new(&run.id, AuditKind::Approved)
            }
            .append(tx, now)
            .await?;
            let notice =
                || self.notice_approved(&run.id, &run.agent, &taken.request, actor, &approvals);
            self.enqueue(tx, notice, None).await?;
            return Ok(None);
        }

        let kind = match source {
            Source::Expiry => AuditKind::Expired,
            Source::Person(_) => AuditKind::Answered,
        };
        let dialect = self.inner.store.dialect;
        let run_answered = match dialect.answer_recorded {
            Some(sql) => {
                let stored = taken.stored.as_str();
                let (id, kind) = (answer.id.as_str(), kind.as_str());
                requests::answer_recorded(tx, sql, id, &run.id, stored, actor, &votes, kind, now)
                    .await?
            }
            None => {
                requests::record_answer(tx, &answer.id, &taken.stored, actor, Some(&votes), now)
                    .await?;
                let run_answered = runs::mark_answered(tx, dialect, &run.id, now).await?;
                if !run_answered {
                    runs::touch(tx, &run.id, now).await?;
                }
                Record {
                    request: Some(&answer.id),
                    actor,
                    detail: Some(&taken.stored),
                    ..Record::new(&run.id, kind)
                }
                .append(tx, now)
                .await?;
                run_answered
            }
        };
        let notice = || {
            self.notice_answered(
                &run.id,
                &run.agent,
                &taken.request,
                &resolved,
                source,
                actor,
                &approvals,
            )
        };
        self.enqueue(tx, notice, None).await?;
        Ok(run_answered.then(|| run.agent.clone()))
    }

    /// Whether `answer` may be taken for the request `row` holds, of the locked `run`, at
    /// `now`: the run still waits, the request is unanswered and not past its deadline,
    /// the answer comes from someone who may give it and does not count yet, an approval
    /// of a quorum approves what the others approved, and it fits the request's form.
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        run: &Locked,
        row: &ToAnswer,
        request: Request,
        ballot: &Ballot<'_>,
        answer: &Answer,
        source: &Source,
        now: i64,
    ) -> Result<Taken, InboxError> {
        // What is kept, compared and signed is the answer with whole numbers as integers,
        // however the door's client wrote them.
        let whole = answer.clone().with_whole_numbers();
        let answer = &whole;
        let id = || answer.id.clone();
        if run.state != ParkedState::Waiting {
            return Err(InboxError::NotWaiting {
                id: id(),
                state: run.state,
            });
        }
        if row.answered_at.is_some() {
            return Err(InboxError::NotWaiting {
                id: id(),
                state: ParkedState::Answered,
            });
        }
        let by_person = matches!(source, Source::Person(_));
        if by_person && row.expires_at.is_some_and(|at| at <= now) {
            return Err(InboxError::Expired(id()));
        }
        let admitted = match source {
            Source::Person(who) => ballot.admit(who.as_ref())?,
            Source::Expiry => Admitted {
                for_whom: None,
                rule: "expired".to_owned(),
            },
        };
        if answer.ok {
            let first = ballot.votes.iter().find(|v| v.answer.ok);
            if let Some(first) = first.filter(|f| f.answer.args != answer.args) {
                return Err(InboxError::InvalidAnswer {
                    field: None,
                    reason: format!(
                        "every approval of a quorum approves the same call, and {} approved it \
                         with {} arguments",
                        vote::label(first.by.as_deref(), first.for_whom.as_deref()),
                        if first.answer.args.is_some() {
                            "edited"
                        } else {
                            "the proposed"
                        }
                    ),
                });
            }
        }
        request.check_answer(answer)?;
        let mut plain = answer.clone();
        plain.receipts.clear();
        let stored = json(&answer.id, &plain)?;
        let approvals = vote::approvals(ballot.votes) + usize::from(answer.ok);
        let resolves = !answer.ok || approvals >= ballot.quorum as usize;
        let vote = StoredVote {
            by: source.who().map(str::to_owned),
            for_whom: admitted.for_whom.clone(),
            at: now,
            answer: plain,
            rule: admitted.rule,
            receipt: None,
        };
        Ok(Taken {
            request,
            stored,
            vote,
            for_whom: admitted.for_whom,
            resolves,
        })
    }

    /// `delegations` with each giver as the host's directory knows them now, when the
    /// inbox has one: a giver it no longer knows lends nothing. Without a directory the
    /// giver is as they were when they delegated.
    fn current(&self, delegations: Vec<Delegation>) -> Vec<Delegation> {
        let Some(directory) = &self.inner.directory else {
            return delegations;
        };
        delegations
            .into_iter()
            .filter_map(|mut d| {
                d.from = directory.person(&d.from.id)?;
                Some(d)
            })
            .collect()
    }

    /// Puts a refused answer on the record — who tried to answer request `id`, and why it
    /// was refused — in a transaction of its own, as the refusal changed nothing else. Only
    /// refusals of a known request are recorded (an unknown id has no run to record it
    /// on); a failure to record is logged, never hides the refusal.
    async fn audit_refused(&self, id: &str, source: &Source, refused: &InboxError) {
        let judged = matches!(
            refused,
            InboxError::NotAllowed { .. }
                | InboxError::AlreadyCounted { .. }
                | InboxError::Requester { .. }
                | InboxError::InvalidAnswer { .. }
                | InboxError::InvalidRule { .. }
                | InboxError::Expired(_)
                | InboxError::NotWaiting { .. }
        );
        if !judged {
            return;
        }
        let recorded = async {
            let mut tx = self.inner.store.write().await?;
            // Locked like every change of the run, so this entry never races another
            // for its number in the trail.
            let Some(run) = runs::lock_of_request(&mut tx, id).await? else {
                return tx.rollback().await.map_err(InboxError::from);
            };
            let run = run.id;
            let why = refused.to_string();
            Record {
                request: Some(id),
                actor: source.who(),
                detail: Some(&why),
                ..Record::new(&run, AuditKind::AnswerRefused)
            }
            .append(&mut tx, self.now())
            .await?;
            tx.commit().await.map_err(InboxError::from)
        };
        if let Err(e) = recorded.await {
            tracing::warn!(request = %id, error = %e, "could not record a refused answer");
        }
    }

    /// The signed receipt of `vote`, an answer to the request `row` holds, of run `run`;
    /// `None` when this inbox signs no receipts, or the request's call is not known (a
    /// run parked from a transcript that does not show it), so there is no call to bind.
    fn receipt_of(
        &self,
        run: &str,
        row: &ToAnswer,
        vote: &StoredVote,
        settles: bool,
        quorum: u32,
    ) -> Result<Option<Receipt>, InboxError> {
        let Some(key) = &self.inner.receipts else {
            return Ok(None);
        };
        let request = &vote.answer.id;
        let Some(tool) = row.tool_name.as_deref() else {
            tracing::warn!(request = %request, "no receipt: the request's call is not known");
            return Ok(None);
        };
        let proposed: Value = match row.tool_args.as_deref() {
            Some(args) => serde_json::from_str(args).map_err(|e| InboxError::Corrupt {
                id: request.clone(),
                reason: format!("tool_args: {e}"),
            })?,
            None => Value::Object(Default::default()),
        };
        // The call as it runs under the answer: a person's edited arguments when given.
        let args = vote.answer.args.as_ref().unwrap_or(&proposed);
        let by = match (&vote.by, vote.rule.as_str()) {
            (Some(by), _) => by.as_str(),
            (None, "expired") => "inbox",
            (None, _) => "anonymous",
        };
        let mut statement = Statement::new(
            request.as_str(),
            run,
            toolnexus::call_digest(tool, args),
            ReceiptAnswer::of(&vote.answer),
            by,
            rfc3339_millis(vote.at),
            vote.rule.as_str(),
        )
        .quorum(quorum)
        .remembered(vote.answer.remember);
        if !settles {
            statement = statement.partial();
        }
        if let Some(whom) = &vote.for_whom {
            statement = statement.on_behalf_of(whom.as_str());
        }
        Ok(Some(key.sign(statement)))
    }
}
