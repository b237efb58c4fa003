//! The agent loop's floor: a hand-written client on raw reqwest and `serde_json::Value`,
//! the same two scenarios as `bench_loop`'s clients, against `bench_loop`'s scripted
//! endpoint (`bench_loop mock` prints its URL).
//!
//! ```sh
//! bench_floor run floor weather 300 --url URL    # p50/p95 wall time and peak RSS
//! bench_floor inflight floor 1000 --url URL      # peak RSS with N weather runs at once
//! ```
//!
//! One run is two round trips. `weather`: turn 1 asks for `get_weather` and `add`, turn 2
//! answers in text. `approve`: turn 1 asks for `approve_purchase`, which parks, is answered
//! and re-runs, as the loop's suspension does.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

const MODEL: &str = "gpt-4o-mini";
const KEY: &str = "bench-key";
const WARMUP: usize = 20;
const PROMPT: &str = "What is the weather in Paris, and what is 2 + 2?";
const USAGE: &str = "usage: bench_floor run floor <weather|approve> <N> --url URL\n       \
                     bench_floor inflight floor <N> --url URL";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = start(&args) {
        eprintln!("bench_floor: {e}");
        std::process::exit(1);
    }
}

fn start(args: &[String]) -> Result<(), String> {
    let (mode, scenario, runs, url) = match args {
        [mode, client, scenario, runs, flag, url]
            if mode == "run" && client == "floor" && flag == "--url" =>
        {
            (mode, scenario.as_str(), runs, url)
        }
        [mode, client, runs, flag, url]
            if mode == "inflight" && client == "floor" && flag == "--url" =>
        {
            (mode, "weather", runs, url)
        }
        _ => return Err(USAGE.into()),
    };
    let runs: usize = runs.parse().map_err(|_| USAGE.to_owned())?;
    let approve = match scenario {
        "weather" => false,
        "approve" => true,
        _ => return Err(USAGE.into()),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let floor = Floor::new(url, approve).map_err(|e| e.to_string())?;
    if mode == "inflight" {
        return rt.block_on(in_flight(&floor, runs));
    }
    let mut times = rt.block_on(floor.measure(runs))?;
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{:<15} {scenario:<8} {:>10.3} {:>10.3} {:>12.1}",
        "floor",
        at(0.5),
        at(0.95),
        peak_kb() as f64 / 1024.0
    );
    Ok(())
}

/// `runs` weather runs at once on one client, after one alone; prints the process's peak
/// resident memory in kB, which the caller compares across run counts.
async fn in_flight(floor: &Floor, runs: usize) -> Result<(), String> {
    floor.run(PROMPT).await?;
    let all = futures::future::join_all((0..runs).map(|_| floor.run(PROMPT))).await;
    let done = all
        .iter()
        .filter(|t| t.as_ref().is_ok_and(|t| t.starts_with("Done")))
        .count();
    if done != runs {
        return Err(format!("{done} of {runs} runs finished"));
    }
    println!("floor {runs} in flight: peak RSS {} kB", peak_kb());
    Ok(())
}

/// `VmHWM` from `/proc/self/status`: the process's peak resident memory, in kB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// What a careful engineer writes by hand: one reqwest client, the tool declarations built
/// once, `serde_json::Value` for everything on the wire.
struct Floor {
    http: reqwest::Client,
    url: String,
    tools: Value,
}

impl Floor {
    fn new(base: &str, approve: bool) -> Result<Self, reqwest::Error> {
        let tools = if approve {
            json!([{"type": "function", "function": {"name": "approve_purchase", "description": "Asks a person to approve buying an item",
                "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}}}])
        } else {
            json!([
                {"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
                {"type": "function", "function": {"name": "add", "description": "Adds two integers",
                    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
            ])
        };
        Ok(Floor {
            http: reqwest::Client::builder().build()?,
            url: format!("{base}/chat/completions"),
            tools,
        })
    }

    /// Times `runs` runs after a warm-up; each must end with the final text.
    async fn measure(&self, runs: usize) -> Result<Vec<Duration>, String> {
        for _ in 0..WARMUP {
            self.run(PROMPT).await?;
        }
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let text = self.run(PROMPT).await?;
            times.push(start.elapsed());
            if !text.starts_with("Done") {
                return Err(format!("unexpected final text: {text}"));
            }
        }
        Ok(times)
    }

    async fn run(&self, prompt: &str) -> Result<String, String> {
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        for _ in 0..10 {
            let body = json!({"model": MODEL, "messages": messages, "tools": self.tools});
            let reply: Value = self
                .http
                .post(&self.url)
                .bearer_auth(KEY)
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json()
                .await
                .map_err(|e| e.to_string())?;
            let message = reply["choices"][0]["message"].clone();
            let calls = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if calls.is_empty() {
                return Ok(message["content"].as_str().unwrap_or_default().to_owned());
            }
            messages.push(message);
            for call in calls {
                let name = call["function"]["name"].as_str().unwrap_or_default();
                let args: Value =
                    serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                        .map_err(|e| e.to_string())?;
                let output = call_tool(name, &args).await;
                messages
                    .push(json!({"role": "tool", "tool_call_id": call["id"], "content": output}));
            }
        }
        Err("too many turns".into())
    }
}

async fn call_tool(name: &str, args: &Value) -> String {
    match name {
        "get_weather" => format!(
            "21°C and sunny in {}",
            args["city"].as_str().unwrap_or_default()
        ),
        "add" => (args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string(),
        "approve_purchase" => {
            let item = args["item"].as_str().unwrap_or_default();
            // The same suspension protocol, by hand: park, ask, re-run once with the answer.
            let request = json!({"id": request_id(), "kind": "approval", "prompt": format!("Approve purchase of {item}?")});
            let answer = wait_for(&request).await;
            if answer["ok"] == true {
                format!("approved: {item}")
            } else {
                "declined".to_owned()
            }
        }
        other => format!("unknown tool {other}"),
    }
}

async fn wait_for(request: &Value) -> Value {
    json!({"id": request["id"], "ok": true})
}

fn request_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("req-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
