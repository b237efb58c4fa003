//! How a toolnexus suspension reads in AG-UI and how a resume entry reads back: the
//! request a halted run waits on as an [`Interrupt`] ([`interrupt_of`]), the entry
//! answering it as an [`Answer`] read by what the request asks ([`answer_of`]), and the
//! inbox's refusal of those answers as a [`Refused`].

use serde_json::{json, Map, Value};
use toolnexus::halted::HaltedTurn;
use toolnexus::{Answer, Asks, Message, Refusal, Request};
use toolnexus_inbox::InboxError;

use crate::wire::{ErrorCode, Interrupt, Reason, ResumeEntry, ResumeStatus};

/// Why a run was refused before anything ran: a [`RUN_ERROR`](crate::wire::Event::RunError)'s
/// code and message. The thread is left as it was; an open interrupt stays answerable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({})", .code.as_str())]
pub struct Refused {
    /// What went wrong, for a program.
    pub code: ErrorCode,
    /// What went wrong, for a person: what to send instead.
    pub message: String,
}

impl Refused {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Refused {
        Refused {
            code,
            message: message.into(),
        }
    }
}

/// The interrupt `request` is, asked by tool call `tool_call_id`.
///
/// A form (a request with a `schema`) is `input_required` and its schema is the
/// `responseSchema`: the payload is the form's data. Anything else — an approval, a
/// declared approval of a call, a sign-in, a confirmation — is `tool_call`, answered by
/// `{"approved": true}` or `{"approved": false, "reason": "…"}`; a declared approval also
/// takes `editedArgs`, the call's arguments replaced whole, which must fit the tool's
/// schema. The metadata names the request's `kind`; for a sign-in, the `url` to send
/// the person to; for a declared approval, the `tool` and the `args` the model proposed;
/// for one several people must give, how far their `approvals` came
/// (`toolnexus_inbox::Parked::shown` puts them on the request); for a sub-agent's
/// question, `via`: the `path` of agents it came through, ending with the tool that
/// asked, and that tool's own `prompt` (the interrupt's message names the agents first).
///
/// ```
/// use toolnexus::Request;
/// use toolnexus_agui::mapping::interrupt_of;
///
/// let login = Request::new("authorization", "Sign in to the shop")
///     .with_id("r1")
///     .with_url("https://shop.example/login");
/// let interrupt = interrupt_of(&login, Some("call_1"));
/// assert_eq!(interrupt.reason, "tool_call");
/// assert_eq!(interrupt.tool_call_id.as_deref(), Some("call_1"));
/// let metadata = interrupt.metadata.expect("metadata");
/// assert_eq!(metadata["url"], "https://shop.example/login");
/// ```
pub fn interrupt_of(request: &Request, tool_call_id: Option<&str>) -> Interrupt {
    interrupt_seen(request, tool_call_id, true)
}

/// The interrupt `request` is as a caller sees it: with `shows_call` (they may answer
/// it) a gate's tool and arguments are in its metadata and the tool's schema is its
/// `editedArgs`; without, it is the question alone, a yes or no, so a caller who may not
/// answer never learns what the call behind it would do.
pub(crate) fn interrupt_seen(
    request: &Request,
    tool_call_id: Option<&str>,
    shows_call: bool,
) -> Interrupt {
    let mut metadata = Map::new();
    metadata.insert("kind".to_owned(), json!(request.kind.as_str()));
    if let Some(approvals) = request.approvals() {
        metadata.insert("approvals".to_owned(), json!(approvals));
    }
    // The path ends with the tool that asked: shown, like a gate's call, only to a caller
    // who may answer.
    if shows_call && let Some(relay) = request.relay() {
        metadata.insert(
            "via".to_owned(),
            json!({"path": relay.path, "prompt": relay.prompt}),
        );
    }
    let (reason, schema) = match request.asks() {
        Asks::Form { schema } => (Reason::InputRequired, schema.as_object().cloned()),
        Asks::Gate { .. } if !shows_call => (Reason::ToolCall, Some(decision(None))),
        Asks::Gate { tool, args, schema } => {
            metadata.insert("tool".to_owned(), json!(tool));
            if let Some(args) = args {
                metadata.insert("args".to_owned(), args.clone());
            }
            let mut edited = schema.clone();
            edited.insert(
                "description".to_owned(),
                json!("The call's arguments, replaced whole (not merged)"),
            );
            (
                Reason::ToolCall,
                Some(decision(Some(Value::Object(edited)))),
            )
        }
        Asks::SignIn { url } => {
            if let Some(url) = url {
                metadata.insert("url".to_owned(), json!(url));
            }
            (Reason::ToolCall, Some(decision(None)))
        }
        _ => (Reason::ToolCall, Some(decision(None))),
    };
    Interrupt {
        id: request.id.clone(),
        reason: reason.as_str().to_owned(),
        message: Some(request.prompt.clone()),
        tool_call_id: tool_call_id.map(str::to_owned),
        response_schema: schema,
        expires_at: request.expires_at.clone(),
        metadata: Some(metadata),
    }
}

/// The schema of a yes or no: `approved`, the person's `reason`, and `editedArgs` when
/// the call's arguments may be edited.
fn decision(edited_args: Option<Value>) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert("approved".to_owned(), json!({"type": "boolean"}));
    if let Some(edited) = edited_args {
        properties.insert("editedArgs".to_owned(), edited);
    }
    properties.insert(
        "reason".to_owned(),
        json!({"type": "string", "description": "Why, when declining"}),
    );
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), json!(["approved"]));
    schema
}

/// The answer `entry` gives to `request`, read by what the request asks.
///
/// `cancelled` refuses the request (`cancelled`); `{"approved": false}` declines it, with
/// the payload's `reason` as the person's note; `{"approved": true}` grants it, with
/// `editedArgs` as the call's new arguments; a form's payload is its data. A payload of
/// another shape is refused here; whether the data fits the form, and the edited arguments
/// the tool's schema, the inbox checks as it takes the answer, once for every door. The
/// entry's `metadata` travels as the answer's ([`Answer::metadata`]).
///
/// ```
/// use serde_json::json;
/// use toolnexus::Request;
/// use toolnexus_agui::mapping::answer_of;
/// use toolnexus_agui::wire::{ErrorCode, ResumeEntry};
///
/// let buy = Request::new("approval", "Buy a gpu?").with_id("r1");
/// let yes = answer_of(&buy, &ResumeEntry::resolved("r1", json!({"approved": true})))?;
/// assert!(yes.ok);
/// let no = answer_of(&buy, &ResumeEntry::resolved("r1", json!({"approved": false, "reason": "too dear"})))?;
/// assert_eq!((no.ok, no.note()), (false, Some("too dear")));
/// let unsure = answer_of(&buy, &ResumeEntry::resolved("r1", json!("maybe"))).unwrap_err();
/// assert_eq!(unsure.code, ErrorCode::InvalidAnswer);
/// # Ok::<(), toolnexus_agui::mapping::Refused>(())
/// ```
pub fn answer_of(request: &Request, entry: &ResumeEntry) -> Result<Answer, Refused> {
    let id = request.id.as_str();
    let payload = entry.payload.as_ref().filter(|p| !p.is_null());
    let answer = match (entry.status, request.asks()) {
        (ResumeStatus::Cancelled, _) => Answer::refuse(id, Refusal::Cancelled),
        (ResumeStatus::Resolved, Asks::Form { .. }) => match payload {
            Some(data @ Value::Object(_)) => Answer::ok(id).with_data(data.clone()),
            _ => {
                return Err(misfit(
                    id,
                    None,
                    "the payload must be the form's data, an object",
                ))
            }
        },
        (ResumeStatus::Resolved, _) => {
            let object = payload.and_then(Value::as_object);
            let approved = object
                .and_then(|o| o.get("approved"))
                .and_then(Value::as_bool);
            let Some(approved) = approved else {
                return Err(misfit(
                    id,
                    None,
                    "the payload must be {\"approved\": true} or {\"approved\": false}",
                ));
            };
            let said = object
                .and_then(|o| o.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let edited = object.and_then(|o| o.get("editedArgs"));
            match (approved, edited) {
                (true, Some(args)) => Answer::ok(id).with_args(args.clone()),
                (true, None) => Answer::ok(id),
                (false, _) => Answer::refuse(id, Refusal::Declined).with_note(said),
            }
        }
    };
    // The envelope (a front end's signature over its decision) stays with the answer, so
    // the inbox's audit trail keeps it beside what was decided.
    Ok(match &entry.metadata {
        Some(envelope) => answer.with_metadata(envelope.clone()),
        None => answer,
    })
}

/// The refusal of an answer to interrupt `id` that does not fit, at `field` when one is
/// at fault.
fn misfit(id: &str, field: Option<&str>, why: &str) -> Refused {
    let at = field.map(|f| format!(" at `{f}`")).unwrap_or_default();
    Refused::new(
        ErrorCode::InvalidAnswer,
        format!("the answer to interrupt `{id}` does not fit: {why}{at}"),
    )
}

/// The refusal of a resume entry naming `id`, which is not among the thread's `open`
/// interrupts.
pub(crate) fn unknown_interrupt(id: &str, open: &[Request]) -> Refused {
    Refused::new(
        ErrorCode::UnknownInterrupt,
        format!(
            "no interrupt `{id}` is open on this thread (open: {})",
            ids(open)
        ),
    )
}

/// The refusal of a run on `thread` when it is not there, or not the caller's to see.
pub(crate) fn unknown_thread(thread: &str) -> Refused {
    Refused::new(
        ErrorCode::UnknownThread,
        format!("there is no thread `{thread}` of yours: start a new one with a new threadId"),
    )
}

/// The refusal of a run on a thread whose run goes on.
pub(crate) fn busy(thread: &str) -> Refused {
    Refused::new(
        ErrorCode::ThreadBusy,
        format!("a run of thread `{thread}` goes on: send this again once it ended"),
    )
}

/// The refusal the inbox's refusal `error` of a resume's answers on `thread` is: by its
/// cause, naming the interrupt whose answer was refused.
pub(crate) fn refusal(thread: &str, error: &InboxError) -> Refused {
    let refused = match error {
        InboxError::Batch { request, .. } => Some(request.as_str()),
        _ => None,
    };
    match error.cause() {
        InboxError::AnsweredTwice(id) => Refused::new(
            ErrorCode::ResumeDuplicate,
            format!("interrupt `{id}` is answered twice"),
        ),
        InboxError::InvalidAnswer { field, reason } => match refused {
            Some(id) => misfit(id, field.as_deref(), reason),
            None => Refused::new(ErrorCode::InvalidAnswer, error.to_string()),
        },
        // A request the thread read as open that is no longer: another answer took it,
        // and the run it belongs to goes on.
        InboxError::NotWaiting { .. } | InboxError::UnknownRequest(_) => busy(thread),
        InboxError::OtherRun { request, .. } => Refused::new(
            ErrorCode::UnknownInterrupt,
            format!("no interrupt `{request}` is open on this thread"),
        ),
        InboxError::Expired(id) => Refused::new(
            ErrorCode::InterruptExpired,
            format!(
                "interrupt `{id}` expired, and the inbox settled it as its expiry rule says: \
                 send a resume again to see how the run went on"
            ),
        ),
        e @ (InboxError::NotAllowed { .. } | InboxError::AlreadyCounted { .. }) => {
            Refused::new(ErrorCode::NotAllowed, e.to_string())
        }
        other => {
            tracing::error!(thread, error = %other, "an AG-UI resume could not be recorded");
            Refused::new(
                ErrorCode::RunFailed,
                "the answers could not be recorded; it is logged",
            )
        }
    }
}

/// The ids of `requests`, for a person to read.
pub(crate) fn ids(requests: &[Request]) -> String {
    requests
        .iter()
        .map(|r| format!("`{}`", r.id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The interrupts of `waiting`, each with the tool call it is asked by: the call whose
/// placeholder in `transcript` waits on it. `shows_call` says of each request whether the
/// caller may see the call behind it ([`interrupt_seen`]).
pub(crate) fn interrupts(
    waiting: &[Request],
    transcript: &[Message],
    shows_call: impl Fn(&Request) -> bool,
) -> Vec<Interrupt> {
    let turn = HaltedTurn::of(transcript).ok();
    waiting
        .iter()
        .map(|request| {
            let call = turn
                .and_then(|turn| turn.asked(&request.id))
                .map(|asked| asked.call.id.as_str());
            interrupt_seen(request, call, shows_call(request))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolnexus::{Answer, Refusal, Request};
    use toolnexus_inbox::InboxError;

    use super::{answer_of, interrupt_of, refusal, Refused};
    use crate::wire::{ErrorCode, ResumeEntry};

    /// What a resume with `entry` comes to: refused for its shape here, or by the inbox's
    /// check of the answer — the one `answer_all` makes, refusing the batch — as the
    /// resume hears it.
    fn taken(request: &Request, entry: &ResumeEntry) -> Result<Answer, Refused> {
        let answer = answer_of(request, entry)?;
        request.check_answer(&answer).map_err(|e| {
            let batch = InboxError::Batch {
                request: request.id.clone(),
                source: Box::new(e.into()),
            };
            refusal("t", &batch)
        })?;
        Ok(answer)
    }

    fn gate() -> Request {
        Request::new("approval", "Delete /tmp/x?")
            .with_id("g1")
            .with_data(json!({
                "tool": "delete",
                "args": {"path": "/tmp/x"},
                "argsSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
            }))
    }

    fn form() -> Request {
        Request::new("input", "Where to?")
            .with_id("f1")
            .with_data(json!({"schema": {
                "type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"]
            }}))
    }

    #[test]
    fn a_gate_offers_edits_with_the_tools_schema_and_takes_fitting_ones() {
        let interrupt = interrupt_of(&gate(), Some("c1"));
        let schema = interrupt.response_schema.expect("a schema");
        assert_eq!(
            schema["properties"]["editedArgs"]["required"],
            json!(["path"])
        );
        assert_eq!(schema["required"], json!(["approved"]));
        let edited = ResumeEntry::resolved(
            "g1",
            json!({"approved": true, "editedArgs": {"path": "/tmp/y"}}),
        );
        assert_eq!(
            taken(&gate(), &edited).unwrap().args,
            Some(json!({"path": "/tmp/y"}))
        );
        let misfit =
            ResumeEntry::resolved("g1", json!({"approved": true, "editedArgs": {"path": 3}}));
        let refused = taken(&gate(), &misfit).unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidAnswer);
        assert!(refused.message.contains("path"), "{refused}");
        assert!(
            refused.message.contains("`g1`"),
            "names the interrupt: {refused}"
        );
    }

    #[test]
    fn a_form_is_input_required_and_its_payload_its_data() {
        let interrupt = interrupt_of(&form(), Some("c1"));
        assert_eq!(interrupt.reason, "input_required");
        assert_eq!(
            interrupt.response_schema.as_ref().map(|s| &s["required"]),
            Some(&json!(["zip"]))
        );
        let fits = ResumeEntry::resolved("f1", json!({"zip": "75001"}));
        assert_eq!(
            taken(&form(), &fits).unwrap().data,
            Some(json!({"zip": "75001"}))
        );
        for misfit in [json!({"zip": 75001}), json!("75001"), json!(null)] {
            let entry = ResumeEntry::resolved("f1", misfit.clone());
            assert_eq!(
                taken(&form(), &entry).unwrap_err().code,
                ErrorCode::InvalidAnswer,
                "{misfit}"
            );
        }
    }

    #[test]
    fn cancelled_refuses_whatever_was_asked() {
        for request in [
            gate(),
            form(),
            Request::new("authorization", "Sign in").with_id("s1"),
        ] {
            let entry = ResumeEntry::cancelled(request.id.clone());
            let answer = taken(&request, &entry).unwrap();
            assert_eq!(answer.refusal(), Some(&Refusal::Cancelled));
        }
    }

    #[test]
    fn edits_on_a_plain_approval_are_refused() {
        let plain = Request::new("approval", "Buy?").with_id("a1");
        let schema = interrupt_of(&plain, None)
            .response_schema
            .expect("a schema");
        assert!(schema["properties"].get("editedArgs").is_none());
        let entry = ResumeEntry::resolved("a1", json!({"approved": true, "editedArgs": {}}));
        assert_eq!(
            taken(&plain, &entry).unwrap_err().code,
            ErrorCode::InvalidAnswer
        );
    }

    #[test]
    fn the_inbox_refusals_read_as_the_protocols_codes() {
        let batch = |request: &str, source: InboxError| InboxError::Batch {
            request: request.to_owned(),
            source: Box::new(source),
        };
        let twice = refusal("t", &batch("r2", InboxError::AnsweredTwice("r2".into())));
        assert_eq!(twice.code, ErrorCode::ResumeDuplicate);
        assert!(twice.message.contains("`r2`"), "{twice}");
        let misfit = InboxError::InvalidAnswer {
            field: Some("zip".into()),
            reason: "must be a string".into(),
        };
        let invalid = refusal("t", &batch("r2", misfit));
        assert_eq!(invalid.code, ErrorCode::InvalidAnswer);
        assert!(
            invalid.message.contains("`r2`") && invalid.message.contains("`zip`"),
            "{invalid}"
        );
        let taken = InboxError::NotWaiting {
            id: "r1".into(),
            state: toolnexus_inbox::ParkedState::Answered,
        };
        assert_eq!(
            refusal("t", &batch("r1", taken)).code,
            ErrorCode::ThreadBusy
        );
        let expired = refusal("t", &batch("r1", InboxError::Expired("r1".into())));
        assert_eq!(expired.code, ErrorCode::InterruptExpired);
        let stranger = InboxError::NotAllowed {
            request: "r1".into(),
            who: Some("eve".into()),
        };
        assert_eq!(
            refusal("t", &batch("r1", stranger)).code,
            ErrorCode::NotAllowed
        );
        let other = InboxError::OtherRun {
            request: "r9".into(),
            run: "r1".into(),
        };
        assert_eq!(
            refusal("t", &batch("r9", other)).code,
            ErrorCode::UnknownInterrupt
        );
        let broken = refusal("t", &InboxError::NotPending);
        assert_eq!(broken.code, ErrorCode::RunFailed);
    }
}
