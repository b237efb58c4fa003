//! The Python SDK's agents (one process for the whole suite), the scripted model, and what
//! the remote agents were sent.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{LlmClientBuilder, Style, Toolkit};
use toolnexus_a2a::RemoteAgent;
use toolnexus_test_support::wait::within;

/// The Python with `a2a-sdk[http-server]` the suite runs the SDK's agents with.
pub fn python() -> String {
    toolnexus_test_support::sdk::python("'a2a-sdk[http-server]==1.3.0' uvicorn")
}

/// The process serving `tests/remote/agents.py`: the agents `shop`, `signin`, `broken`,
/// `shop-rest` (the shop over HTTP+JSON alone), and the slow shop's variants (`slow`
/// polled; `slow-stream`, `slow-stream-rest`, `slow-cut`, `slow-nosub` streaming).
pub struct Agents {
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
    // Its standard input: the script exits when this closes, with the test process.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

impl Agents {
    /// The base URL of the agent at `path` (its card is below it, at the well-known path).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// The port the agents serve on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The continuations the agents received for the remote task `task`, in order.
    pub fn continuations(&self, task: &str) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l["event"] == "continuation" && l["task"] == task)
            .cloned()
            .collect()
    }

    /// The methods the agent at `path` was called with, in order, each with the task it
    /// named (empty for a message that starts one).
    pub fn methods(&self, path: &str) -> Vec<(String, String)> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l["event"] == "method" && l["agent"] == path)
            .map(|l| {
                let field = |k: &str| l[k].as_str().unwrap_or_default().to_owned();
                (field("method"), field("task"))
            })
            .collect()
    }

    /// Waits briefly for `n` continuations of `task` (the agent logs after it answered).
    pub async fn await_continuations(&self, task: &str, n: usize) -> Vec<Value> {
        let seen = within(Duration::from_secs(2), || {
            let seen = self.continuations(task);
            async move { (seen.len() >= n).then_some(seen) }
        });
        seen.await.unwrap_or_else(|| self.continuations(task))
    }
}

/// The suite's agents, started on first use.
pub fn agents() -> &'static Agents {
    static AGENTS: OnceLock<Agents> = OnceLock::new();
    AGENTS.get_or_init(start)
}

fn start() -> Agents {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/remote/agents.py");
    let python = python();
    let mut child = Command::new(&python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {python} {script}: {e}"));
    let stdin = child.stdin.take().expect("a piped stdin");
    let stdout = child.stdout.take().expect("a piped stdout");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (port_tx, port_rx) = mpsc::channel();
    let kept = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if value["event"] == "serving" {
                let _ = port_tx.send(value["port"].as_u64());
            }
            kept.lock().unwrap().push(value);
        }
    });
    let port = match port_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Some(port)) => u16::try_from(port).expect("a port"),
        _ => {
            let status = child.try_wait().ok().flatten();
            panic!(
                "the A2A SDK's agents did not start (exit: {status:?}); see the stderr above \
                 and install `a2a-sdk[http-server]==1.3.0` and `uvicorn` into {python}"
            )
        }
    };
    Agents {
        port,
        lines,
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    }
}

/// The remote agent at `path` of the SDK's agents.
pub async fn remote(path: &str) -> RemoteAgent {
    RemoteAgent::connect(agents().url(path))
        .await
        .unwrap_or_else(|e| panic!("the SDK's agent `{path}` connects: {e}"))
}

pub fn toolkit(agent: RemoteAgent) -> Toolkit {
    Toolkit::builder().tool(agent).build().unwrap()
}

/// A scripted model that sends `tool` the message `message`, then answers
/// `remote says: <the tool's result>`.
pub async fn model(tool: &'static str, message: &'static str) -> MockLlm {
    MockLlm::with_fn(move |req| match req.tool_results().last() {
        Some((_, output)) => Reply::text(format!("remote says: {output}")),
        None => Reply::tool_call("call_1", tool, json!({"message": message})),
    })
    .await
    .unwrap()
}

pub fn client(mock: &MockLlm) -> LlmClientBuilder {
    toolnexus_test_support::fixtures::on(mock, Style::OpenAi)
}

/// The remote task a request of a `RemoteAgent` waits on.
pub fn task_of(request: &toolnexus::Request) -> String {
    request.data.as_ref().unwrap()["a2a"]["taskId"]
        .as_str()
        .expect("the request names the remote task")
        .to_owned()
}
