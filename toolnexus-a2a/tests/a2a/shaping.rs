//! The host's hooks, as the official client sees them on both bindings: the prompt made
//! from the whole message (its id included), artifacts of file parts made from what a tool
//! did (on the task and on its stream, before the final status), and a run that asks
//! nobody answered with a message of which no task is kept — except where the caller was
//! promised a task (a stream).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{NativeTool, RunResult, ToolContext, ToolResult, Toolkit};
use toolnexus_a2a::a2a::{self, Artifact, Part};

use crate::support::*;

/// Calls `write_file` when the prompt asks for a file, then says what it wrote; otherwise
/// repeats the prompt.
fn script(req: &RecordedRequest) -> Reply {
    if let Some((_, out)) = req.tool_results().pop() {
        return Reply::text(format!("Wrote {out}"));
    }
    let prompt = req.prompts().first().cloned().unwrap_or_default();
    if prompt.starts_with("file") {
        let args = json!({"name": "notes.txt", "content": "hello"});
        return Reply::tool_call("call_0", "write_file", args);
    }
    Reply::text(format!("Said: {prompt}"))
}

fn toolkit() -> Toolkit {
    let write_file = NativeTool::of(
        "write_file",
        "Writes a file",
        json!({"type": "object", "properties": {"name": {"type": "string"}, "content": {"type": "string"}}}),
        |args: Value, _ctx: ToolContext| async move {
            ToolResult::ok(args["name"].as_str().unwrap_or_default().to_owned())
        },
    );
    Toolkit::builder()
        .tool(write_file)
        .build()
        .expect("a toolkit")
}

/// Each file written, as a file part.
fn files(run: &RunResult) -> Vec<Artifact> {
    run.tool_calls
        .iter()
        .filter(|call| call.name == "write_file")
        .map(|call| {
            let content = call.args["content"].as_str().unwrap_or_default();
            let name = call.args["name"].as_str().unwrap_or_default();
            Artifact {
                artifact_id: String::new(),
                name: Some(name.to_owned()),
                description: None,
                parts: vec![Part::raw(content.as_bytes().to_vec())
                    .with_filename(name)
                    .with_media_type("text/plain")],
                metadata: None,
                extensions: None,
            }
        })
        .collect()
}

/// The message id first; a message without text is refused.
fn prompt(message: &a2a::Message) -> Result<String, String> {
    let text = message.text().ok_or("send your question as text")?;
    Ok(format!("{}: {text}", message.message_id))
}

/// A chat is answered with a message.
fn chats(run: &RunResult) -> bool {
    run.messages.iter().any(
        |m| matches!(m, toolnexus::Message::User { content, .. } if content.starts_with("chat")),
    )
}

async fn shaped_agent(db: &TestDb, model: &MockLlm) -> Agent {
    let options = Options {
        toolkit: Some(toolkit()),
        server: Some(Box::new(|server| {
            server
                .prompt(prompt)
                .artifacts(files)
                .reply_with_message(chats)
        })),
        ..Options::default()
    };
    Agent::serve_with(db, model, Arc::new(AtomicUsize::new(0)), options).await
}

/// The file part of an artifact, checked: its bytes, name and media type.
fn assert_file(artifact: &Value, task_id: &str) {
    assert_eq!(
        artifact["artifactId"],
        format!("{task_id}-artifact-0"),
        "{artifact}"
    );
    let part = &parts(artifact)[0];
    let raw = part["raw"].as_str().unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .unwrap_or_else(|e| panic!("raw bytes as base64 ({e}): {part}"));
    assert_eq!(bytes, b"hello", "{part}");
    assert_eq!(part["filename"], "notes.txt", "{part}");
    assert_eq!(part["mediaType"], "text/plain", "{part}");
}

#[tokio::test]
async fn the_hooks_shape_prompts_artifacts_and_message_replies_on_both_bindings() {
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let db = TestDb::sqlite();
        let model = MockLlm::with_fn(script).await.expect("the model starts");
        let agent = shaped_agent(&db, &model).await;
        let results = drive_over(
            &agent.url,
            binding,
            json!([
                {"send": {"text": "hello", "messageId": "chat-1"}},
                {"send": {"text": "a note", "messageId": "file-1"}},
                {"stream": {"text": "a note", "messageId": "file-2"}},
                {"stream": {"text": "hi", "messageId": "chat-2"}},
                {"send": {"data": {"a": 1}, "messageId": "chat-3"}},
                {"list": {}},
            ]),
        )
        .await;

        // A chat: a message, of which nothing is kept.
        let events = results[0]["events"].as_array().cloned().unwrap_or_default();
        assert_eq!(events.len(), 1, "{binding}: {}", results[0]);
        let reply = &events[0]["message"];
        assert_eq!(reply["role"], "ROLE_AGENT", "{binding}: {reply}");
        assert_eq!(
            parts(reply)[0]["text"],
            "Said: chat-1: hello",
            "{binding}: the prompt is the hook's"
        );
        assert!(reply["contextId"].as_str().is_some_and(|c| !c.is_empty()));
        assert!(reply.get("taskId").is_none(), "{binding}: {reply}");

        // A file written: the task's artifact is the file.
        let task = task_of(&results[1]);
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{binding}: {task}");
        let id = task["id"].as_str().expect("an id");
        let artifacts = task["artifacts"].as_array().cloned().unwrap_or_default();
        assert_eq!(artifacts.len(), 1, "{binding}: {task}");
        assert_file(&artifacts[0], id);

        // Streamed: the artifact before the final status.
        let events = results[2]["events"].as_array().cloned().unwrap_or_default();
        let id = events[0]["task"]["id"].as_str().expect("the task first");
        let kinds: Vec<&str> = events
            .iter()
            .filter_map(|e| e.as_object()?.keys().next().map(String::as_str))
            .collect();
        let last = kinds.len() - 1;
        assert_eq!(kinds[last], "statusUpdate", "{binding}: {kinds:?}");
        assert_eq!(kinds[last - 1], "artifactUpdate", "{binding}: {kinds:?}");
        assert_file(&events[last - 1]["artifactUpdate"]["artifact"], id);

        // A streamed chat was announced as a task, and stays one.
        let events = results[3]["events"].as_array().cloned().unwrap_or_default();
        assert!(
            events.first().is_some_and(|e| e.get("task").is_some()),
            "{binding}: {events:?}"
        );
        assert!(events.iter().all(|e| e.get("message").is_none()));
        let chat_task = events[0]["task"]["id"].as_str().expect("an id");

        // What the prompt hook refuses starts nothing.
        let refused = &results[4];
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|m| m.contains("send your question as text")),
            "{binding}: {refused}"
        );

        let mut listed: Vec<&str> = results[5]["list"]["tasks"]
            .as_array()
            .map(|tasks| tasks.iter().filter_map(|t| t["id"].as_str()).collect())
            .unwrap_or_default();
        listed.sort_unstable();
        let file_task = task["id"].as_str().expect("an id");
        let streamed_file = id;
        let mut expected = vec![file_task, streamed_file, chat_task];
        expected.sort_unstable();
        assert_eq!(
            listed, expected,
            "{binding}: only the tasks a caller was told of"
        );
        agent.stop().await;
    }
}
