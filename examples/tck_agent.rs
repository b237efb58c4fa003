//! The agent the A2A conformance kit (the A2A TCK) drives: each message's id starts with the
//! name of a scenario, and the agent does what that scenario says — complete the task with a
//! message, produce an artifact of each part type (text, file bytes, a file's URL, data),
//! answer with a message instead of a task, wait for the user's input, stream a task's
//! lifecycle, work long enough for a client to subscribe again. It is built on the crate's
//! public API alone: a scripted model reads the scenario from the prompt, tools produce
//! the files and data, and the server's hooks make the prompt from the message id, the
//! artifacts from the tools' results and a message from a run that asks for none.
//!
//! ```sh
//! cargo run --example tck_agent -- --port 9999      # http://127.0.0.1:9999/
//! ```
//!
//! The first line on standard output is the agent's URL. It declares the JSON-RPC and
//! HTTP+JSON bindings and push notifications (webhooks on this machine allowed, as the
//! kit serves its own); its tasks are kept in an in-memory inbox (`--db URL` for another).

mod support;

use std::future::IntoFuture;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{NativeTool, RunResult, ToolContext, ToolResult, Toolkit};
use toolnexus_a2a::a2a::{self, Artifact, Part};
use toolnexus_a2a::A2aServer;
use toolnexus_inbox::Inbox;

type Failure = Box<dyn std::error::Error>;

/// How long the scenario that waits for a client to subscribe again works: twice the
/// kit's streaming timeout.
const LONG_WORK: Duration = Duration::from_secs(4);

/// What the user is asked for: a reply in words.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // its schema is the form; the answer is read as JSON
struct UserReply {
    reply: String,
}

/// What the model does for a scenario: say something, or call a tool first.
enum Act {
    Say(&'static str),
    Call(&'static str, Value),
}

/// The scenario a message id names (longest prefixes first, where one starts another).
fn scenario(message_id: &str) -> Option<Act> {
    const FILE: (&str, &str, &str) = ("output.txt", "text/plain", "tck");
    let write = || {
        Act::Call(
            "write_file",
            json!({"name": FILE.0, "mediaType": FILE.1, "content": FILE.2}),
        )
    };
    let found = [
        ("tck-complete-task", Act::Say("Hello from TCK")),
        ("tck-artifact-text", Act::Say("Generated text content")),
        (
            "tck-artifact-file-url",
            Act::Call(
                "link_file",
                json!({"url": "https://example.com/output.txt", "name": FILE.0, "mediaType": FILE.1}),
            ),
        ),
        ("tck-artifact-file", write()),
        (
            "tck-artifact-data",
            Act::Call(
                "publish_data",
                json!({"data": {"key": "value", "count": 42}}),
            ),
        ),
        ("tck-message-response", Act::Say("Direct message response")),
        (
            "tck-input-required",
            Act::Call("ask_user", json!({"question": "What should I do next?"})),
        ),
        ("tck-stream-001", Act::Say("Stream hello from TCK")),
        ("tck-stream-002", Act::Say("")),
        ("tck-stream-003", Act::Say("Stream task lifecycle")),
        ("tck-stream-ordering-001", Act::Say("Ordered output")),
        (
            "tck-stream-artifact-text",
            Act::Say("Streamed text content"),
        ),
        ("tck-stream-artifact-file", write()),
        // Artifacts are told whole once the task is over: the two chunks come as one.
        ("tck-stream-artifact-chunked", Act::Say("chunk-1 chunk-2")),
        // A run cannot end as rejected: it completes saying so.
        ("tck-reject-task", Act::Say("rejected")),
        (
            "test-resubscribe-message-id",
            Act::Call("work", json!({"ms": LONG_WORK.as_millis()})),
        ),
    ];
    found
        .into_iter()
        .find(|(prefix, _)| message_id.starts_with(prefix))
        .map(|(_, act)| act)
}

/// The scripted model: the prompt's first line is the message id; once a tool answered,
/// the run ends.
fn script(req: &RecordedRequest) -> Reply {
    if let Some((_, out)) = req.tool_results().pop() {
        return Reply::text(format!("Done: {out}"));
    }
    let prompt = req.prompts().first().cloned().unwrap_or_default();
    let message_id = prompt.lines().next().unwrap_or_default();
    match scenario(message_id) {
        Some(Act::Say(text)) => Reply::text(text),
        Some(Act::Call(tool, args)) => Reply::tool_call("call_0", tool, args),
        None => Reply::text(format!("Unhandled messageId prefix: {message_id}")),
    }
}

/// The tools: a file written, a file linked, data published, a question to the user, and
/// work that takes a while.
fn toolkit() -> Toolkit {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    let string = json!({"type": "string"});
    // What the user gets is what the model asked for: the artifacts are made of the
    // calls' arguments.
    let producer = |name: &'static str, description: &'static str, properties: Value| {
        NativeTool::of(
            name,
            description,
            object(properties),
            |args: Value, _ctx: ToolContext| async move { ToolResult::ok(args.to_string()) },
        )
    };
    let file = json!({"name": string, "mediaType": string, "content": string});
    let link = json!({"url": string, "name": string, "mediaType": string});
    let write_file = producer("write_file", "Writes a file the user gets", file);
    let link_file = producer("link_file", "Gives the user a link to a file", link);
    let data = json!({"data": {"type": "object"}});
    let publish_data = producer("publish_data", "Gives the user structured data", data);
    let ask_user = NativeTool::of(
        "ask_user",
        "Asks the user a question and waits for the answer",
        object(json!({"question": {"type": "string"}})),
        |args: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(answer) if answer.ok => {
                    let said = answer.data.as_ref().and_then(|d| d["reply"].as_str());
                    ToolResult::ok(said.unwrap_or_default().to_owned())
                }
                Some(_) => ToolResult::error("the user would not say"),
                // A form of one text field: the user's reply, in words.
                None => toolnexus::pending!(
                    kind = "input",
                    prompt = args["question"].as_str().unwrap_or("Your input?"),
                    answer = UserReply,
                ),
            }
        },
    );
    let work = NativeTool::of(
        "work",
        "Works for a while",
        object(json!({"ms": {"type": "integer"}})),
        |args: Value, _ctx: ToolContext| async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ToolResult::ok("worked")
        },
    );
    Toolkit::builder()
        .tool(write_file)
        .tool(link_file)
        .tool(publish_data)
        .tool(ask_user)
        .tool(work)
        .build()
        .expect("distinct tool names")
}

/// What each tool call of the run produced, as artifacts; a run that produced none shows
/// its final text.
fn artifacts(run: &RunResult) -> Vec<Artifact> {
    let mut made: Vec<Artifact> = run
        .tool_calls
        .iter()
        .filter(|call| !call.is_error)
        .filter_map(|call| {
            let args = &call.args;
            let text = |key: &str| args[key].as_str().unwrap_or_default().to_owned();
            let part = match call.name.as_str() {
                "write_file" => Part::raw(text("content").into_bytes()),
                "link_file" => Part::url(text("url")),
                "publish_data" => Part::data(args["data"].clone()),
                _ => return None,
            };
            let part = match call.name.as_str() {
                "publish_data" => part.with_media_type("application/json"),
                _ => part
                    .with_filename(text("name"))
                    .with_media_type(text("mediaType")),
            };
            Some(artifact(part))
        })
        .collect();
    if made.is_empty() && !run.text.is_empty() {
        made.push(artifact(Part::text(run.text.clone())));
    }
    made
}

fn artifact(part: Part) -> Artifact {
    Artifact {
        // The server names it after the task.
        artifact_id: String::new(),
        name: None,
        description: None,
        parts: vec![part],
        metadata: None,
        extensions: None,
    }
}

/// The message id first, so the model knows the scenario, then what the message says.
fn prompt(message: &a2a::Message) -> Result<String, String> {
    let said = message.text().unwrap_or("(no text)");
    Ok(format!("{}\n{said}", message.message_id))
}

/// Whether the run answers with a message rather than a task: the scenario that says so.
fn replies_with_message(run: &RunResult) -> bool {
    run.messages.iter().any(|m| match m {
        toolnexus::Message::User { content, .. } => content.starts_with("tck-message-response"),
        _ => false,
    })
}

struct Cli {
    port: u16,
    db: String,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Cli, Failure> {
    let mut cli = Cli {
        port: 9999,
        db: "sqlite::memory:".to_owned(),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--port" => cli.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--db" => cli.db = value()?,
            other => return Err(format!("unknown argument `{other}` (--port N, --db URL)").into()),
        }
    }
    Ok(cli)
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let cli = parse(std::env::args().skip(1))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", cli.port)).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    println!("A2A TCK agent at {url}");
    let support::Endpoint {
        builder,
        stub: _stub,
    } = support::endpoint(script).await?;
    let client = builder.build()?;
    let tk = toolkit();
    let inbox = Inbox::builder(cli.db).allow_private_posts().open().await?;
    let server = A2aServer::builder(client.clone(), tk.clone(), inbox.clone())
        .name("toolnexus TCK agent")
        .description("Does what each scenario of the A2A conformance kit says")
        .url(&url)
        .prompt(prompt)
        .artifacts(artifacts)
        .reply_with_message(replies_with_message)
        .push_notifications()
        .build()?;
    // The worker delivers the webhooks' notifications; Ctrl-C ends it, and the server with it.
    let worker = inbox.worker(client, tk);
    let serving = axum::serve(listener, server.router()).into_future();
    tokio::select! {
        served = serving => served?,
        _ = worker.run(async { let _ = tokio::signal::ctrl_c().await; }) => {}
    }
    Ok(())
}
