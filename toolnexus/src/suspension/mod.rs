//! The suspension wire data: what a parked tool asks for ([`Request`]) and what a host
//! answers ([`Answer`]). The JSON keys are shared with every other toolnexus port, so a
//! request written by one process can be answered by another.

mod answers;
mod asks;
mod codes;
mod digest;
pub(crate) mod gate;
mod settle;

pub use answers::{check_answers, AnswersError};
pub use asks::Asks;
pub use codes::{Refusal, RequestKind};
pub use digest::call_digest;
pub use settle::SettledCall;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a suspended tool needs from outside the process: an approval, a login, some input.
///
/// ```
/// use toolnexus::Request;
///
/// let req = Request::new("approval", "Approve refund of $40?")
///     .with_data(serde_json::json!({"amount": 40}));
/// assert!(req.id.is_empty(), "ids are generated when the request is parked");
/// let wire = serde_json::to_value(&req).unwrap();
/// assert_eq!(wire["kind"], "approval");
/// assert!(wire.get("url").is_none(), "absent optionals are omitted");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Correlation key; every [`Answer`] echoes it. Generated (uuid v4) by
    /// [`ToolResult::pending`](crate::ToolResult::pending) when left empty.
    #[serde(default)]
    pub id: String,
    /// What is asked: `"approval"`, `"authorization"`, `"input"`, `"question"`, or any
    /// other string (see [`RequestKind`]).
    pub kind: RequestKind,
    /// Human-readable text a host shows.
    pub prompt: String,
    /// Where the user goes (the login page of an `authorization` request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra structured data, a JSON object (e.g. `{"schema": …}` for a form); read what
    /// it asks for through [`Request::asks`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
    /// RFC 3339 deadline after which a host should treat the request as expired.
    #[serde(default, rename = "expiresAt", skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

impl Request {
    /// A request of `kind` (a string such as `"approval"`, or a [`RequestKind`]) with
    /// `prompt`; the id stays empty until the request is parked.
    pub fn new(kind: impl Into<String>, prompt: impl Into<String>) -> Self {
        Request {
            id: String::new(),
            kind: RequestKind::from(kind.into()),
            prompt: prompt.into(),
            url: None,
            data: None,
            expires_at: None,
        }
    }

    /// Sets the correlation id (use a stable one when the tool can recompute it on resume).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Sets the URL the user should visit.
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Sets the structured data (a JSON object).
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Sets the RFC 3339 expiry.
    pub fn with_expires_at(mut self, rfc3339: impl Into<String>) -> Self {
        self.expires_at = Some(rfc3339.into());
        self
    }

    /// What the model is told when this request is refused, instead of re-running the tool:
    /// the other ports' exact `declined/expired: <prompt>`, followed by
    /// ` (reason: <words>)` so the model can tell a decline from an expiry and read the
    /// person's own words: the words are the answer's [note](Answer::note()) when it has
    /// one, else its non-blank reason. `LlmClient` and the MCP server both answer refusals
    /// with it (through [`Request::settle`]); a host resolving calls itself can too.
    ///
    /// ```
    /// use toolnexus::{Answer, Refusal, Request};
    ///
    /// let request = Request::new("approval", "Buy a gpu?").with_id("r1");
    /// assert_eq!(request.refusal(&Answer::decline("r1", " ")), "declined/expired: Buy a gpu?");
    /// assert_eq!(
    ///     request.refusal(&Answer::decline("r1", "too dear")),
    ///     "declined/expired: Buy a gpu? (reason: too dear)"
    /// );
    /// assert_eq!(
    ///     request.refusal(&Answer::refuse("r1", Refusal::Cancelled).with_note("wrong account")),
    ///     "declined/expired: Buy a gpu? (reason: wrong account)"
    /// );
    /// ```
    pub fn refusal(&self, answer: &Answer) -> String {
        let prompt = &self.prompt;
        let code = answer.reason.as_deref().map(str::trim);
        match answer.note().or(code.filter(|c| !c.is_empty())) {
            Some(words) => format!("declined/expired: {prompt} (reason: {words})"),
            None => format!("declined/expired: {prompt}"),
        }
    }
}

/// A host's reply to a [`Request`].
///
/// ```
/// use toolnexus::Answer;
///
/// let yes = Answer::ok("req-1").with_data(serde_json::json!({"zip": "75001"}));
/// assert!(yes.ok);
/// let no = Answer::decline("req-1", "declined");
/// assert_eq!(no.reason.as_deref(), Some("declined"));
/// ```
///
/// A refusal's code ([`reason`](Answer::reason)) and the person's own words
/// ([`note`](Answer::note())) are apart, so a host can act on the code whatever was typed:
///
/// ```
/// use toolnexus::{Answer, Refusal};
///
/// let no = Answer::refuse("req-1", Refusal::Cancelled).with_note("wrong account");
/// assert_eq!(no.refusal(), Some(&Refusal::Cancelled));
/// assert_eq!(no.note(), Some("wrong account"));
/// let wire = serde_json::to_value(&no).unwrap();
/// assert_eq!(wire, serde_json::json!({"id": "req-1", "ok": false, "reason": "cancelled", "note": "wrong account"}));
/// assert!(serde_json::to_value(Answer::ok("req-1")).unwrap().get("note").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// Echoes [`Request::id`].
    pub id: String,
    /// Whether the request was granted.
    pub ok: bool,
    /// The payload (form values, a token reference, …).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
    /// Why it was not granted: `"declined"`, `"cancelled"`, `"expired"`, or any other
    /// string (see [`Refusal`]). The code only: the person's words go in `note`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Refusal>,
    /// What the person answering wrote (why they declined, say); JSON key `note`, omitted
    /// when `None`. Ports that do not know it ignore it and still read `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The arguments a person approved a gated call with, when they edited the model's
    /// (see [`with_args`](Answer::with_args)); JSON key `args`, omitted when `None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub args: Option<Value>,
    /// Whether this decision on a gated call holds for the same tool for the rest of the
    /// run (see [`remember`](Answer::remember)); JSON key `remember`, omitted when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remember: bool,
}

impl Answer {
    /// A granting answer to request `id`.
    pub fn ok(id: impl Into<String>) -> Self {
        Answer {
            id: id.into(),
            ok: true,
            data: None,
            reason: None,
            note: None,
            args: None,
            remember: false,
        }
    }

    /// A refusal of request `id`, with a reason such as `"declined"` or `"expired"` (the
    /// known codes become their [`Refusal`] variant; any other text is kept in
    /// [`Refusal::Other`]).
    pub fn decline(id: impl Into<String>, reason: impl Into<String>) -> Self {
        Answer::refuse(id, Refusal::from(reason.into()))
    }

    /// A refusal of request `id` with a typed code.
    pub fn refuse(id: impl Into<String>, refusal: Refusal) -> Self {
        Answer {
            id: id.into(),
            ok: false,
            data: None,
            reason: Some(refusal),
            note: None,
            args: None,
            remember: false,
        }
    }

    /// Attaches what the person answering wrote; blank text attaches nothing, so the
    /// `note` key stays out of the JSON.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = (!note.trim().is_empty()).then_some(note);
        self
    }

    /// The refusal's code; `None` for a granting answer.
    pub fn refusal(&self) -> Option<&Refusal> {
        self.reason.as_ref().filter(|_| !self.ok)
    }

    /// What the person wrote, trimmed; `None` when they wrote nothing.
    pub fn note(&self) -> Option<&str> {
        self.note
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
    }

    /// Approves a gated call (an [`Approval`](crate::Approval) or `#[tool(approval = …)]`)
    /// with these arguments instead of the model's. They are checked against the tool's
    /// input schema before anything runs ([`Request::check_answer`]); the tool runs with
    /// them, the transcript's call shows them, and the model reads which fields a person
    /// changed. Edits on any other request are refused.
    ///
    /// ```
    /// use toolnexus::{serde_json::json, Answer};
    ///
    /// let edited = Answer::ok("approval-1").with_args(json!({"path": "/tmp/x"}));
    /// assert_eq!(toolnexus::serde_json::to_value(&edited).unwrap()["args"]["path"], "/tmp/x");
    /// ```
    pub fn with_args(mut self, args: Value) -> Self {
        self.args = Some(args);
        self
    }

    /// Makes this decision on a gated call hold for the same tool for the rest of the run:
    /// later calls of it run (or, for a refusal, are refused) without asking. The decision
    /// travels in the transcript, so it holds across durable resumes in any process, and
    /// never beyond the run: a new prompt asks again.
    ///
    /// ```
    /// let always = toolnexus::Answer::ok("approval-1").remember();
    /// assert!(always.remember);
    /// assert_eq!(toolnexus::serde_json::to_value(&always).unwrap()["remember"], true);
    /// ```
    pub fn remember(mut self) -> Self {
        self.remember = true;
        self
    }

    /// Attaches a payload.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Decodes the payload into `T`.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Form { zip: String }
    ///
    /// let a = toolnexus::Answer::ok("r").with_data(serde_json::json!({"zip": "75001"}));
    /// assert_eq!(a.data_as::<Form>().unwrap().zip, "75001");
    /// assert!(toolnexus::Answer::ok("r").data_as::<Form>().is_err());
    /// ```
    pub fn data_as<T: DeserializeOwned>(&self) -> Result<T, AnswerDataError> {
        match &self.data {
            Some(data) => T::deserialize(data).map_err(AnswerDataError::Invalid),
            // An absent payload still decodes into types that accept null (`Option<_>`, `()`).
            None => T::deserialize(&Value::Null).map_err(|_| AnswerDataError::Missing),
        }
    }
}

/// Why [`Answer::data_as`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AnswerDataError {
    /// The answer carries no data but the target type needs some.
    #[error("the answer carries no data")]
    Missing,
    /// The data does not have the expected shape.
    #[error("{0}")]
    Invalid(#[source] serde_json::Error),
}

/// A key that is present maps to `Some`, even when its value is `null`, so that what one
/// process writes another reads back unchanged.
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}
