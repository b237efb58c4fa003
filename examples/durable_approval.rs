//! A durable host: the run halts on the approval, the process exits, and a later process
//! resumes it with the answer.
//!
//! ```sh
//! cargo run --example durable_approval -- start          # prints `pending: <request id>`
//! cargo run --example durable_approval -- approve <id>   # or: decline <id>
//! ```
//! Halted runs are kept as JSON files in `TOOLNEXUS_STATE_DIR` (default: a `toolnexus-durable`
//! folder in the system's temporary directory), one per pending request.

mod support;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use toolnexus::testing::MockLlm;
use toolnexus::{
    pending, tool, Answer, LlmClient, Message, Request, RunResult, RunStatus, ToolResult, Toolkit,
};

/// Requests spend approval before proceeding
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

/// What a halted run needs to be resumed by another process.
#[derive(Serialize, Deserialize)]
struct HaltedRun {
    request: Request,
    messages: Vec<Message>,
}

fn state_dir() -> PathBuf {
    std::env::var_os("TOOLNEXUS_STATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("toolnexus-durable"))
}

/// Request ids become file names: accept only what a generated id can contain, so an id
/// from the command line can never name a path outside the state folder.
fn file_for(dir: &Path, id: &str) -> Option<PathBuf> {
    let safe = !id.is_empty()
        && id.len() <= 64
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    safe.then(|| dir.join(format!("{id}.json")))
}

/// Writes to a temporary file, then renames it into place: a crash leaves either the old
/// state or the new one, never half a file.
fn save(dir: &Path, halted: &HaltedRun) -> Result<PathBuf, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let path =
        file_for(dir, &halted.request.id).ok_or("the request id is not usable as a file name")?;
    let tmp = dir.join(format!(".{}.tmp", halted.request.id));
    std::fs::write(&tmp, serde_json::to_vec_pretty(halted)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// The client, and the embedded stub (kept alive as long as the client needs it).
async fn client() -> Result<(LlmClient, Option<MockLlm>), Box<dyn std::error::Error>> {
    let support::Endpoint { builder, stub } = support::endpoint(support::purchase_script).await?;
    // No `wait_for`: a suspension halts the run instead of waiting in this process.
    Ok((builder.build()?, stub))
}

/// Prints the outcome; a run that halted again is saved under its new request.
fn settle(dir: &Path, result: RunResult) -> Result<(), Box<dyn std::error::Error>> {
    match (result.status, result.pending) {
        (RunStatus::Pending, Some(request)) => {
            let path = save(
                dir,
                &HaltedRun {
                    request: request.clone(),
                    messages: result.messages,
                },
            )?;
            println!("{}", request.prompt);
            println!("saved to {}", path.display());
            println!("pending: {}", request.id);
        }
        (status, _) => {
            for call in &result.tool_calls {
                println!("{} -> {}", call.name, call.output);
            }
            println!("status: {status:?}");
            println!("final answer: {}", result.text);
        }
    }
    Ok(())
}

async fn start(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let (client, _endpoint) = client().await?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    settle(dir, result)
}

async fn resume(dir: &Path, id: &str, approve: bool) -> Result<(), Box<dyn std::error::Error>> {
    let path = file_for(dir, id).filter(|p| p.is_file()).ok_or_else(|| {
        format!(
            "no halted run waits for request `{id}` in {}",
            dir.display()
        )
    })?;
    let halted: HaltedRun = serde_json::from_slice(&std::fs::read(&path)?)?;
    let answer = if approve {
        Answer::ok(id)
    } else {
        Answer::decline(id, "declined")
    };
    let (client, _endpoint) = client().await?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
    let result = client
        .run_with_answer(halted.messages, &halted.request, answer, &tk)
        .await?;
    // The answer is spent only once the resumed run has gone through.
    std::fs::remove_file(&path)?;
    settle(dir, result)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = state_dir();
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["start"] => start(&dir).await,
        ["approve", id] => resume(&dir, id, true).await,
        ["decline", id] => resume(&dir, id, false).await,
        _ => Err(
            "usage: durable_approval start | approve <request id> | decline <request id>".into(),
        ),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
