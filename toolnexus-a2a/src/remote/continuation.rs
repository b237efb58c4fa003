//! An answer as the message that continues the remote task.

use a2a::{Message, Part, Role};
use serde_json::Value;
use toolnexus::Answer;

use super::round::Round;

/// The continuation of the task `round` names, carrying `answer` twice: as the `Answer`
/// JSON in a data part, for agents that read it (a toolnexus agent does), and as words
/// in a text part for those that read text: `approve`, or `decline: <the person's words or
/// the refusal's code>`.
///
/// The data part's `id` is the remote agent's own request id when its status message
/// named one, and is left out otherwise: this side's id means nothing there.
pub(super) fn message(round: &Round, answer: &Answer) -> Message {
    let words = if answer.ok {
        "approve".to_owned()
    } else {
        let why = answer
            .note()
            .or(answer.reason.as_deref())
            .filter(|w| !w.trim().is_empty())
            .unwrap_or("declined");
        format!("decline: {why}")
    };
    let mut json = serde_json::to_value(answer).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut json {
        match &round.remote_id {
            Some(id) => {
                fields.insert("id".into(), Value::String(id.clone()));
            }
            None => {
                fields.remove("id");
            }
        }
    }
    let mut message = Message::new(
        Role::User,
        vec![
            Part::text(words),
            Part::data(json).with_media_type("application/json"),
        ],
    );
    message.task_id = Some(round.task_id.clone());
    message.context_id = Some(round.context_id.clone());
    message
}
