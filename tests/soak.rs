//! A short memory soak: after a warm-up, hundreds more runs on one client must not keep
//! growing the process's resident memory. (`examples/soak.rs` is the long version, run by
//! hand, with the figures.)
//!
//! The mock records every request it receives, so it would grow by itself: it runs in a
//! child process — the soak example started as `soak serve`, which `cargo test` builds with
//! the other examples — and only the client lives in the measured process. This binary
//! holds no other test, so nothing else allocates while it measures. Resident memory is
//! read from `/proc`, so the test exists on Linux only.
#![cfg(target_os = "linux")]

use toolnexus_test_support::example_bin;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolnexus::{
    Answer, LlmClient, NativeTool, Request, RunStatus, Style, ToolContext, ToolResult, Toolkit,
};

const WARM_UP: usize = 300;
const MEASURED: usize = 600;
/// A leak of 1 KiB per run adds 600 kB over the measured runs (2 KiB leaked by every other
/// run was measured at 612 kB); a healthy client varies by about 12 kB.
const GROWTH_LIMIT_KB: i64 = 512;

fn resident_kb() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn toolkit() -> Toolkit {
    let schema = json!({"type": "object", "properties": {"item": {"type": "string"}}});
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
                Some(_) => ToolResult::ok(format!("bought {}", args["item"])),
                None => ToolResult::pending(Request::new("approval", "Buy it?")),
            }
        },
    );
    Toolkit::builder().tool(echo).tool(buy).build().unwrap()
}

#[tokio::test]
async fn no_memory_growth_over_hundreds_of_runs() {
    let mut child = Command::new(example_bin::path("soak"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let base_url = output
        .next()
        .expect("the mock server announces its URL")
        .unwrap();

    let client = LlmClient::builder()
        .base_url(base_url)
        .style(Style::OpenAi)
        .model("soak-model")
        .api_key("soak-key")
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = toolkit();
    let mut samples = Vec::new();
    for i in 0..WARM_UP + MEASURED {
        if i >= WARM_UP && (i - WARM_UP).is_multiple_of(100) {
            samples.push(resident_kb());
        }
        let verb = if i.is_multiple_of(2) { "buy" } else { "echo" };
        let result = client.run(format!("{verb} item-{i}"), &tk).await.unwrap();
        assert_eq!(result.status, RunStatus::Done);
    }
    samples.push(resident_kb());
    // Closing its input stops the mock; what it still prints is read to the end.
    drop(child.stdin.take());
    output.for_each(drop);
    child.wait().unwrap();

    let growth = samples[samples.len() - 1] - samples[0];
    assert!(
        growth < GROWTH_LIMIT_KB,
        "resident memory grew {growth} kB over {MEASURED} runs after warm-up: {samples:?} kB"
    );
}
