//! [`Request`]: what a parked tool asks for.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::answer::Answer;
use super::codes::RequestKind;
use super::present::present;

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
    pub fn new(kind: impl Into<RequestKind>, prompt: impl Into<String>) -> Self {
        Request {
            id: String::new(),
            kind: kind.into(),
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
