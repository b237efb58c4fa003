//! What a remote agent's reply becomes for the model: its output, an error, or a
//! suspension built from the status message of an interrupted task.

use a2a::{Message, Part, PartContent, Task, TaskState};
use serde_json::{json, Map, Value};
use toolnexus::round::RoundId;
use toolnexus::{Request, ToolResult};

use super::round::Round;

/// What `SendMessage` (and the `GetTask` polls after it) ended with.
#[derive(Debug)]
pub(super) enum Reply {
    /// The agent answered with a message and no task.
    Message(Message),
    /// The agent's task, in a terminal or interrupted state.
    Task(Task),
}

/// Whether a task stops here: terminal, interrupted, or in a state the client cannot wait
/// on (unspecified).
pub(super) fn settled(state: &TaskState) -> bool {
    !matches!(state, TaskState::Submitted | TaskState::Working)
}

/// The tool result of `reply` from the agent called `agent`.
pub(super) fn to_result(agent: &str, reply: Reply) -> ToolResult {
    let task = match reply {
        Reply::Message(message) => return ToolResult::ok(text_of(&message.parts)),
        Reply::Task(task) => task,
    };
    let status_text = task
        .status
        .message
        .as_ref()
        .map(|m| text_of(&m.parts))
        .unwrap_or_default();
    let with_text = |what: &str| match status_text.trim() {
        "" => format!("the remote agent `{agent}` {what}"),
        text => format!("the remote agent `{agent}` {what}: {text}"),
    };
    match task.status.state {
        TaskState::Completed => {
            let artifacts: Vec<String> = task
                .artifacts
                .iter()
                .flatten()
                .map(|a| text_of(&a.parts))
                .filter(|t| !t.is_empty())
                .collect();
            let output = match (artifacts.is_empty(), status_text.is_empty()) {
                (false, _) => artifacts.join("\n"),
                (true, false) => status_text,
                (true, true) => format!("the remote agent `{agent}` completed the task"),
            };
            ToolResult::ok(output)
        }
        TaskState::Failed => ToolResult::error(with_text("failed")),
        TaskState::Rejected => ToolResult::error(with_text("rejected the task")),
        TaskState::Canceled => ToolResult::error(with_text("canceled the task")),
        TaskState::InputRequired | TaskState::AuthRequired => {
            ToolResult::pending(ask(agent, &task))
        }
        TaskState::Unspecified | TaskState::Submitted | TaskState::Working => ToolResult::error(
            with_text("left the task in no state the client can wait on"),
        ),
    }
}

/// The request an interrupted task asks through its status message.
///
/// - The prompt is the message's text (else the prompt of its request data part).
/// - `TASK_STATE_AUTH_REQUIRED` asks a sign-in (`authorization`) at the message's url part.
/// - A data part with a `schema` (or a request's JSON, as a toolnexus agent sends, whose
///   `data` has one) asks a form (`input`) with that schema.
/// - Otherwise the data part's `kind` when it names one, else an `approval`.
///
/// The request's `data.a2a` names the remote task (`agent`, `taskId`, `contextId`,
/// `state`) and holds the remote's own request data part (`request`), so a person, a page
/// or a log sees which remote task waits; its id carries the keys the continuation needs.
pub(super) fn ask(agent: &str, task: &Task) -> Request {
    let parts: &[Part] = task
        .status
        .message
        .as_ref()
        .map_or(&[], |m| m.parts.as_slice());
    let remote = parts.iter().find_map(|p| match &p.content {
        PartContent::Data(Value::Object(data)) => Some(data),
        _ => None,
    });
    let field = |key: &str| remote.and_then(|d| d.get(key));
    let field_str = |key: &str| field(key).and_then(Value::as_str);
    let sign_in = task.status.state == TaskState::AuthRequired;
    let url = parts
        .iter()
        .find_map(|p| match &p.content {
            PartContent::Url(url) => Some(url.as_str()),
            _ => None,
        })
        .or_else(|| field_str("url"));
    // A plain agent puts the schema in the part itself; a toolnexus agent's part is its
    // whole request, with the schema in the request's own `data`.
    let schema = field("schema")
        .or_else(|| field("data").and_then(|d| d.get("schema")))
        .filter(|_| !sign_in);
    let kind = match (sign_in, schema, field_str("kind")) {
        (true, _, _) => "authorization",
        (false, Some(_), _) => "input",
        (false, None, Some(kind)) if kind != "authorization" => kind,
        _ => "approval",
    };
    let text = words_of(parts);
    let prompt = match (text.trim(), field_str("prompt")) {
        ("", Some(prompt)) => prompt.to_owned(),
        ("", None) if sign_in => format!("Sign in for the remote agent `{agent}`"),
        ("", None) => format!("The remote agent `{agent}` asks for input"),
        (text, _) => text.to_owned(),
    };
    let mut keys = Map::new();
    keys.insert("agent".into(), json!(agent));
    keys.insert("taskId".into(), json!(task.id));
    keys.insert("contextId".into(), json!(task.context_id));
    keys.insert("state".into(), json!(task.status.state));
    if let Some(remote) = remote {
        keys.insert("request".into(), Value::Object(remote.clone()));
    }
    let mut data = Map::new();
    if let Some(schema) = schema {
        data.insert("schema".into(), schema.clone());
    }
    data.insert("a2a".into(), Value::Object(keys));
    let round = Round::new(
        task.id.clone(),
        task.context_id.clone(),
        field_str("id").map(str::to_owned),
    );
    let mut request = Request::new(kind, prompt)
        .with_id(round.to_id())
        .with_data(Value::Object(data));
    if let Some(url) = url {
        request = request.with_url(url);
    }
    request
}

/// The text parts alone, one a line: what the status message says in words.
fn words_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(Part::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every part as text, one a line: text as written, data as JSON, a url as itself, a file
/// by its name and type.
pub(super) fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|part| match &part.content {
            PartContent::Text(text) => text.clone(),
            PartContent::Data(data) => data.to_string(),
            PartContent::Url(url) => url.clone(),
            PartContent::Raw(bytes) => format!(
                "[{} bytes of {}{}]",
                bytes.len(),
                part.media_type.as_deref().unwrap_or("data"),
                part.filename
                    .as_deref()
                    .map(|f| format!(", {f}"))
                    .unwrap_or_default()
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(state: &str, parts: Value) -> Task {
        serde_json::from_value(json!({
            "id": "task-1", "contextId": "ctx-1",
            "status": {"state": state, "message": {
                "messageId": "m", "role": "ROLE_AGENT", "parts": parts}}
        }))
        .unwrap()
    }

    #[test]
    fn a_toolnexus_agents_request_part_gives_kind_form_and_remote_id() {
        let form = json!({"type": "object", "properties": {"zip": {"type": "string"}}});
        let task = waiting(
            "TASK_STATE_INPUT_REQUIRED",
            json!([
                {"text": "Where to?"},
                {"data": {"id": "r-7", "kind": "input", "prompt": "Where to?",
                          "data": {"schema": form}}, "mediaType": "application/json"}
            ]),
        );
        let request = ask("shop", &task);
        assert_eq!(request.kind, "input");
        assert_eq!(request.prompt, "Where to?");
        assert_eq!(request.data.as_ref().unwrap()["schema"], form);
        let round = Round::from_id(&request.id).unwrap();
        assert_eq!(round.task_id, "task-1");
        assert_eq!(round.context_id, "ctx-1");
        assert_eq!(round.remote_id.as_deref(), Some("r-7"));
    }

    #[test]
    fn a_gate_stays_a_plain_approval_here() {
        // Passed on as a gate, the loop would re-run the call without the answer.
        let task = waiting(
            "TASK_STATE_INPUT_REQUIRED",
            json!([{"data": {"id": "g", "kind": "approval", "prompt": "Delete /tmp/x?",
                "data": {"tool": "delete", "args": {}, "argsSchema": {"type": "object"}}}}]),
        );
        let request = ask("fs", &task);
        assert_eq!(request.prompt, "Delete /tmp/x?");
        assert_eq!(request.asks(), toolnexus::Asks::Confirm);
    }

    #[test]
    fn a_sign_in_without_words_gets_a_prompt_and_its_url() {
        let task = waiting(
            "TASK_STATE_AUTH_REQUIRED",
            json!([{"url": "https://id.example/login"}]),
        );
        let request = ask("crm", &task);
        assert_eq!(request.kind, "authorization");
        assert_eq!(request.prompt, "Sign in for the remote agent `crm`");
        assert_eq!(request.url.as_deref(), Some("https://id.example/login"));
    }
}
