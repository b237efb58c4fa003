//! Calls whose questions the inbox judges (the `inbox` feature): a call that asks what a
//! rule limits — a request naming its responders or a quorum, or one the inbox's rules
//! name people for — is parked in the inbox as a run of that one call, and every answer
//! the caller gives to it (an elicitation, `inputResponses`) is the inbox's to take or
//! refuse, as the person the server identified. An answer it takes is recorded like any
//! other (audit entry, vote, receipt) and the call goes on from the answer the inbox
//! stored, by the inbox's claim; one it refuses leaves the request waiting for the people
//! allowed, and the result says who they are. A later call of the same tool with the same
//! arguments finds the run again through the door's record of the call.

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolnexus::{Answer, Request, ToolResult};
use toolnexus_inbox::{Door, Inbox, InboxError, Latest, ParkedState};

use super::McpServer;
use super::asked::Asked;
use super::handler::{Client, complete, needs};
use super::tasks::{CALL_RECORD, Call, failed, final_result, halted, settle};
use crate::elicit::{Mode, response_to_answer, to_elicitation};

/// The most rounds one call goes through in the inbox before it stops: each round is an
/// answer that led the tool to ask again, so a real call has few.
const MAX_ROUNDS: usize = 64;

/// What the door keeps of a call the inbox holds, under `call:<digest of tool and
/// arguments>`: the run it was parked as, whether its end was handed to a caller, and how
/// many calls with the same arguments came before (the id of the next one's approval).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CallNote {
    tool: String,
    args: Value,
    pub(super) run: String,
    #[serde(default)]
    pub(super) delivered: bool,
    #[serde(default)]
    pub(super) generation: u64,
}

/// How far the caller was asked in this request.
enum Asking {
    /// The caller is asked in the result (`input_required`): the request ends here.
    Sent(Box<CallToolResponse>),
    /// The caller answered elicitations: the answers, for the inbox to judge.
    Answered(Vec<Answer>),
    /// The caller cannot be asked, or gave no answer.
    Not,
}

impl McpServer {
    /// The door's record of a call of `name` with `args`, if the inbox holds one.
    pub(super) async fn call_note(
        &self,
        name: &str,
        args: &Value,
    ) -> Result<Option<CallNote>, ErrorData> {
        let Some(kept) = &self.inner.kept else {
            return Ok(None);
        };
        let record = kept
            .inbox()
            .record::<CallNote>(Door::MCP, &call_key(name, args))
            .await
            .map_err(failed)?;
        Ok(record.map(|record| record.data))
    }

    /// A call that asks `asked`'s requests, some rule limiting them: parked in the inbox
    /// with what its suspension kept, then judged. Its answers are what the caller gave
    /// before (answers sealed in a round's state), judged with `responses`.
    pub(super) async fn judge_new(
        &self,
        name: String,
        args: Value,
        asked: Asked,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let run = match self.park_call(&name, &args, &asked).await {
            Ok(run) => run,
            // Fails closed: a request nobody can answer never runs the tool.
            Err(e) => {
                let first = asked
                    .requests
                    .first()
                    .map_or_else(String::new, |r| needs(&name, r));
                return Ok(complete(ToolResult::error(format!(
                    "{first}, and keeping it in the inbox for the people who may answer it failed: {e}"
                ))));
            }
        };
        self.judged(name, args, run, asked.answers, responses, context)
            .await
    }

    /// A call the inbox holds already, as run `run`: it goes on from there.
    pub(super) async fn judge_held(
        &self,
        name: String,
        args: Value,
        run: String,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.judged(name, args, run, Vec::new(), responses, context)
            .await
    }

    /// Parks a call of `name` with `args` that asks `asked` as a run of its own, and
    /// records it as the call's; the run's id. A call whose request the inbox holds
    /// already (the same approval asked again) is that run.
    async fn park_call(&self, name: &str, args: &Value, asked: &Asked) -> Result<String, String> {
        let kept = self.kept_inbox().map_err(|e| e.message.into_owned())?;
        let key = call_key(name, args);
        let prior = self
            .call_note(name, args)
            .await
            .map_err(|e| e.message.into_owned())?;
        let call = Call {
            tool: name.to_owned(),
            args: args.clone(),
            starter: None,
        };
        let run = match kept.park(&halted(&key, &call, asked)).await {
            Ok(run) => run,
            Err(InboxError::AlreadyParked(id)) if prior.as_ref().is_some_and(|p| !p.delivered) => {
                return Ok(id);
            }
            Err(InboxError::AlreadyParked(id)) => id,
            Err(e) => return Err(e.to_string()),
        };
        let note = CallNote {
            tool: name.to_owned(),
            args: args.clone(),
            run: run.clone(),
            delivered: false,
            generation: prior.map_or(0, |p| p.generation + 1),
        };
        kept.keep_record(Door::MCP, &key, &note)
            .await
            .map_err(|e| e.to_string())?;
        Ok(run)
    }

    fn kept_inbox(&self) -> Result<&Inbox, ErrorData> {
        self.inner
            .kept
            .as_ref()
            .map(|kept| kept.inbox())
            .ok_or_else(|| ErrorData::internal_error("no inbox keeps calls here", None))
    }

    /// Where the call parked as `run` stands, round by round: the caller's answers judged
    /// by the inbox, an answered run resumed by the inbox's claim, the caller asked what
    /// the run waits on next, until the call ends or waits for someone else.
    async fn judged(
        &self,
        name: String,
        args: Value,
        run: String,
        mut given: Vec<Answer>,
        mut responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let inbox = self.kept_inbox()?.clone();
        let who = self.answering_as(context);
        let client = Client::of(context);
        let key = call_key(&name, &args);
        let mut round: Option<String> = None;
        let mut asked = false;
        let mut refused: Option<String> = None;
        for _ in 0..MAX_ROUNDS {
            let latest = match inbox.follow(&run).await {
                Ok(latest) => latest,
                Err(e) => return Ok(complete(ToolResult::error(failed(e).message.into_owned()))),
            };
            if round.as_deref() != Some(latest.run.as_str()) {
                // A new round: its questions are the caller's to be asked.
                round = Some(latest.run.clone());
                asked = false;
            }
            match latest.run_state() {
                ParkedState::Waiting => {}
                ParkedState::Answered | ParkedState::Running => {
                    let toolkit = self.inner.toolkit.clone();
                    let resumed = inbox
                        .resume_with_or_await(&latest.run, |messages, answers| {
                            settle(toolkit, messages, answers)
                        })
                        .await;
                    match resumed {
                        Ok(_) | Err(InboxError::NotAnswered(_)) => continue,
                        Err(e) => {
                            return Ok(complete(ToolResult::error(format!(
                                "the call to `{name}` could not go on: {e}"
                            ))));
                        }
                    }
                }
                ParkedState::Done => {
                    self.delivered(&inbox, &key).await;
                    let result = latest.head().result.as_ref().map_or_else(
                        || ToolResult::error(format!("the call to `{name}` ended")),
                        final_result,
                    );
                    return Ok(complete(result));
                }
                ParkedState::Failed => {
                    self.delivered(&inbox, &key).await;
                    let why = latest
                        .head()
                        .last_error
                        .as_deref()
                        .unwrap_or("no reason recorded");
                    return Ok(complete(ToolResult::error(format!(
                        "the call to `{name}` did not run: {why}"
                    ))));
                }
                _ => return Ok(complete(waits(&inbox, &name, &latest, None))),
            }
            let open = latest.open();
            if let Some(mut sent) = responses.take() {
                for request in &open {
                    if let Some(response) = sent.remove(&request.id) {
                        given.push(response_to_answer(&request.id, response)?);
                    }
                }
            }
            given.retain(|answer| open.iter().any(|r| r.id == answer.id));
            if !given.is_empty() {
                let answers = std::mem::take(&mut given);
                match inbox.answer_all(&latest.run, answers, who.clone()).await {
                    Ok(()) => {
                        asked = true;
                        continue;
                    }
                    Err(e) => match e.cause() {
                        // Answered meanwhile by someone else: the call goes on with theirs.
                        InboxError::NotWaiting { .. } => continue,
                        InboxError::NotAllowed { .. }
                        | InboxError::AlreadyCounted { .. }
                        | InboxError::InvalidAnswer { .. }
                        | InboxError::AnsweredTwice(_)
                        | InboxError::Expired(_) => {
                            asked = true;
                            refused = Some(e.to_string());
                        }
                        _ => {
                            return Ok(complete(ToolResult::error(failed(e).message.into_owned())));
                        }
                    },
                }
            }
            if asked || refused.is_some() {
                return Ok(complete(waits(&inbox, &name, &latest, refused.as_deref())));
            }
            asked = true;
            match self.ask_caller(&name, &args, &open, &client, context).await {
                Asking::Sent(response) => return Ok(*response),
                Asking::Answered(answers) => given = answers,
                Asking::Not => return Ok(complete(waits(&inbox, &name, &latest, None))),
            }
        }
        Ok(complete(ToolResult::error(format!(
            "the call to `{name}` asked more than {MAX_ROUNDS} rounds of questions"
        ))))
    }

    /// Asks the caller what the call waits on: in an `input_required` result on protocol
    /// 2026-07-28, else by `elicitation/create`, one request after the other (a refusal
    /// stops it), when the client takes every one of them.
    async fn ask_caller(
        &self,
        name: &str,
        args: &Value,
        open: &[Request],
        client: &Client,
        context: &RequestContext<RoleServer>,
    ) -> Asking {
        if open.iter().any(|request| !client.can(Mode::of(request))) {
            return Asking::Not;
        }
        let Ok(elicitations) = open
            .iter()
            .map(to_elicitation)
            .collect::<Result<Vec<_>, _>>()
        else {
            return Asking::Not;
        };
        if client.multi_round_trip {
            let asked = Asked::new(open.to_vec());
            let result = self.input_required(name, args.clone(), &asked, open, elicitations);
            return Asking::Sent(Box::new(result));
        }
        let mut answers = Vec::with_capacity(open.len());
        for (request, elicitation) in open.iter().zip(elicitations) {
            // No answer in time, or none at all: the request waits on in the inbox.
            let Ok(answer) = self.elicit(context, request, elicitation).await else {
                break;
            };
            let refused = !answer.ok;
            answers.push(answer);
            if refused {
                break;
            }
        }
        match answers.is_empty() {
            true => Asking::Not,
            false => Asking::Answered(answers),
        }
    }

    /// Notes that the end of the call recorded under `key` was handed to a caller: the next
    /// call with the same arguments is asked anew.
    async fn delivered(&self, inbox: &Inbox, key: &str) {
        let note = match inbox.record::<CallNote>(Door::MCP, key).await {
            Ok(Some(record)) => record.data,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "reading a call's record failed");
                return;
            }
        };
        if note.delivered {
            return;
        }
        let note = CallNote {
            delivered: true,
            ..note
        };
        if let Err(e) = inbox.keep_record(Door::MCP, key, &note).await {
            tracing::warn!(error = %e, "recording a call's end as handed over failed");
        }
    }
}

/// The door record's key of a call: its tool and arguments, digested.
fn call_key(name: &str, args: &Value) -> String {
    format!("{CALL_RECORD}{}", toolnexus::call_digest(name, args))
}

/// The result of a call that waits for someone other than its caller: what it needs, the
/// id it waits under, who may answer, how far approvals came, and why the caller's own
/// answer was not taken when they gave one.
fn waits(inbox: &Inbox, name: &str, latest: &Latest, refused: Option<&str>) -> ToolResult {
    let waiting = latest
        .requests
        .iter()
        .find(|parked| parked.state == ParkedState::Waiting);
    let Some(parked) = waiting else {
        return ToolResult::error(format!(
            "`{name}` is being answered; call it again with the same arguments to see how it ended"
        ));
    };
    let who = match inbox.responders(parked) {
        Some(list) if !list.is_empty() => {
            let names: Vec<String> = list.iter().map(ToString::to_string).collect();
            format!("only {} may answer it", names.join(", "))
        }
        Some(_) => "only the people the inbox's rules name may answer it".to_owned(),
        None => "the people of the inbox answer it".to_owned(),
    };
    let mut text = format!(
        "{}; it is waiting as `{}` for a person: {who}",
        needs(name, &parked.request),
        parked.id()
    );
    if let Some(approvals) = parked.approvals() {
        text.push_str(&format!(" ({approvals} so far)"));
    }
    text.push('.');
    if let Some(why) = refused {
        text.push_str(&format!(" Your answer was not taken: {why}."));
    }
    text.push_str(&format!(
        " Call `{name}` again with the same arguments once it is answered."
    ));
    ToolResult::error(text)
}
