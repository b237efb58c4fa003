//! Soak: many runs on one shared client against the scripted model, sampling this
//! process's resident memory (`VmRSS` in `/proc/self/status`) every 1,000 runs. Memory that
//! keeps growing after warm-up means the client leaks per run.
//!
//! Run it by hand (it is not part of the test suite):
//!
//! ```text
//! cargo run --release --example soak -- [RUNS] [openai|anthropic] [CONCURRENCY]
//! ```
//!
//! Defaults: 10000 runs, openai, 8 runs in flight. Each run is two model calls: half of the
//! runs call `echo`, the other half call `buy`, which suspends and is answered through
//! `wait_for`.
//!
//! The mock records every request it receives, so it would grow by itself: it runs in a
//! child process (this same program started as `soak serve`), and the figures are the
//! client's alone.

mod failure;
use failure::Failure;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Instant;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, LlmClient, NativeTool, Request, RunStatus, Style, ToolContext, ToolResult, Toolkit,
};

const SAMPLE_EVERY: usize = 1000;

fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if args.first().map(String::as_str) == Some("serve") {
        return Ok(runtime.block_on(serve())?);
    }
    let runs = args.first().map_or(Ok(10_000), |n| n.parse())?;
    let style = match args.get(1).map(String::as_str) {
        Some("anthropic") => Style::Anthropic,
        _ => Style::OpenAi,
    };
    let concurrency = args.get(2).map_or(Ok(8), |n| n.parse())?;
    Ok(runtime.block_on(soak(runs, style, concurrency))?)
}

/// The child: a mock that calls the tool the prompt names, then echoes the tool's output.
/// It prints its base URL and serves until its standard input closes.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let mock = MockLlm::with_fn(|req| {
        let last = req.messages().last().cloned().unwrap_or(Value::Null);
        let tool_output = if last["role"] == "tool" {
            last["content"].as_str().map(str::to_owned)
        } else {
            last["content"].as_array().and_then(|blocks| {
                blocks
                    .iter()
                    .find(|b| b["type"] == "tool_result")
                    .and_then(|b| b["content"].as_str().map(str::to_owned))
            })
        };
        match tool_output {
            Some(output) => Reply::text(format!("done: {output}")),
            None => {
                let prompt = last["content"].as_str().unwrap_or_default();
                let (tool, item) = prompt.split_once(' ').unwrap_or(("echo", prompt));
                Reply::tool_call("call_1", tool, json!({"item": item}))
            }
        }
    })
    .await?;
    println!("{}", mock.base_url());
    tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await??;
    Ok(())
}

fn toolkit() -> Result<Toolkit, toolnexus::ToolkitError> {
    let schema =
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]});
    let echo = NativeTool::of(
        "echo",
        "Echoes an item",
        schema.clone(),
        |args: Value, _ctx: ToolContext| async move { format!("echo {}", args["item"]) },
    );
    let buy = NativeTool::of(
        "buy",
        "Buys an item once approved",
        schema,
        |args: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(answer) if answer.ok => ToolResult::ok(format!("bought {}", args["item"])),
                Some(_) => ToolResult::error("declined"),
                None => ToolResult::pending(Request::new("approval", "Buy it?")),
            }
        },
    );
    Toolkit::builder().tool(echo).tool(buy).build()
}

async fn soak(
    runs: usize,
    style: Style,
    concurrency: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut base_url = String::new();
    let stdout = child.stdout.take().ok_or("the mock's stdout")?;
    BufReader::new(stdout).read_line(&mut base_url)?;

    let client = LlmClient::builder()
        .base_url(base_url.trim())
        .style(style)
        .model("soak-model")
        .api_key("soak-key")
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()?;
    let tk = toolkit()?;

    println!(
        "{runs} runs, {style:?}, {concurrency} in flight; mock in child pid {}",
        child.id()
    );
    println!(
        "{:>7} {:>10} {:>10} {:>9}",
        "runs", "VmRSS kB", "VmHWM kB", "secs"
    );
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut finished: usize = 0;
    let mut results = futures::stream::iter(0..runs)
        .map(|i| {
            let (client, tk) = (client.clone(), tk.clone());
            async move {
                let verb = if i.is_multiple_of(2) { "buy" } else { "echo" };
                client.run(format!("{verb} item-{i}"), &tk).await
            }
        })
        .buffer_unordered(concurrency);
    while let Some(result) = results.next().await {
        let result = result?;
        if result.status != RunStatus::Done || !result.text.starts_with("done: ") {
            return Err(format!("unexpected run result: {result:?}").into());
        }
        finished += 1;
        if finished.is_multiple_of(SAMPLE_EVERY) || finished == runs {
            let (rss, hwm) = memory()?;
            println!(
                "{finished:>7} {rss:>10} {hwm:>10} {:>9.2}",
                started.elapsed().as_secs_f64()
            );
            samples.push(rss);
        }
    }
    drop(child.stdin.take());
    child.wait()?;

    if let (Some(first), Some(last)) = (samples.first(), samples.last()) {
        let growth = *last as i64 - *first as i64;
        println!(
            "growth after the first {SAMPLE_EVERY} runs: {growth} kB ({:.1} bytes per run)",
            growth as f64 * 1024.0 / (runs.saturating_sub(SAMPLE_EVERY).max(1)) as f64
        );
    }
    Ok(())
}

/// `VmRSS` and `VmHWM` of this process, in kB.
fn memory() -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let field = |name: &str| -> Result<u64, Box<dyn std::error::Error>> {
        let line = status
            .lines()
            .find(|l| l.starts_with(name))
            .ok_or_else(|| format!("no {name} in /proc/self/status"))?;
        let kb = line
            .split_whitespace()
            .nth(1)
            .ok_or_else(|| format!("malformed {name} line"))?;
        Ok(kb.parse()?)
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}
