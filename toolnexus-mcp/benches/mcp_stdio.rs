//! What serving and consuming over MCP cost, measured over real stdio pipes.
//!
//! 1. One `tools/call` round trip to a child process, our `McpServer` against the same
//!    tool written with rmcp's own `#[tool]` macros; same client, same transport.
//! 2. One agent run against the scripted LLM (`toolnexus::testing::MockLlm`): two turns
//!    and one tool call, the tool being an MCP server's (a child process) or native.
//!
//! ```sh
//! cargo bench -p toolnexus-mcp --bench mcp_stdio
//! ```
//! The binary re-runs itself as the servers (`serve-ours`, `serve-rmcp`).

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{LlmClient, Toolkit};
use toolnexus_mcp::{McpServer, McpTools};

/// Adds two integers
#[toolnexus::tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The same tool, the way rmcp's own macros write it.
#[derive(Clone)]
struct RmcpAdder;

#[tool_router]
impl RmcpAdder {
    #[tool(description = "Adds two integers")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for RmcpAdder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn ours() -> Toolkit {
    Toolkit::builder().tool(Add).build().expect("one tool")
}

fn myself(mode: &str) -> tokio::process::Command {
    let exe = std::env::current_exe().expect("the bench binary has a path");
    let mut command = tokio::process::Command::new(exe);
    command.arg(mode);
    command
}

/// Prints p50 and p95 of each sample, in microseconds; returns the p50s.
fn report<'a>(labels: impl Iterator<Item = &'a str>, samples: Vec<Vec<Duration>>) -> Vec<f64> {
    labels
        .zip(samples)
        .map(|(label, mut sample)| {
            sample.sort();
            let at = |q: f64| sample[((sample.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
            let (p50, p95) = (at(0.50), at(0.95));
            println!("  {label:<22} p50 {p50:7.1} µs   p95 {p95:7.1} µs");
            p50
        })
        .collect()
}

const WARMUP: usize = 300;
const CALLS: usize = 4000;

async fn tool_calls() {
    type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;
    let mut clients: Vec<(&str, Client)> = Vec::new();
    for (label, mode) in [
        ("toolnexus McpServer", "serve-ours"),
        ("rmcp #[tool]", "serve-rmcp"),
    ] {
        let transport = rmcp::transport::TokioChildProcess::new(myself(mode)).expect("spawn");
        let client = ().serve(transport).await.expect("handshake");
        clients.push((label, client));
    }
    let params = CallToolRequestParams::new("add").with_arguments(
        json!({"a": 2, "b": 3})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); clients.len()];
    for (_, client) in &clients {
        for _ in 0..WARMUP {
            client.call_tool(params.clone()).await.expect("call");
        }
    }
    // One call to each server in turn, the order flipping every time, so that the
    // machine's changing load hits both alike.
    for n in 0..CALLS {
        for k in 0..clients.len() {
            let i = if n % 2 == 0 { k } else { clients.len() - 1 - k };
            let start = Instant::now();
            let result = clients[i].1.call_tool(params.clone()).await.expect("call");
            samples[i].push(start.elapsed());
            assert_eq!(
                result.content[0].as_text().map(|t| t.text.as_str()),
                Some("5")
            );
        }
    }
    println!("one tools/call over stdio ({CALLS} calls each):");
    let p50s = report(clients.iter().map(|(label, _)| *label), samples);
    println!("  ours / rmcp at p50: {:.3}×", p50s[0] / p50s[1]);
}

fn script(req: &RecordedRequest) -> Reply {
    let last = req.messages().last().cloned().unwrap_or_default();
    if last["role"] == "tool" {
        Reply::text(format!(
            "the sum is {}",
            last["content"].as_str().unwrap_or("?")
        ))
    } else {
        let name = if req.body["tools"][0]["function"]["name"] == "add" {
            "add"
        } else {
            "calc__add"
        };
        Reply::tool_call("call_1", name, json!({"a": 2, "b": 3}))
    }
}

async fn agent_runs() {
    let mock = MockLlm::with_fn(script)
        .await
        .expect("the scripted LLM starts");
    let client = LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("k")
        .build()
        .expect("client");
    let mcp = McpTools::builder()
        .name("calc")
        .spawn(myself("serve-ours"))
        .await
        .expect("the MCP server starts");
    let kits = [
        ("native tool", ours()),
        (
            "MCP tool (stdio)",
            Toolkit::builder().tools(mcp).build().expect("tools"),
        ),
    ];
    let runs = 1500;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); kits.len()];
    for (_, tk) in &kits {
        for _ in 0..100 {
            client.run("add 2 and 3", tk).await.expect("run");
        }
    }
    for n in 0..runs {
        for k in 0..kits.len() {
            let i = if n % 2 == 0 { k } else { kits.len() - 1 - k };
            let start = Instant::now();
            let result = client.run("add 2 and 3", &kits[i].1).await.expect("run");
            samples[i].push(start.elapsed());
            assert_eq!(result.text, "the sum is 5");
        }
    }
    println!("one agent run, two LLM turns and one tool call ({runs} runs each):");
    let p50s = report(kits.iter().map(|(label, _)| *label), samples);
    println!("  MCP tool costs {:.0} µs more at p50", p50s[1] - p50s[0]);
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "serve-ours") {
        McpServer::new(ours()).serve_stdio().await.expect("serve");
    } else if args.iter().any(|a| a == "serve-rmcp") {
        let running = RmcpAdder
            .serve(rmcp::transport::stdio())
            .await
            .expect("serve");
        let _ = running.waiting().await;
    } else if args.iter().any(|a| a == "--bench") || args.is_empty() {
        tool_calls().await;
        agent_runs().await;
    }
}
