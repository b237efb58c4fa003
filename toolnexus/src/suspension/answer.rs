//! [`Answer`]: what a host replies to a [`Request`](super::Request).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::codes::Refusal;
use super::present::present;
use super::receipt::{data_digest, Receipt, ReceiptAnswer};

/// A host's reply to a [`Request`](crate::Request).
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
    /// Echoes [`Request::id`](crate::Request::id).
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
    /// The signed receipts of this answer (JSON `receipts`, omitted when empty): what a
    /// tool hands the system it acts on as proof of who approved the call. A resume
    /// refuses an answer whose receipts were issued for another request or call
    /// ([`ClientError::ReceiptMismatch`](crate::ClientError::ReceiptMismatch)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipts: Vec<Receipt>,
    /// Envelope information about the answer, apart from the answer itself: a client's
    /// signature over what it sent, a routing key (JSON `metadata`, omitted when `None`).
    /// Kept with the answer wherever it is recorded (the inbox's audit trail); nothing in
    /// the loop acts on it (see [`with_metadata`](Answer::with_metadata)). Boxed: answers
    /// are moved through the loop, and most carry none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Map<String, Value>>>,
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
            receipts: Vec::new(),
            metadata: None,
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
            receipts: Vec::new(),
            metadata: None,
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
    /// input schema before anything runs
    /// ([`Request::check_answer`](crate::Request::check_answer)); the tool runs with them,
    /// the transcript's call shows them, and the model reads which fields a person changed.
    /// Edits on any other request are refused.
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

    /// Attaches envelope information: what a front end sends about its answer rather than
    /// as it, such as its own signature over the decision, so the record of the answer
    /// keeps it. An empty map attaches nothing, so the key stays out of the JSON.
    ///
    /// ```
    /// use toolnexus::serde_json::{json, Map, Value};
    ///
    /// let mut envelope = Map::new();
    /// envelope.insert("signature".into(), json!("c2lnbmVk"));
    /// let yes = toolnexus::Answer::ok("approval-1").with_metadata(envelope);
    /// let wire: Value = toolnexus::serde_json::to_value(&yes).unwrap();
    /// assert_eq!(wire["metadata"]["signature"], "c2lnbmVk");
    /// ```
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = (!metadata.is_empty()).then(|| Box::new(metadata));
        self
    }

    /// Attaches a payload.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// This answer with every whole number its data and edited arguments hold as a double
    /// (`5000000.0`, as clients that carry JSON through protobuf's `Struct` send it)
    /// written as the integer it is ([`form::whole_numbers`](crate::form::whole_numbers)).
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::Answer;
    ///
    /// let sent = Answer::ok("r1").with_args(json!({"amount": 5000000.0})).with_data(json!({"qty": 2.0}));
    /// let answer = sent.with_whole_numbers();
    /// assert!(answer.args.unwrap()["amount"].is_u64());
    /// assert_eq!(answer.data, Some(json!({"qty": 2})));
    /// ```
    pub fn with_whole_numbers(mut self) -> Self {
        for value in [&mut self.data, &mut self.args].into_iter().flatten() {
            crate::form::whole_numbers(value);
        }
        self
    }

    /// Decodes the payload into `T`; a whole number sent as a double (`3.0`) decodes into
    /// an integer field.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Form { zip: String }
    ///
    /// let a = toolnexus::Answer::ok("r").with_data(serde_json::json!({"zip": "75001"}));
    /// assert_eq!(a.data_as::<Form>().unwrap().zip, "75001");
    /// assert!(toolnexus::Answer::ok("r").data_as::<Form>().is_err());
    /// ```
    pub fn data_as<T: DeserializeOwned>(&self) -> Result<T, AnswerDecodeError> {
        match &self.data {
            Some(data) => T::deserialize(data).or_else(|e| {
                // `5.0` decodes into an integer field as the 5 it means; tried only once
                // the data as sent did not decode, so the usual answer costs no copy.
                if !crate::form::has_whole_doubles(data) {
                    return Err(AnswerDecodeError::Invalid(e));
                }
                let mut whole = data.clone();
                crate::form::whole_numbers(&mut whole);
                T::deserialize(whole).map_err(|_| AnswerDecodeError::Invalid(e))
            }),
            // An absent payload still decodes into types that accept null (`Option<_>`, `()`).
            None => T::deserialize(&Value::Null).map_err(|_| AnswerDecodeError::Missing),
        }
    }
}

/// Stating an answer on a receipt; here rather than beside [`ReceiptAnswer`] because an
/// [`Answer`] carries receipts, and the answer's module is the one that knows both.
impl ReceiptAnswer {
    /// What a receipt says of `answer`.
    pub fn of(answer: &Answer) -> Self {
        ReceiptAnswer {
            ok: answer.ok,
            reason: answer.refusal().cloned(),
            data: answer.data.as_ref().map(data_digest),
        }
    }
}

/// Why [`Answer::data_as`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AnswerDecodeError {
    /// The answer carries no data but the target type needs some.
    #[error("the answer carries no data")]
    Missing,
    /// The data does not have the expected shape.
    #[error("{0}")]
    Invalid(#[source] serde_json::Error),
}
