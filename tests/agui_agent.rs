//! The `agui_agent` example as a user runs it: started on a free port, driven by the
//! official AG-UI client (`@ag-ui/client`'s HttpAgent in Node, `TOOLNEXUS_TEST_AGUI`, set
//! up by scripts/test.sh) through a purchase approved, a sign-in, and a purchase declined
//! after the agent was restarted.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};
use toolnexus_test_support::example_bin::Serving;

/// The example on a port of its own, with its waits in `db`, until dropped.
fn start(db: &str) -> Serving {
    Serving::start(
        "agui_agent",
        &["--port", "0", "--db", db],
        "AG-UI agent at ",
    )
}

/// The AG-UI crate's driver of the official client, one step at a time.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Client {
    fn start() -> Client {
        let dir = PathBuf::from(std::env::var("TOOLNEXUS_TEST_AGUI").unwrap_or_else(|_| {
            panic!(
                "TOOLNEXUS_TEST_AGUI is not set: run the tests with scripts/test.sh (it \
                 installs @ag-ui/client and Node 22 into target/agui)"
            )
        }));
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/toolnexus-agui/tests/agui_driver.cjs"
        );
        let mut child = Command::new(dir.join("node_modules/.bin/node"))
            .arg(script)
            .env("NODE_PATH", dir.join("node_modules"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the client's Node starts");
        let stdin = child.stdin.take().expect("its standard input");
        let stdout = BufReader::new(child.stdout.take().expect("its standard output"));
        Client {
            child,
            stdin,
            stdout,
        }
    }

    fn step(&mut self, step: Value) -> Value {
        writeln!(self.stdin, "{step}").expect("the step is written");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the driver answers");
        let result: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the driver printed no JSON ({e}): {line:?}"));
        assert_eq!(result["warnings"], json!([]), "nothing stripped: {result}");
        result
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn last(result: &Value) -> &Value {
    result["events"]
        .as_array()
        .and_then(|e| e.last())
        .unwrap_or_else(|| panic!("events: {result}"))
}

fn text(result: &Value) -> String {
    result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .filter_map(|e| e["delta"].as_str())
        .collect()
}

fn tool_result(result: &Value) -> String {
    result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["type"] == "TOOL_CALL_RESULT")
        .and_then(|e| e["content"].as_str())
        .unwrap_or_else(|| panic!("a tool's result: {result}"))
        .to_owned()
}

#[test]
fn the_agui_agent_interrupts_for_people_and_a_restarted_one_resumes() {
    let file: PathBuf = std::env::temp_dir().join(format!("agui-agent-{}.db", std::process::id()));
    let db = format!("sqlite://{}", file.display());
    let agent = start(&db);
    let mut client = Client::start();
    let at = |step: Value, url: &str| {
        let mut step = step;
        step["url"] = json!(url);
        step
    };
    let yes = json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]);

    let asked = client.step(at(json!({"agent": "a", "say": "buy a gpu"}), &agent.url));
    assert_eq!(
        last(&asked)["outcome"]["interrupts"][0]["message"],
        "Approve purchase of gpu?"
    );
    let bought = client.step(at(json!({"agent": "a", "resume": yes}), &agent.url));
    let result = tool_result(&bought);
    let order = result.split(':').next().unwrap_or_default();
    assert!(order.starts_with("ORDER-"), "{result}");
    assert!(text(&bought).contains(order), "{bought}");

    let login = client.step(at(json!({"agent": "b", "say": "log me in"}), &agent.url));
    let interrupt = &last(&login)["outcome"]["interrupts"][0];
    assert_eq!(interrupt["metadata"]["url"], "https://shop.example/login");
    let signed = client.step(at(json!({"agent": "b", "resume": yes}), &agent.url));
    assert!(text(&signed).ends_with("signed in."), "{signed}");

    let asked = client.step(at(json!({"agent": "c", "say": "buy a cpu"}), &agent.url));
    assert_eq!(last(&asked)["outcome"]["type"], "interrupt");
    drop(agent);
    let restarted = start(&db);
    let no = json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": false}}]);
    let declined = client.step(at(json!({"agent": "c", "resume": no}), &restarted.url));
    assert_eq!(last(&declined)["outcome"]["type"], "success", "{declined}");
    assert!(text(&declined).contains("declined"), "{declined}");
    assert!(!text(&declined).contains("ORDER-"), "{declined}");
    drop(restarted);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
