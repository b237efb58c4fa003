//! What a tool call produces: [`ToolResult`], and the conversions that let a `#[tool]` fn
//! return whatever is natural ([`IntoToolResult`]).

use std::fmt::Display;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Request, RequestKind};

/// The metadata key under which a suspension carries its [`Request`] on the wire (the
/// first one, when it asks several).
const PENDING_KEY: &str = "pending";

/// The metadata key under which a suspension that asks several questions at once carries
/// its requests after the first, as a JSON array; absent when it asks one. Other ports and
/// recorded histories read `pending` alone, which stays the first request.
pub(crate) const PENDING_MORE_KEY: &str = "pendingMore";

/// The request a result's metadata parks it on: the one place that reads the wire key,
/// for results and call records alike.
pub(crate) fn pending_in(metadata: Option<&Map<String, Value>>) -> Option<Request> {
    Request::deserialize(metadata?.get(PENDING_KEY)?).ok()
}

/// The requests a suspension asks after its first (`pendingMore`): empty when it asks one,
/// `Err` with why when the key holds something else than a list of requests.
pub(crate) fn more_in(metadata: Option<&Map<String, Value>>) -> Result<Vec<Request>, String> {
    match metadata.and_then(|m| m.get(PENDING_MORE_KEY)) {
        None => Ok(Vec::new()),
        Some(more) => Vec::<Request>::deserialize(more)
            .map_err(|e| format!("its `{PENDING_MORE_KEY}` is not a list of requests: {e}")),
    }
}

/// The metadata key under which a suspension keeps what its call needs on the re-run that
/// settles it (a sub-agent keeps its halted run there). The loop moves it onto the call's
/// placeholder, where the model never reads it, and hands it back in the re-run's context;
/// a call that keeps one may end its re-run on new questions, the next round.
pub(crate) const RESUME_KEY: &str = "resumeState";

/// Takes out what a suspension keeps for its re-run ([`RESUME_KEY`]), if anything.
pub(crate) fn take_resume(result: &mut ToolResult) -> Option<Box<Value>> {
    let kept = result.metadata.as_mut()?.remove(RESUME_KEY)?;
    Some(Box::new(kept))
}

const DEFAULT_AUTH_PROMPT: &str = "Sign in to continue.";

/// The outcome of one tool call: text for the model, an error flag, optional metadata.
///
/// A suspension ([`ToolResult::pending`]) is also a `ToolResult`: it has `is_error = true`
/// because there is no usable answer yet, but it is not a failure: sort a result with
/// [`ToolOutcome::classify`](crate::ToolOutcome::classify) rather than reading `is_error`
/// alone.
///
/// ```
/// use toolnexus::{Request, ToolResult};
///
/// let parked = ToolResult::pending(Request::new("approval", "Approve refund of $40?"));
/// assert!(parked.is_error && parked.is_pending());
/// let req = ToolResult::pending_of(&parked).unwrap();
/// assert!(!req.id.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text fed back to the model.
    pub output: String,
    /// Whether the call failed (or is parked on a suspension).
    #[serde(rename = "isError", default)]
    pub is_error: bool,
    /// Extra data; `metadata["pending"]` holds the request of a suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(output: impl Into<String>) -> Self {
        ToolResult {
            output: output.into(),
            is_error: false,
            metadata: None,
        }
    }

    /// A failed result; the message goes to the model so it can react.
    pub fn error(message: impl Into<String>) -> Self {
        ToolResult {
            output: message.into(),
            is_error: true,
            metadata: None,
        }
    }

    /// A suspension: the call parks on `request` until a host answers it.
    ///
    /// An empty `request.id` is replaced by a fresh uuid v4. The output is the prompt,
    /// followed by the URL on its own line when there is one.
    pub fn pending(request: Request) -> Self {
        let request = with_id(request);
        let output = request_text(&request);
        let mut metadata = Map::with_capacity(1);
        metadata.insert(PENDING_KEY.to_owned(), request_value(request));
        ToolResult {
            output,
            is_error: true,
            metadata: Some(metadata),
        }
    }

    /// A suspension on several requests at once, answered separately: the call re-runs
    /// once every one is answered, with all the answers in its context
    /// ([`ToolContext::answers`](crate::ToolContext::answers), in the order given here).
    ///
    /// Empty ids are filled as [`pending`](Self::pending) fills them. `metadata["pending"]`
    /// holds the first request, so a reader that knows one request (another port, a
    /// recorded history) reads it as before, and `metadata["pendingMore"]` the others;
    /// [`requests_of`](Self::requests_of) reads them all. One request is exactly
    /// [`pending`](Self::pending). The output lists each request's text on its own line.
    /// No request, or two with one id, is an error result saying so: a call cannot wait on
    /// nothing, nor tell two answers apart.
    ///
    /// ```
    /// use toolnexus::{Request, ToolResult};
    ///
    /// let parked = ToolResult::pending_all([
    ///     Request::new("approval", "Ship to Berlin?"),
    ///     Request::new("input", "Gift note?"),
    /// ]);
    /// let asked = ToolResult::requests_of(&parked);
    /// assert_eq!(asked.len(), 2);
    /// assert_eq!(ToolResult::pending_of(&parked).unwrap(), asked[0]);
    /// assert_eq!(parked.output, "Ship to Berlin?\nGift note?");
    ///
    /// let twice = ToolResult::pending_all([
    ///     Request::new("input", "A?").with_id("q"),
    ///     Request::new("input", "B?").with_id("q"),
    /// ]);
    /// assert!(twice.is_error && !twice.is_pending());
    /// assert!(!ToolResult::pending_all([]).is_pending());
    /// ```
    pub fn pending_all(requests: impl IntoIterator<Item = Request>) -> Self {
        let mut requests = requests.into_iter();
        let Some(first) = requests.next() else {
            return ToolResult::error(
                "a suspension needs at least one request: none was given".to_owned(),
            );
        };
        let first = with_id(first);
        let more: Vec<Request> = requests.map(with_id).collect();
        if more.is_empty() {
            return ToolResult::pending(first);
        }
        let first_id = first.id.clone();
        let mut result = ToolResult::pending(first);
        for (i, request) in more.iter().enumerate() {
            if request.id == first_id || more[..i].iter().any(|r| r.id == request.id) {
                return ToolResult::error(format!(
                    "a suspension asks request `{}` twice: give each request its own id",
                    request.id
                ));
            }
        }
        for request in &more {
            result.output.push('\n');
            result.output.push_str(&request_text(request));
        }
        let more = more.into_iter().map(request_value).collect();
        result
            .metadata
            .get_or_insert_with(Map::new)
            .insert(PENDING_MORE_KEY.to_owned(), Value::Array(more));
        result
    }

    /// Every request a suspension parks on, in the order it asked them: one for
    /// [`pending`](Self::pending), all of them for [`pending_all`](Self::pending_all);
    /// empty when the result is not a suspension. [`pending_of`](Self::pending_of) is the
    /// first.
    pub fn requests_of(result: &ToolResult) -> Vec<Request> {
        let Some(first) = pending_in(result.metadata.as_ref()) else {
            return Vec::new();
        };
        let mut all = vec![first];
        all.extend(more_in(result.metadata.as_ref()).unwrap_or_default());
        all
    }

    /// What a suspension kept for the re-run that settles it (a
    /// [`SubAgent`](crate::SubAgent)'s halted run); `None` when it kept nothing. A host
    /// that carries a call's rounds apart from its result (sealed in a protocol's state,
    /// or in a store) keeps this value alone and hands it back with
    /// [`ToolContext::resuming_kept`](crate::ToolContext::resuming_kept).
    ///
    /// ```
    /// use toolnexus::{Request, ToolResult};
    ///
    /// assert!(ToolResult::kept_of(&ToolResult::pending(Request::new("approval", "Go?"))).is_none());
    /// ```
    pub fn kept_of(result: &ToolResult) -> Option<&Value> {
        result.metadata.as_ref()?.get(RESUME_KEY)
    }

    /// Writes `request` as the one this suspension parks on (after a change to it).
    pub(crate) fn set_pending(&mut self, request: &Request) {
        // Serializing a `Request` cannot fail: all its fields are strings or JSON values.
        let value = serde_json::to_value(request).unwrap_or(Value::Null);
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(PENDING_KEY.to_owned(), value);
    }

    /// A login suspension: kind `"authorization"`, the user signs in at `url`.
    ///
    /// ```
    /// let r = toolnexus::ToolResult::auth_required("https://example.com/login", None);
    /// let req = toolnexus::ToolResult::pending_of(&r).unwrap();
    /// assert_eq!(req.kind, "authorization");
    /// assert_eq!(req.url.as_deref(), Some("https://example.com/login"));
    /// ```
    pub fn auth_required(url: impl Into<String>, prompt: Option<&str>) -> Self {
        let prompt = prompt.unwrap_or(DEFAULT_AUTH_PROMPT);
        ToolResult::pending(Request::new(RequestKind::Authorization, prompt).with_url(url))
    }

    /// The request a result is parked on, or `None` when it is not a suspension.
    ///
    /// This decodes the metadata each time: code that asks more than once sorts the result
    /// once with [`ToolOutcome::classify`](crate::ToolOutcome::classify) and asks that.
    pub fn pending_of(result: &ToolResult) -> Option<Request> {
        pending_in(result.metadata.as_ref())
    }

    /// Whether this result is a suspension (its metadata carries a valid request).
    pub fn is_pending(&self) -> bool {
        ToolResult::pending_of(self).is_some()
    }
}

/// `request` with a fresh uuid v4 for an empty id.
fn with_id(mut request: Request) -> Request {
    if request.id.is_empty() {
        // Written into a buffer of its own: `to_string` would go through a formatter.
        let id = uuid::Uuid::new_v4().hyphenated();
        request.id = id.encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned();
    }
    request
}

/// What a suspension tells the model of `request`: its prompt, and its URL on a line of
/// its own when it has one.
fn request_text(request: &Request) -> String {
    match &request.url {
        Some(url) => format!("{}\n{}", request.prompt, url),
        None => request.prompt.clone(),
    }
}

/// `request` as its JSON, the same value `serde_json::to_value(&request)` gives (a test
/// holds the two together), with its strings moved in rather than copied: every suspension
/// is written this way.
fn request_value(request: Request) -> Value {
    let Request {
        id,
        kind,
        prompt,
        url,
        data,
        expires_at,
    } = request;
    let mut map = Map::with_capacity(6);
    map.insert("id".to_owned(), Value::String(id));
    map.insert("kind".to_owned(), Value::String(kind.into()));
    map.insert("prompt".to_owned(), Value::String(prompt));
    if let Some(url) = url {
        map.insert("url".to_owned(), Value::String(url));
    }
    if let Some(data) = data {
        map.insert("data".to_owned(), data);
    }
    if let Some(expires_at) = expires_at {
        map.insert("expiresAt".to_owned(), Value::String(expires_at));
    }
    Value::Object(map)
}

/// Conversion of a tool body's return value into a [`ToolResult`].
///
/// Implemented for [`ToolResult`], `String`, `&'static str`, [`Json<T>`], `()` and
/// `Result<T: IntoToolResult, E: Display>` (an `Err` becomes an error result with its message).
///
/// A `#[tool]` fn may also return any `T: Serialize` and `Result<T: Serialize, E: Display>`
/// directly, rendered as JSON text like `Json<T>`; these impls come first, so a `String`
/// is still plain text, not a JSON string.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "a tool returns text, a `ToolResult`, or a value it renders as JSON",
    note = "return `ToolResult`, `String`, `&'static str`, `()`, a `T: serde::Serialize` (rendered as JSON), `toolnexus::Json<T>`, or a `Result<T, E: Display>` of one of these"
)]
pub trait IntoToolResult {
    /// Performs the conversion.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok("")
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => ToolResult::error(e.to_string()),
        }
    }
}

/// Structured output: the value is rendered as compact JSON text for the model.
///
/// ```
/// use toolnexus::{IntoToolResult, Json};
///
/// let r = Json(serde_json::json!({"temp": 21})).into_tool_result();
/// assert_eq!(r.output, r#"{"temp":21}"#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        json_result(&self.0)
    }
}

/// A value as compact JSON text, or an error result when it does not serialize.
pub(crate) fn json_result<T: Serialize + ?Sized>(value: &T) -> ToolResult {
    match serde_json::to_string(value) {
        Ok(text) => ToolResult::ok(text),
        Err(e) => ToolResult::error(format!("could not render the result as JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The owned conversion must write what `Serialize` writes, keys in the same order, or
    /// a parked request would read differently from one a host serialized itself.
    #[test]
    fn a_request_is_written_as_its_serialization() {
        let bare = Request::new("approval", "Approve?");
        let full = Request::new("custom-kind", "Sign in \"here\"")
            .with_id("req-1")
            .with_url("https://example.com/login")
            .with_data(json!({"schema": {"type": "object"}, "n": 1}))
            .with_expires_at("2030-01-01T00:00:00Z");
        for request in [bare, full] {
            let expected = serde_json::to_string(&request).unwrap();
            let written = serde_json::to_string(&request_value(request.clone())).unwrap();
            assert_eq!(written, expected);
            let parked = ToolResult::pending(request.clone());
            let back = ToolResult::pending_of(&parked).unwrap();
            assert_eq!(back.prompt, request.prompt);
            assert_eq!(back.data, request.data);
        }
    }
}
