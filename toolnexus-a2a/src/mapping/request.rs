//! The requests a halted run waits on, as an A2A task's state and status message.

use a2a::{Message, Part, PartContent, Role, TaskState};
use toolnexus::{Asks, Request, RequestKind};

/// The media type of the data part that carries a request: the request's own JSON (`id`,
/// `kind`, `prompt`, and `url`, `data` — a form's `schema`, a gate's `tool`, `args` and
/// `argsSchema` — and `expiresAt` when it has them).
pub const REQUEST_MEDIA_TYPE: &str = "application/json";

/// The state of a task whose run waits on `waiting`: `TASK_STATE_AUTH_REQUIRED` when one
/// of them is a sign-in (kind `authorization`), else `TASK_STATE_INPUT_REQUIRED`.
///
/// ```
/// use toolnexus::Request;
/// use toolnexus_a2a::mapping::task_state;
///
/// let login = Request::new("authorization", "Sign in").with_id("r1");
/// assert_eq!(task_state(&[login]), a2a::TaskState::AuthRequired);
/// let buy = Request::new("approval", "Buy a gpu?").with_id("r2");
/// assert_eq!(task_state(&[buy]), a2a::TaskState::InputRequired);
/// ```
pub fn task_state(waiting: &[Request]) -> TaskState {
    if waiting
        .iter()
        .any(|r| matches!(r.kind, RequestKind::Authorization))
    {
        TaskState::AuthRequired
    } else {
        TaskState::InputRequired
    }
}

/// The agent's status message for a run waiting on `waiting` (in call order): for each
/// request its prompt as a text part, the request as a JSON data part
/// ([`REQUEST_MEDIA_TYPE`]), and for a sign-in its URL as a url part.
///
/// ```
/// use toolnexus::Request;
/// use toolnexus_a2a::mapping::{requests_of, status_message};
///
/// let login = Request::new("authorization", "Sign in to the shop")
///     .with_id("r1")
///     .with_url("https://shop.example/login");
/// let message = status_message(&[login.clone()], "task-1", "ctx-1");
/// assert_eq!(message.text(), Some("Sign in to the shop"));
/// assert_eq!(message.parts.len(), 3, "text, data and url");
/// assert_eq!(requests_of(&message), [login]);
/// ```
pub fn status_message(waiting: &[Request], task_id: &str, context_id: &str) -> Message {
    let mut parts = Vec::with_capacity(waiting.len() * 3);
    for request in waiting {
        parts.push(Part::text(request.prompt.clone()));
        // A request is plain serde data; its JSON cannot fail to be written.
        let data = serde_json::to_value(request).unwrap_or_default();
        parts.push(Part::data(data).with_media_type(REQUEST_MEDIA_TYPE));
        if let Asks::SignIn { url: Some(url) } = request.asks() {
            parts.push(Part::url(url));
        }
    }
    let mut message = Message::new(Role::Agent, parts);
    message.message_id = format!("{task_id}-waiting-{}", ids(waiting).join("+"));
    message.task_id = Some(task_id.to_owned());
    message.context_id = Some(context_id.to_owned());
    message
}

/// The requests a status message carries in its data parts ([`status_message`]), in
/// order; parts that are not requests are skipped.
pub fn requests_of(message: &Message) -> Vec<Request> {
    message
        .parts
        .iter()
        .filter_map(|part| match &part.content {
            PartContent::Data(data) => serde_json::from_value::<Request>(data.clone()).ok(),
            _ => None,
        })
        .filter(|r| !r.id.is_empty())
        .collect()
}

/// The ids of `waiting`, in call order: joined into a status message's id, it changes
/// exactly when what the message asks does.
pub(crate) fn ids(waiting: &[Request]) -> Vec<&str> {
    waiting.iter().map(|r| r.id.as_str()).collect()
}
