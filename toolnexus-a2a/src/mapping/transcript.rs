//! A run's transcript as A2A messages: a task's history.

use a2a::{Message as A2aMessage, Part, Role};
use serde_json::json;
use toolnexus::{Message, Request};

/// The transcript `messages` as the history of task `task_id` in `context_id`, oldest
/// first: each user message as a user text message; each model turn as an agent message,
/// its text as a text part and each tool call as a data part `{"toolCall": {"id", "name",
/// "args"}}`; each turn's tool results as an agent message of data parts `{"toolResult":
/// {"callId", "name", "output", "isError"}}`, with `"pending"` (the request) on a call that
/// waits. System instructions are the server's and stay out. Message ids are the task's id
/// and the entry's position, so the same transcript always renders the same.
///
/// ```
/// use toolnexus::Message;
/// use toolnexus_a2a::mapping::history;
///
/// let transcript = vec![Message::system("Be brief."), Message::user("hi"), Message::assistant("Hello.")];
/// let rendered = history(&transcript, "t1", "c1");
/// assert_eq!(rendered.len(), 2);
/// assert_eq!(rendered[0].role, a2a::Role::User);
/// assert_eq!(rendered[1].text(), Some("Hello."));
/// assert_eq!(rendered[1].message_id, "t1-2");
/// ```
pub fn history(messages: &[Message], task_id: &str, context_id: &str) -> Vec<A2aMessage> {
    rendered(messages, task_id, context_id)
        .into_iter()
        .map(|(_, message)| message)
        .collect()
}

/// [`history`], each message with the position of the transcript entry it renders, so a
/// server can place the caller's own messages between them.
pub(crate) fn rendered(
    messages: &[Message],
    task_id: &str,
    context_id: &str,
) -> Vec<(usize, A2aMessage)> {
    messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let (role, parts) = render(m)?;
            let mut message = A2aMessage::new(role, parts);
            message.message_id = format!("{task_id}-{i}");
            message.task_id = Some(task_id.to_owned());
            message.context_id = Some(context_id.to_owned());
            Some((i, message))
        })
        .collect()
}

fn render(message: &Message) -> Option<(Role, Vec<Part>)> {
    match message {
        Message::System { .. } => None,
        Message::User { content, .. } => Some((Role::User, vec![Part::text(content.clone())])),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut parts = Vec::with_capacity(1 + tool_calls.len());
            if !content.is_empty() {
                parts.push(Part::text(content.clone()));
            }
            parts.extend(tool_calls.iter().map(|c| {
                Part::data(json!({"toolCall": {"id": c.id, "name": c.name, "args": c.args}}))
                    .with_media_type("application/json")
            }));
            (!parts.is_empty()).then_some((Role::Agent, parts))
        }
        Message::ToolResults { results } => {
            let parts: Vec<Part> = results
                .iter()
                .map(|r| {
                    let mut result = json!({
                        "callId": r.call_id,
                        "name": r.name,
                        "output": r.output,
                        "isError": r.is_error,
                    });
                    // A placeholder's requests, in the order its call asked them: the
                    // first as `pending`, any others as `pendingMore`.
                    let mut asked = r.requests();
                    if let Some(first) = asked.next() {
                        result["pending"] = json!(first);
                        let more: Vec<&Request> = asked.collect();
                        if !more.is_empty() {
                            result["pendingMore"] = json!(more);
                        }
                    }
                    Part::data(json!({ "toolResult": result })).with_media_type("application/json")
                })
                .collect();
            (!parts.is_empty()).then_some((Role::Agent, parts))
        }
    }
}
