//! What a client needs to show a waiting thread from the stream alone, sent before the
//! `RUN_FINISHED` that lists its interrupts: the conversation (`MESSAGES_SNAPSHOT`) and
//! the run's state (`STATE_SNAPSHOT`). A front end that reloads while a person is asked
//! renders both again without a call of its own.
//!
//! The state is what the thread waits on, `{"interrupts": [...]}`. A client whose input
//! carried the state this endpoint sent before gets its change instead (`STATE_DELTA`):
//! one approval counted toward a quorum, or the empty list once the run went on.

use serde_json::{json, Map, Value};
use toolnexus::Message;

use super::delta;
use crate::wire::{Event, Interrupt};

/// Where the state keeps what the thread waits on.
const KEY: &str = "interrupts";

/// The snapshots of thread `thread`, whose transcript is `transcript` and whose open
/// interrupts, as the caller may see them, are `interrupts`; the conversation only when
/// `whole` (a caller who sees only the question gets the state alone).
/// `held` is the state the client sent with the run.
pub(crate) fn before_interrupt(
    thread: &str,
    transcript: &[Message],
    interrupts: &[Interrupt],
    whole: bool,
    held: Option<&Value>,
) -> Vec<Event> {
    let mut out = Vec::with_capacity(2);
    if whole {
        out.push(Event::MessagesSnapshot {
            messages: messages(thread, transcript),
        });
    }
    let waiting = json!(interrupts);
    out.push(match change(held, &waiting) {
        Some(delta) if !delta.is_empty() => Event::StateDelta { delta },
        // A client that holds nothing of ours, or exactly this, is sent it whole: the
        // state needed to resume comes before the interrupt either way.
        _ => Event::StateSnapshot {
            snapshot: json!({ KEY: waiting }),
        },
    });
    out
}

/// The snapshots of thread `thread` at rest after `history` (a front end connecting to it):
/// the conversation when `whole`, and a state that waits on nothing — as a change of the
/// state `held` when the client holds ours, else whole.
pub(crate) fn at_rest(
    thread: &str,
    history: &[Message],
    whole: bool,
    held: Option<&Value>,
) -> Vec<Event> {
    let mut out = Vec::with_capacity(2);
    if whole {
        out.push(Event::MessagesSnapshot {
            messages: messages(thread, history),
        });
    }
    let waiting = json!([]);
    out.push(match change(held, &waiting) {
        Some(delta) if !delta.is_empty() => Event::StateDelta { delta },
        _ => Event::StateSnapshot {
            snapshot: json!({ KEY: waiting }),
        },
    });
    out
}

/// The change a run that ended without waiting makes to the state `held`: the list of
/// what the thread waits on emptied, when the client still holds some.
pub(crate) fn after_success(held: Option<&Value>) -> Option<Event> {
    change(held, &json!([]))
        .filter(|delta| !delta.is_empty())
        .map(|delta| Event::StateDelta { delta })
}

/// The patch from what `held` lists as waited on to `waiting`; `None` when `held` is no
/// state of ours to patch.
fn change(held: Option<&Value>, waiting: &Value) -> Option<Vec<Value>> {
    let before = held?.as_object()?.get(KEY)?;
    Some(delta::diff(&format!("/{KEY}"), before, waiting))
}

/// `transcript` as AG-UI messages: the user's, the assistant's turns with their tool
/// calls, and the calls' results; the server's instructions stay out, and so does the
/// placeholder of a call that waits (its interrupt tells of it). Ids are the thread's and
/// the entry's place, the same on every snapshot.
fn messages(thread: &str, transcript: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, message) in transcript.iter().enumerate() {
        let id = format!("{thread}-{i}");
        match message {
            Message::System { .. } => {}
            Message::User { content, .. } => {
                out.push(json!({"id": id, "role": "user", "content": content}));
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut said = Map::new();
                said.insert("id".to_owned(), json!(id));
                said.insert("role".to_owned(), json!("assistant"));
                if !content.is_empty() {
                    said.insert("content".to_owned(), json!(content));
                }
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.args.to_string()},
                            })
                        })
                        .collect();
                    said.insert("toolCalls".to_owned(), Value::Array(calls));
                }
                out.push(Value::Object(said));
            }
            Message::ToolResults { results } => {
                for (k, result) in results.iter().enumerate() {
                    if result.is_pending() {
                        continue;
                    }
                    out.push(json!({
                        "id": format!("{id}-{k}"),
                        "role": "tool",
                        "toolCallId": result.call_id,
                        "content": result.output,
                    }));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolnexus::{Message, ToolCall};

    use super::messages;

    #[test]
    fn a_transcript_is_the_users_turns_the_calls_and_their_results() {
        let call = ToolCall {
            id: "c1".to_owned(),
            name: "lookup".to_owned(),
            args: json!({"q": "gpu"}),
        };
        let mut turn = Message::assistant("Looking.");
        if let Message::Assistant { tool_calls, .. } = &mut turn {
            tool_calls.push(call);
        }
        let transcript = vec![
            Message::system("Be brief."),
            Message::user("price of a gpu?"),
            turn,
            Message::assistant("It is 300."),
        ];
        let shown = messages("t1", &transcript);
        assert_eq!(
            shown,
            [
                json!({"id": "t1-1", "role": "user", "content": "price of a gpu?"}),
                json!({"id": "t1-2", "role": "assistant", "content": "Looking.", "toolCalls": [
                    {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"gpu\"}"}}
                ]}),
                json!({"id": "t1-3", "role": "assistant", "content": "It is 300."}),
            ]
        );
    }
}
