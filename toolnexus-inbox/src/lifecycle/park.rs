//! Parking a halted run: its transcript and every request it waits on, written in one
//! transaction with their audit entries and the notification of the park.

use std::borrow::Cow;

use crate::store::Conn;
use serde_json::Value;
use toolnexus::halted::HaltedTurn;
use toolnexus::{Request, RunResult, RunStatus, ToolCallRecord};
use tracing::Instrument;

use crate::clock::{ms, rfc3339, to_ms};
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::people::{Person, Responder};
use crate::records::audit::{AuditKind, Record};
use crate::records::spans;
use crate::store::json;
use crate::store::requests::{self, NewRequest};
use crate::store::runs::{self, NewRun};

impl Inbox {
    /// Parks a halted run: its transcript, every request it waits on
    /// ([`RunResult::waiting`], in call order), its model and turn count, under this
    /// handle's agent. Returns the id of its first request, which is also the run's id.
    ///
    /// Each request is answered on its own, by its own id; the run is resumed once every
    /// one of them is answered, with all their answers.
    ///
    /// A run that did not halt is [`InboxError::NotPending`]; a request id already parked is
    /// [`InboxError::AlreadyParked`]. One transaction: nothing is ever half-written.
    pub async fn park(&self, run: &RunResult) -> Result<String, InboxError> {
        self.park_for(run, None).await
    }

    /// [`park`](Self::park), recording who asked for the run: the person a door identified
    /// (a [stand-in](Person::stand_in) is recorded too). A request whose rule keeps duties
    /// apart ([`Approval::not_requester`](toolnexus::Approval::not_requester), or
    /// [`InboxBuilder::not_requester`](crate::InboxBuilder::not_requester) for every
    /// request) refuses that person's answer, in this run and in the runs it becomes.
    pub async fn park_as(
        &self,
        run: &RunResult,
        requester: impl Into<Person>,
    ) -> Result<String, InboxError> {
        self.park_for(run, Some(&requester.into().id)).await
    }

    async fn park_for(
        &self,
        run: &RunResult,
        requester: Option<&str>,
    ) -> Result<String, InboxError> {
        let first = run.pending.as_ref().map_or("", |r| r.id.as_str());
        let span = spans::park(&self.inner.agent, first, run.waiting.len());
        let parked = self
            .park_in_span(run, requester)
            .instrument(span.clone())
            .await;
        if let Err(e) = &parked {
            spans::failed(&span, e);
        }
        parked
    }

    async fn park_in_span(
        &self,
        run: &RunResult,
        requester: Option<&str>,
    ) -> Result<String, InboxError> {
        let mut parked = ToPark::of(self, run, 0)?;
        parked.requested_by = requester.map(str::to_owned);
        let mut tx = self.inner.store.write().await?;
        if let Some(taken) = parked.insert(&mut tx, self).await? {
            tx.rollback().await?;
            return Err(InboxError::AlreadyParked(taken));
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.note_change();
        Ok(parked.run_id.to_owned())
    }
}

/// A halted run, ready to be inserted: its run row and a row per request it waits on.
pub(crate) struct ToPark<'a> {
    /// The run's id: its first request's.
    pub(crate) run_id: &'a str,
    messages: String,
    model: &'a str,
    turns: i64,
    request_ids: String,
    requests: Vec<RequestRow<'a>>,
    /// When it is parked: the time its deadlines count from.
    at: i64,
    /// Who asked for the run, when known.
    pub(crate) requested_by: Option<String>,
}

/// One request of a halted run, ready to be inserted.
struct RequestRow<'a> {
    /// The request as kept: as asked, or with its kind's deadline when it set none.
    request: Cow<'a, Request>,
    json: String,
    /// The call that asked it, and that call's arguments as stored.
    call: Option<(&'a str, &'a Value)>,
    args_json: Option<String>,
    expires_at: Option<i64>,
}

impl<'a> ToPark<'a> {
    /// `earlier_turns`: turns taken before this invocation, when a resumed run halts again.
    pub(crate) fn of(
        inbox: &Inbox,
        run: &'a RunResult,
        earlier_turns: i64,
    ) -> Result<Self, InboxError> {
        let (RunStatus::Pending, Some(pending)) = (run.status, run.pending.as_ref()) else {
            return Err(InboxError::NotPending);
        };
        // A result from before runs listed every waiting call names only the first.
        let waiting = if run.waiting.is_empty() {
            std::slice::from_ref(pending)
        } else {
            run.waiting.as_slice()
        };
        let Some(first) = waiting.first() else {
            return Err(InboxError::NotPending);
        };
        let at = inbox.now();
        let requests = waiting
            .iter()
            .map(|request| RequestRow::of(inbox, at, run, request))
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<&str> = waiting.iter().map(|r| r.id.as_str()).collect();
        Ok(ToPark {
            run_id: &first.id,
            messages: json(&first.id, &run.messages)?,
            model: &run.model,
            turns: earlier_turns.saturating_add(i64::try_from(run.turns).unwrap_or(i64::MAX)),
            request_ids: json(&first.id, &ids)?,
            requests,
            at,
            requested_by: None,
        })
    }
}

impl<'a> RequestRow<'a> {
    fn of(
        inbox: &Inbox,
        now: i64,
        run: &'a RunResult,
        asked: &'a Request,
    ) -> Result<Self, InboxError> {
        let mut request = Cow::Borrowed(asked);
        let rule = asked.rule().map_err(|e| InboxError::InvalidRule {
            id: asked.id.clone(),
            reason: e.to_string(),
        })?;
        // The inbox's own rules go with the request: any process that opens this database
        // judges its answers by them, whatever rules that process was built with.
        if rule.responders.is_none()
            && let Some(list) = inbox.inner.rules.responders(asked, inbox.agent(), &[])
        {
            write_responders(request.to_mut(), &list)?;
        }
        let expiry = asked.expiry().map_err(|e| InboxError::InvalidExpiry {
            id: e.request,
            value: e.value,
        })?;
        let expires_at = match expiry {
            Some(at) => Some(to_ms(at)),
            // The kind's deadline, written on the request too, so whoever reads it sees
            // when it expires.
            None => match inbox.expiry_rule(&request.kind).and_then(|rule| rule.after) {
                Some(after) => {
                    let at = now.saturating_add(ms(after));
                    request.to_mut().expires_at = Some(rfc3339(at));
                    Some(at)
                }
                None => None,
            },
        };
        let call = halted_call(run, &asked.id);
        let args_json = call.map(|(_, args)| json(&asked.id, args)).transpose()?;
        Ok(RequestRow {
            json: json(&asked.id, &request)?,
            request,
            call,
            args_json,
            expires_at,
        })
    }
}

/// Writes `list` into `request`'s `data.responders`; a request whose `data` is not an
/// object cannot carry them, so it is not parked.
fn write_responders(request: &mut Request, list: &[Responder]) -> Result<(), InboxError> {
    let names = list.iter().map(|r| Value::from(r.to_string())).collect();
    match request
        .data
        .get_or_insert_with(|| Value::Object(Default::default()))
    {
        Value::Object(data) => {
            data.insert("responders".to_owned(), Value::Array(names));
            Ok(())
        }
        _ => Err(InboxError::InvalidRule {
            id: request.id.clone(),
            reason: "its `data` is not an object, so it cannot carry the inbox's responders"
                .to_owned(),
        }),
    }
}

/// The tool call that asked request `id`: its name and arguments, from the call records or, failing
/// that, from the halted turn of the transcript.
fn halted_call<'r>(run: &'r RunResult, id: &str) -> Option<(&'r str, &'r Value)> {
    // A call that asked several questions at once parks on each of them.
    let parks_here = |call: &ToolCallRecord| call.requests().iter().any(|p| p.id == id);
    if let Some(call) = run.tool_calls.iter().find(|c| parks_here(c)) {
        return Some((&call.name, &call.args));
    }
    let call = HaltedTurn::of(&run.messages).ok()?.asked(id)?.call;
    Some((call.name.as_str(), &call.args))
}

impl ToPark<'_> {
    /// Inserts the waiting run and its requests, with their audit entries and the
    /// notification of the park. `Some(id)`: request `id` is already parked, and the caller
    /// rolls the transaction back so nothing of the run stays.
    pub(crate) async fn insert(
        &self,
        conn: &mut Conn,
        inbox: &Inbox,
    ) -> Result<Option<String>, InboxError> {
        let agent = inbox.agent();
        let run = NewRun {
            id: self.run_id,
            agent,
            messages: &self.messages,
            model: self.model,
            turns: self.turns,
            at: self.at,
            request_ids: &self.request_ids,
            requested_by: self.requested_by.as_deref(),
        };
        if !runs::insert(conn, &run).await? {
            return Ok(Some(self.run_id.to_owned()));
        }
        for (position, row) in self.requests.iter().enumerate() {
            let request = &row.request;
            let new = NewRequest {
                id: &request.id,
                run: self.run_id,
                position: i64::try_from(position).unwrap_or(i64::MAX),
                request: &row.json,
                tool_name: row.call.map(|(name, _)| name),
                tool_args: row.args_json.as_deref(),
                at: self.at,
                expires_at: row.expires_at,
            };
            if !requests::insert(conn, &new).await? {
                return Ok(Some(request.id.clone()));
            }
            Record {
                request: Some(&request.id),
                actor: Some(agent),
                detail: Some(request.kind.as_str()),
                ..Record::new(self.run_id, AuditKind::Parked)
            }
            .append(conn, self.at)
            .await?;
        }
        let notice = || {
            let requests: Vec<_> = self
                .requests
                .iter()
                .map(|r| (&*r.request, r.call))
                .collect();
            inbox.notice_parked(self.run_id, agent, &requests)
        };
        inbox.enqueue(conn, notice, None).await?;
        Ok(None)
    }
}
