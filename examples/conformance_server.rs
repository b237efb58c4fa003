//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! tests: `#[tool]` fns named as the suite's server scenarios call them, in a `Toolkit`
//! served by `toolnexus_mcp` over streamable HTTP at `/mcp` on a loopback port. Its
//! questions are ordinary `pending!` suspensions: the server asks them with
//! `elicitation/create` on protocol 2025-11-25 and as `input_required` results on
//! 2026-07-28.
//!
//! ```sh
//! cargo run --example conformance_server -- --port 3001     # http://127.0.0.1:3001/mcp
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp
//! ```
//!
//! `--port 0` takes a free port; the first line on standard output says which.
//!
//! For a client that declares the tasks extension, a call still running after 200 ms is
//! answered with a task (the `tasks-*` scenarios' fixtures: `slow_compute`,
//! `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input`,
//! `test_tool_with_task`).

mod failure;

use std::time::Duration;

use failure::Failure;
use schemars::JsonSchema;
use serde::Deserialize;
use toolnexus::serde_json::{json, Value};
use toolnexus::{pending, pending_all, tool, Answer, Answered, ToolContext, ToolResult, Toolkit};
use toolnexus_mcp::McpServer;

/// Returns a fixed line of text
#[tool]
async fn test_simple_text() -> ToolResult {
    ToolResult::ok("This is a simple text response for testing.")
}

/// Always fails, as an error result
#[tool]
async fn test_error_handling() -> ToolResult {
    ToolResult::error("This tool intentionally returns an error for testing")
}

/// Who the user is.
#[derive(Debug, Deserialize, JsonSchema)]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for a name and an email address
#[tool]
async fn test_elicitation(
    #[arg(description = "The message to show the user")] message: String,
    contact: Option<Answered<Contact>>,
) -> ToolResult {
    match contact {
        None => pending!(kind = "input", prompt = message, answer = Contact),
        Some(c) => ToolResult::ok(format!(
            "User response: action=accept, content={}",
            json!({"username": c.username, "email": c.email})
        )),
    }
}

/// A form whose every primitive field has a default (SEP-1034)
#[tool]
async fn test_elicitation_sep1034_defaults(answer: Option<&Answer>) -> ToolResult {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    ask_form(
        answer,
        "Please review and update the form fields with defaults",
        schema,
    )
}

/// A form with each of the five enum shapes (SEP-1330)
#[tool]
async fn test_elicitation_sep1330_enums(answer: Option<&Answer>) -> ToolResult {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose one titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose multiple options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose multiple titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        }
    });
    ask_form(answer, "Please select options from the enum fields", schema)
}

/// Asks for a form given as its JSON schema, and reports what came back.
fn ask_form(answer: Option<&Answer>, prompt: &str, schema: Value) -> ToolResult {
    match answer {
        None => pending!(
            kind = "input",
            prompt = prompt,
            data = json!({ "schema": schema })
        ),
        Some(a) => ToolResult::ok(format!(
            "Elicitation completed: action=accept, content={}",
            a.data.clone().unwrap_or_else(|| json!({}))
        )),
    }
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// A yes or no.
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirmation {
    ok: bool,
}

/// A colour.
#[derive(Debug, Deserialize, JsonSchema)]
struct Colour {
    color: String,
}

/// Asks the user's name, then greets them
#[tool]
async fn test_input_required_result_elicitation(name: Option<Answered<Name>>) -> ToolResult {
    match name {
        None => pending!(
            kind = "input",
            id = "user_name",
            prompt = "What is your name?",
            answer = Name
        ),
        Some(n) => ToolResult::ok(format!("Hello, {}!", n.name)),
    }
}

/// Asks for a confirmation; the retry is accepted only with the state the server sealed
#[tool]
async fn test_input_required_result_request_state(
    confirmation: Option<Answered<Confirmation>>,
) -> ToolResult {
    confirm(confirmation)
}

/// Asks for a confirmation, whose sealed state a client cannot alter
#[tool]
async fn test_input_required_result_tampered_state(
    confirmation: Option<Answered<Confirmation>>,
) -> ToolResult {
    confirm(confirmation)
}

/// The server only reaches the tool's second run once the echoed `requestState` has
/// opened, so reaching it is what "state-ok" reports.
fn confirm(confirmation: Option<Answered<Confirmation>>) -> ToolResult {
    match confirmation {
        None => pending!(
            kind = "input",
            id = "confirm",
            prompt = "Please confirm",
            answer = Confirmation
        ),
        Some(c) => ToolResult::ok(format!("state-ok: confirmed={}", c.ok)),
    }
}

/// Asks two questions, one round each
#[tool]
async fn test_input_required_result_multi_round(answer: Option<&Answer>) -> ToolResult {
    // Each round's answer names the question it answers, which is all the tool needs to
    // know which round it is in.
    match answer {
        None => pending!(
            kind = "input",
            id = "step1",
            prompt = "Step 1: What is your name?",
            answer = Name
        ),
        Some(a) if a.id == "step1" => pending!(
            kind = "input",
            id = "step2",
            prompt = "Step 2: What is your favorite color?",
            answer = Colour
        ),
        Some(a) => match a.data_as::<Colour>() {
            Ok(c) => ToolResult::ok(format!("favorite color: {}", c.color)),
            Err(e) => ToolResult::error(format!("step 2 was not answered with a colour: {e}")),
        },
    }
}

/// How long a call runs before a client that declared tasks is handed a task.
const TASK_AFTER: Duration = Duration::from_millis(200);

/// Greets someone at once
#[tool]
async fn greet(#[arg(description = "Who to greet")] name: String) -> ToolResult {
    ToolResult::ok(format!("Hello, {name}!"))
}

/// Works for the given number of seconds, then reports it
#[tool]
async fn slow_compute(
    #[arg(description = "How long to work, in seconds")] seconds: u64,
    #[arg(description = "A name for this piece of work")] label: Option<String>,
) -> ToolResult {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let label = label.unwrap_or_else(|| "work".to_owned());
    ToolResult::ok(format!("{label}: computed in {seconds}s"))
}

/// Works for a second, then fails as an error result
#[tool]
async fn failing_job() -> ToolResult {
    tokio::time::sleep(Duration::from_secs(1)).await;
    ToolResult::error("the job failed after a second of work")
}

/// Works for half a second, then asks for a form MCP elicitation cannot carry (a nested
/// object), which the server cannot put to the client: the task fails with a JSON-RPC
/// error rather than completing with the tool's result
#[tool]
async fn protocol_error_job(answer: Option<&Answer>) -> ToolResult {
    if answer.is_some() {
        return ToolResult::ok("answered");
    }
    tokio::time::sleep(TASK_AFTER * 2).await;
    let schema = json!({
        "type": "object",
        "properties": {
            "address": {"type": "object", "properties": {"city": {"type": "string"}}}
        }
    });
    pending!(
        kind = "input",
        prompt = "Where do you live?",
        data = json!({ "schema": schema })
    )
}

/// Whether to go ahead.
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirm {
    /// Delete the file
    confirm: bool,
}

/// Looks the file up, then asks before deleting it
#[tool]
async fn confirm_delete(
    #[arg(description = "The file to delete")] filename: String,
    confirm: Option<Answered<Confirm>>,
) -> ToolResult {
    match confirm {
        None => {
            // Finding the file takes longer than a call waits before it becomes a task,
            // so the question is the task's.
            tokio::time::sleep(TASK_AFTER * 2).await;
            pending!(
                kind = "input",
                prompt = format!("Delete {filename}?"),
                answer = Confirm
            )
        }
        Some(c) if c.confirm => ToolResult::ok(format!("deleted {filename}")),
        Some(_) => ToolResult::ok(format!("kept {filename}")),
    }
}

/// One of the two people `multi_input` asks about.
#[derive(Debug, Deserialize, JsonSchema)]
struct Person {
    /// Their name
    name: String,
    /// Whether they take part
    confirm: bool,
}

/// Asks about two people at once, then says who takes part
#[tool]
async fn multi_input(ctx: &ToolContext) -> ToolResult {
    let [first, second] = ctx.answers.as_slice() else {
        // As `confirm_delete`: the questions come after the call has become a task.
        tokio::time::sleep(TASK_AFTER * 2).await;
        return pending_all![
            (kind = "input", prompt = "Who comes first?", answer = Person),
            (
                kind = "input",
                prompt = "Who comes second?",
                answer = Person
            ),
        ];
    };
    let mut taking_part = Vec::new();
    for answer in [first, second] {
        match answer.data_as::<Person>() {
            Ok(person) if person.confirm => taking_part.push(person.name),
            Ok(_) => {}
            Err(e) => return ToolResult::error(format!("an answer does not fit: {e}")),
        }
    }
    ToolResult::ok(format!("taking part: {}", taking_part.join(", ")))
}

/// Asks the user's name at once, then takes a second to greet them
#[tool]
async fn test_tool_with_task(name: Option<Answered<Name>>) -> ToolResult {
    match name {
        None => pending!(
            kind = "input",
            id = "user_name",
            prompt = "What is your name?",
            answer = Name
        ),
        Some(n) => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            ToolResult::ok(format!("Hello, {}! Your task is done.", n.name))
        }
    }
}

fn toolkit() -> Result<Toolkit, toolnexus::ToolkitError> {
    Toolkit::builder()
        .tool(TestSimpleText)
        .tool(TestErrorHandling)
        .tool(TestElicitation)
        .tool(TestElicitationSep1034Defaults)
        .tool(TestElicitationSep1330Enums)
        .tool(TestInputRequiredResultElicitation)
        .tool(TestInputRequiredResultRequestState)
        .tool(TestInputRequiredResultTamperedState)
        .tool(TestInputRequiredResultMultiRound)
        .tool(Greet)
        .tool(SlowCompute)
        .tool(FailingJob)
        .tool(ProtocolErrorJob)
        .tool(ConfirmDelete)
        .tool(MultiInput)
        .tool(TestToolWithTask)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port: u16 = match args.as_slice() {
        [flag, port] if flag == "--port" => port.parse()?,
        _ => return Err("usage: conformance_server --port N".into()),
    };
    let server = McpServer::builder(toolkit()?)
        .name("toolnexus-conformance")
        .task_after(TASK_AFTER)
        .task_only("failing_job")
        .task_only("test_tool_with_task")
        .task_poll_interval(Duration::from_millis(100))
        .build()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    // The suite is pointed at this URL; with `--port 0` it is the only way to learn it.
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let app = axum::Router::new().nest_service("/mcp", server.http_service());
    axum::serve(listener, app).await?;
    Ok(())
}
