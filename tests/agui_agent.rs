//! The `agui_agent` example as a user runs it: started on a free port, driven by the
//! official AG-UI client (`@ag-ui/client`'s HttpAgent in Node, `TOOLNEXUS_TEST_AGUI`, set
//! up by scripts/test.sh) through a purchase approved, a sign-in, and a purchase declined
//! after the agent was restarted; and, started with `--tokens` (or `--oidc`, a real OpenID
//! provider's tokens) and `--approvers`, through callers known by their tokens, only an
//! approver's resume buying anything.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};
use toolnexus_test_support::example_bin::Serving;

/// The example on a port of its own, with its waits in `db`, until dropped.
fn start(db: &str) -> Serving {
    start_with(db, &[])
}

/// The example as [`start`] does, with `extra` arguments.
fn start_with(db: &str, extra: &[&str]) -> Serving {
    let mut args = vec!["--port", "0", "--db", db];
    args.extend_from_slice(extra);
    Serving::start("agui_agent", &args, "AG-UI agent at ")
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
        let result = self.step_warned(step);
        assert_eq!(result["warnings"], json!([]), "nothing stripped: {result}");
        result
    }

    /// A step whose run may fail as a whole (an HTTP error), which the client also logs.
    fn step_warned(&mut self, step: Value) -> Value {
        writeln!(self.stdin, "{step}").expect("the step is written");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the driver answers");
        let result: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the driver printed no JSON ({e}): {line:?}"));
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

#[test]
fn only_an_approver_known_by_a_token_buys_through_the_agui_agent() {
    let base = std::env::temp_dir().join(format!("agui-agent-ids-{}", std::process::id()));
    let tokens = base.with_extension("tokens");
    std::fs::write(
        &tokens,
        "tok-alice alice@shop.example finance\ntok-mallory mallory@partner.example\n",
    )
    .expect("the tokens file is written");
    let file = base.with_extension("db");
    let db = format!("sqlite://{}", file.display());
    let tokens_arg = tokens.display().to_string();
    let agent = start_with(&db, &["--tokens", &tokens_arg, "--approvers", "finance"]);
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});
    let thread = format!("shared-{}", std::process::id());

    // No token: refused before any stream.
    let anonymous =
        client.step_warned(json!({"agent": "anon", "url": agent.url, "say": "buy a gpu"}));
    let error = anonymous["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("HTTP 401"), "{anonymous}");
    assert_eq!(anonymous["events"], json!([]), "{anonymous}");

    // Mallory asks; the purchase waits for an approver, and she is shown no call behind it.
    let asked = client.step(json!({
        "agent": "mallory", "url": agent.url, "threadId": thread,
        "headers": bearer("tok-mallory"), "say": "buy a gpu",
    }));
    let interrupt = last(&asked)["outcome"]["interrupts"][0].clone();
    assert_eq!(interrupt["message"], "Approve purchase of gpu?", "{asked}");
    assert_eq!(interrupt["metadata"].get("tool"), None, "{interrupt}");
    assert_eq!(interrupt["metadata"].get("args"), None, "{interrupt}");
    assert_eq!(
        interrupt["responseSchema"]["properties"].get("editedArgs"),
        None,
        "{interrupt}"
    );
    assert!(!asked.to_string().contains("idempotency"), "{asked}");

    // Her own approval is refused and buys nothing; the interrupt stays open.
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}}]);
    let refused = client.step(json!({
        "agent": "mallory", "url": agent.url, "resume": approve,
    }));
    assert_eq!(last(&refused)["type"], "RUN_ERROR", "{refused}");
    assert_eq!(last(&refused)["code"], "not_allowed", "{refused}");
    assert!(!refused.to_string().contains("ORDER-"), "{refused}");

    // Alice, an approver, answers the same interrupt on the same thread: it is bought. The
    // thread is Mallory's: Alice learns how the run ended, not what it said.
    let bought = client.step(json!({
        "agent": "alice", "url": agent.url, "threadId": thread,
        "headers": bearer("tok-alice"), "resume": approve,
    }));
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert!(!bought.to_string().contains("ORDER-"), "{bought}");
    assert!(!bought.to_string().contains("idempotency"), "{bought}");
    drop(agent);

    // The audit trail names alice as the one who answered; the run bought once.
    let id = interrupt["id"]
        .as_str()
        .expect("the interrupt's id")
        .to_owned();
    let (answered_by, said) = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let inbox = toolnexus_inbox::Inbox::open(&db)
                .await
                .expect("the inbox opens");
            let parked = inbox.get(&id).await.expect("the request reads");
            let parked = parked.expect("the request is kept");
            (parked.answered_by, parked.result.map(|r| r.text))
        });
    assert_eq!(answered_by.as_deref(), Some("alice@shop.example"));
    let said = said.unwrap_or_default();
    assert!(
        said.contains("ORDER-1"),
        "one order, on Mallory's thread: {said}"
    );
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let _ = std::fs::remove_file(&tokens);
}

/// With `--oidc`, `--scope agent:call` and `--approvers finance`: the partner's
/// client-credentials token starts a purchase that waits, and cannot approve it; alice's
/// (finance) approves it; no token, or an expired one, is refused with 401 and a token
/// without the scope with 403, before any stream.
#[test]
fn with_oidc_the_providers_tokens_sign_in_and_only_finance_buys() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let provider = runtime.block_on(toolnexus_test_support::oidc::Provider::start());
    let issuer = provider.issuer().to_owned();
    let file = std::env::temp_dir().join(format!("agui-agent-oidc-{}.db", std::process::id()));
    let db = format!("sqlite://{}", file.display());
    let args = [
        "--oidc",
        &issuer,
        "--person-claim",
        "email",
        "--groups-claim",
        "groups",
        "--scope",
        "agent:call",
        "--approvers",
        "finance",
    ];
    let agent = start_with(&db, &args);
    let url = agent.url.as_str();
    let token =
        |client: &str, scope: &str| runtime.block_on(provider.token(client, url, Some(scope)));
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});
    let mut client = Client::start();

    let expired = runtime.block_on(provider.expired_token("alice", url));
    let unscoped = token("alice", "inbox:read");
    for (who, headers, status) in [
        ("nobody", json!({}), "HTTP 401"),
        ("expired", bearer(&expired), "HTTP 401"),
        ("unscoped", bearer(&unscoped), "HTTP 403"),
    ] {
        let refused = client
            .step_warned(json!({"agent": who, "url": url, "headers": headers, "say": "buy a gpu"}));
        let error = refused["error"].as_str().unwrap_or_default();
        assert!(error.starts_with(status), "{who}: {refused}");
        assert_eq!(refused["events"], json!([]), "{refused}");
    }

    let thread = format!("oidc-{}", std::process::id());
    let asked = client.step(json!({
        "agent": "partner", "url": url, "threadId": thread,
        "headers": bearer(&token("partner", "agent:call")), "say": "buy a gpu",
    }));
    let interrupt = last(&asked)["outcome"]["interrupts"][0].clone();
    assert_eq!(interrupt["message"], "Approve purchase of gpu?", "{asked}");
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}}]);
    let refused = client.step(json!({"agent": "partner", "url": url, "resume": approve}));
    assert_eq!(last(&refused)["code"], "not_allowed", "{refused}");
    let bought = client.step(json!({
        "agent": "alice", "url": url, "threadId": thread,
        "headers": bearer(&token("alice", "agent:call")), "resume": approve,
    }));
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    drop(agent);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
