//! The `a2a_agent` example as a user runs it: started on a free port, driven by the
//! official Python `a2a-sdk` client (`TOOLNEXUS_TEST_PYTHON`, set up by scripts/test.sh)
//! through a purchase approved, one declined after the agent was restarted, and a sign-in.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus_test_support::example_bin::{self, Serving};

/// The example on a port of its own, with its waits in `db`, until dropped.
fn start(db: &str) -> Serving {
    Serving::start("a2a_agent", &["--port", "0", "--db", db], "A2A agent at ")
}

/// What the driver needs of the Python the test command set up.
const A2A_SDK: &str = "'a2a-sdk[http-server]==1.3.0'";

/// The A2A crate's driver of the official client, run on `steps`.
fn drive(url: &str, steps: Value) -> Vec<Value> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/toolnexus-a2a/tests/a2a_driver.py"
    );
    toolnexus_test_support::sdk::drive(A2A_SDK, script, &[url], &steps)
}

fn state(result: &Value) -> &str {
    result["task"]["status"]["state"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {result}"))
}

fn text(result: &Value) -> String {
    let parts = result["task"]["status"]["message"]["parts"]
        .as_array()
        .cloned();
    parts
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_a2a_agent_waits_for_people_and_a_restarted_one_continues() {
    let file: PathBuf = std::env::temp_dir().join(format!("a2a-agent-{}.db", std::process::id()));
    let db = format!("sqlite://{}", file.display());
    let agent = start(&db);
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "approve", "task": "$task", "context": "$context"}},
            {"get": {"task": "$task"}},
            {"send": {"text": "log me in"}},
            {"send": {"text": "done", "task": "$task1"}},
            {"send": {"text": "buy a cpu"}},
        ]),
    );
    assert_eq!(state(&out[0]), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(text(&out[0]), "Approve purchase of gpu?");
    assert_eq!(state(&out[1]), "TASK_STATE_COMPLETED");
    let said = text(&out[1]);
    let order = said
        .split_whitespace()
        .find(|w| w.starts_with("ORDER-"))
        .unwrap_or_else(|| panic!("an order number in {said:?}"))
        .trim_end_matches('.');
    let history = out[2]["task"]["history"].to_string();
    assert!(
        history.contains(&format!("{order}: bought gpu")),
        "the tool's result carries {order}: {history}"
    );

    assert_eq!(state(&out[3]), "TASK_STATE_AUTH_REQUIRED");
    let urls: Vec<&str> = out[3]["task"]["status"]["message"]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter_map(|p| p["url"].as_str())
        .collect();
    assert_eq!(urls, ["https://shop.example/login"]);
    assert_eq!(state(&out[4]), "TASK_STATE_COMPLETED");
    assert!(text(&out[4]).ends_with("signed in."), "{}", out[4]);

    assert_eq!(state(&out[5]), "TASK_STATE_INPUT_REQUIRED");
    let waiting = out[5]["task"]["id"].clone();
    drop(agent);
    let restarted = start(&db);
    let out = drive(
        &restarted.url,
        json!([{"send": {"text": "decline", "task": waiting}}]),
    );
    assert_eq!(state(&out[0]), "TASK_STATE_COMPLETED", "{}", out[0]);
    assert!(text(&out[0]).contains("declined"), "{}", out[0]);
    assert!(!text(&out[0]).contains("ORDER-"));
    drop(restarted);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// The two examples together: `a2a_delegate` calls `a2a_agent` over A2A, the
/// agent's question is answered at the delegate's side, and the delegate's final text
/// repeats the agent's answer with its order number.
#[test]
fn a2a_delegate_buys_through_the_a2a_agent_and_repeats_its_answer() {
    let file: PathBuf =
        std::env::temp_dir().join(format!("a2a-delegate-{}.db", std::process::id()));
    let agent = start(&format!("sqlite://{}", file.display()));
    let delegate = |answer: &str| {
        let out = example_bin::command("a2a_delegate")
            .args(["--remote", &agent.url])
            .env("TOOLNEXUS_AUTO_ANSWER", answer)
            .stdin(Stdio::null())
            .output()
            .expect("the delegate starts");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let approved = delegate("approve");
    assert!(
        approved.contains("asks (approval): Approve purchase of gpu?"),
        "{approved}"
    );
    let result = approved
        .lines()
        .find_map(|l| l.strip_prefix("the remote agent's result: "))
        .unwrap_or_else(|| panic!("the result is shown: {approved}"));
    assert!(result.contains("ORDER-"), "{approved}");
    assert!(
        approved.contains(&format!(
            "final answer: The remote agent answered: {result}"
        )),
        "{approved}"
    );
    let declined = delegate("decline");
    assert!(
        declined.contains("the person answered: decline"),
        "{declined}"
    );
    assert!(
        declined.contains("final answer: The purchase was declined"),
        "{declined}"
    );
    assert!(!declined.contains("ORDER-"), "{declined}");
    drop(agent);
    let _ = std::fs::remove_file(&file);
}

/// The request `raw` (an HTTP/1.1 request without its `Host`) sent to the agent at `url`,
/// and the response's head, read until the connection closes.
fn raw_http(url: &str, raw: &str) -> String {
    use std::io::Read;
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&host).expect("the agent takes connections");
    let request = raw.replacen(
        "\r\n",
        &format!("\r\nHost: {host}\r\nConnection: close\r\n"),
        1,
    );
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("the response is read");
    response
}

/// With `--tokens` and `--approvers finance`: a caller without a token is refused with
/// 401, a stranger finds no task, a partner may ask for a purchase but not approve it, a
/// member of finance approves
/// the same task, the inbox's audit trail names her, and the partner's history is the
/// conversation (her messages with their ids, the agent's replies), not the tool calls.
#[test]
fn with_tokens_only_an_approver_approves_and_a_partner_sees_the_conversation() {
    let dir = std::env::temp_dir().join(format!("a2a-agent-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory of its own");
    let tokens = dir.join("tokens.txt");
    std::fs::write(
        &tokens,
        "tok-alice alice@shop.example finance\ntok-mallory mallory@partner.example\n\
         tok-eve eve@elsewhere.example\n",
    )
    .expect("the tokens are written");
    let file = dir.join("inbox.db");
    let db = format!("sqlite://{}", file.display());
    let tokens_arg = tokens.display().to_string();
    let agent = Serving::start(
        "a2a_agent",
        &[
            "--port",
            "0",
            "--db",
            &db,
            "--tokens",
            &tokens_arg,
            "--approvers",
            "finance",
        ],
        "A2A agent at ",
    );

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#;
    let anonymous = raw_http(
        &agent.url,
        &format!(
            "POST / HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(anonymous.starts_with("HTTP/1.1 401"), "{anonymous}");
    assert!(
        anonymous
            .to_lowercase()
            .contains("www-authenticate: bearer realm=\"shop agent\""),
        "{anonymous}"
    );
    let card = raw_http(
        &agent.url,
        "GET /.well-known/agent-card.json HTTP/1.1\r\n\r\n",
    );
    assert!(
        card.starts_with("HTTP/1.1 200"),
        "the card stays public: {card}"
    );

    let out = drive(
        &agent.url,
        json!([
            {"card": {}},
            {"send": {"text": "buy a gpu", "token": "tok-mallory"}},
            {"send": {"text": "approve", "task": "$task", "token": "tok-mallory"}},
            {"get": {"task": "$task", "token": "tok-mallory"}},
            {"send": {"text": "approve", "task": "$task", "token": "tok-alice"}},
            {"get": {"task": "$task", "token": "tok-mallory"}},
            {"get": {"task": "$task", "token": "tok-eve"}},
        ]),
    );
    let card = &out[0]["card"];
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer",
        "{card}"
    );
    assert!(
        card["securityRequirements"][0]["schemes"]
            .get("bearer")
            .is_some(),
        "{card}"
    );

    assert_eq!(state(&out[1]), "TASK_STATE_INPUT_REQUIRED", "{}", out[1]);
    assert_eq!(text(&out[1]), "Approve purchase of gpu?");
    let shown = out[1]["task"]["status"]["message"].to_string();
    assert!(
        !shown.contains("\"args\""),
        "mallory may not answer, so she sees the prompt only: {shown}"
    );
    let run = out[1]["task"]["status"]["message"]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .find_map(|p| p["data"]["id"].as_str())
        .unwrap_or_else(|| panic!("the request's id: {}", out[1]))
        .to_owned();

    assert!(
        out[2].get("error").is_some(),
        "mallory's approval is refused: {}",
        out[2]
    );
    assert_eq!(state(&out[3]), "TASK_STATE_INPUT_REQUIRED", "{}", out[3]);

    assert_eq!(state(&out[4]), "TASK_STATE_COMPLETED", "{}", out[4]);
    assert!(
        !out[4].to_string().contains("ORDER-"),
        "alice approved the task, which is mallory's: she sees its state, not what it said: {}",
        out[4]
    );
    let said = text(&out[5]);
    assert!(said.contains("ORDER-1"), "one order, alice's: {said}");
    assert_eq!(
        out[6]["error"], "TaskNotFoundError",
        "a stranger is told there is no such task: {}",
        out[6]
    );

    let history = out[5]["task"]["history"].as_array().expect("a history");
    let rendered = serde_json::Value::Array(history.clone()).to_string();
    for machinery in ["toolCall", "toolResult", "idempotency"] {
        assert!(!rendered.contains(machinery), "{machinery} in {rendered}");
    }
    let mine: Vec<&Value> = history
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .collect();
    assert_eq!(
        mine.len(),
        2,
        "the first message and alice's approval: {rendered}"
    );
    assert_eq!(mine[0]["parts"][0]["text"], "buy a gpu");
    assert_eq!(mine[1]["parts"][0]["text"], "approve");
    for m in &mine {
        let id = m["messageId"].as_str().unwrap_or_default();
        assert!(
            uuid_like(id),
            "a caller's message keeps the id the client gave it: {m}"
        );
    }
    assert!(
        history
            .iter()
            .any(|m| m["role"] == "ROLE_AGENT" && m.to_string().contains("ORDER-1")),
        "the agent's reply: {rendered}"
    );
    drop(agent);

    let audit = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let inbox = toolnexus_inbox::Inbox::open(&db).await?;
            inbox.audit(&run).await
        })
        .expect("the audit trail reads");
    let answered: Vec<_> = audit
        .iter()
        .filter(|e| e.kind == toolnexus_inbox::AuditKind::Answered)
        .collect();
    assert_eq!(answered.len(), 1, "{audit:?}");
    assert_eq!(answered[0].actor.as_deref(), Some("alice@shop.example"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `id` reads as the UUID the Python client gives a message.
fn uuid_like(id: &str) -> bool {
    id.len() == 36 && id.chars().filter(|c| *c == '-').count() == 4
}

/// A webhook on loopback answering each post with the status it is set to, keeping the
/// bodies of the posts it took (answered 2xx) and counting every attempt.
struct Hook {
    url: String,
    status: std::sync::Arc<std::sync::atomic::AtomicU16>,
    attempts: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    taken: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl Hook {
    fn serve(status: u16) -> Hook {
        use std::io::{BufRead, BufReader, Read};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/hook", listener.local_addr().expect("an address"));
        let hook = Hook {
            url,
            status: std::sync::Arc::new(status.into()),
            attempts: Default::default(),
            taken: Default::default(),
        };
        let (status, attempts, taken) = (
            hook.status.clone(),
            hook.attempts.clone(),
            hook.taken.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut length = 0;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    let lower = line.to_ascii_lowercase();
                    if let Some(n) = lower.strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                attempts.fetch_add(1, Ordering::SeqCst);
                let answer = status.load(Ordering::SeqCst);
                if (200..300).contains(&answer) {
                    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    taken.lock().unwrap_or_else(|p| p.into_inner()).push(body);
                }
                let reply = format!(
                    "HTTP/1.1 {answer} Status\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = (&stream).write_all(reply.as_bytes());
            }
        });
        hook
    }

    /// The states of the statuses taken, in the order they came.
    fn states(&self) -> Vec<String> {
        let taken = self.taken.lock().unwrap_or_else(|p| p.into_inner());
        taken
            .iter()
            .filter_map(|b| b["statusUpdate"]["status"]["state"].as_str())
            .map(str::to_owned)
            .collect()
    }
}

#[test]
fn a_push_notification_pending_when_the_agent_is_killed_is_delivered_once_it_is_back_and_the_task_is_listed_and_streamed(
) {
    use std::sync::atomic::Ordering;
    let file: PathBuf =
        std::env::temp_dir().join(format!("a2a-agent-push-{}.db", std::process::id()));
    let db = format!("sqlite://{}", file.display());
    let start = |db: &str| {
        Serving::start(
            "a2a_agent",
            &["--port", "0", "--db", db, "--allow-private-webhooks"],
            "A2A agent at ",
        )
    };
    // The partner's webhook is down for now: the notification waits in the outbox.
    let hook = Hook::serve(503);
    let agent = start(&db);
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "buy a gpu", "push": {"url": hook.url, "pushToken": "tok"}}}]),
    );
    assert_eq!(state(&out[0]), "TASK_STATE_INPUT_REQUIRED");
    let task = out[0]["task"]["id"].clone();
    let tried = toolnexus_test_support::wait::within_blocking(Duration::from_secs(30), || {
        (hook.attempts.load(Ordering::SeqCst) > 0).then_some(())
    });
    assert!(tried.is_some(), "the agent tried the webhook");
    drop(agent); // SIGKILL: no chance to deliver or tidy up.
    assert!(hook.states().is_empty());

    hook.status.store(200, Ordering::SeqCst);
    let back = start(&db);
    let told = toolnexus_test_support::wait::within_blocking(Duration::from_secs(60), || {
        let states = hook.states();
        states
            .iter()
            .any(|s| s == "TASK_STATE_INPUT_REQUIRED")
            .then_some(states)
    });
    let states = told.unwrap_or_else(|| panic!("not delivered: {:?}", hook.states()));
    let waits = states
        .iter()
        .filter(|s| *s == "TASK_STATE_INPUT_REQUIRED")
        .count();
    assert_eq!(waits, 1, "told once: {states:?}");

    // The agent that came back lists the task, streams it to a subscriber while it is
    // approved, and watches it still: its end is told too.
    let approve = json!({"send": {"text": "approve", "task": task}});
    let out = drive(
        &back.url,
        json!([{"list": {}}, {"subscribe": {"task": task, "then": approve}}]),
    );
    let listed = out[0]["list"]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(listed.len(), 1, "{}", out[0]);
    assert_eq!(listed[0]["id"], task);
    assert_eq!(listed[0]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let events = out[1]["events"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        events.first().map(|e| &e["task"]["id"]),
        Some(&task),
        "{}",
        out[1]
    );
    let last = events.last().map(|e| &e["statusUpdate"]["status"]["state"]);
    assert_eq!(last, Some(&json!("TASK_STATE_COMPLETED")), "{}", out[1]);
    assert_eq!(state(&out[1]["then"]), "TASK_STATE_COMPLETED", "{}", out[1]);
    let ended = toolnexus_test_support::wait::within_blocking(Duration::from_secs(30), || {
        let states = hook.states();
        (states.last().map(String::as_str) == Some("TASK_STATE_COMPLETED")).then_some(states)
    });
    assert!(ended.is_some(), "the end was told: {:?}", hook.states());
    drop(back);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// The status line and the `WWW-Authenticate` header of a JSON-RPC call to the agent at
/// `url` sending `token` (if any) as its bearer token.
fn refusal(url: &str, token: Option<&str>) -> (String, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#;
    let authorization = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let response = raw_http(
        url,
        &format!(
            "POST / HTTP/1.1\r\n{authorization}Content-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    let status = response.lines().next().unwrap_or_default().to_owned();
    let challenge = response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("www-authenticate")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    (status, challenge)
}

/// With `--oidc` and `--scope agent:call`: the card declares the provider as an
/// `openIdConnect` scheme requiring the scope; the partner's client-credentials token
/// starts a purchase that waits for finance, and cannot approve it; alice's token
/// (finance) does; no token, an expired one and one for another resource get 401, one
/// without the scope 403 naming it.
#[test]
fn with_oidc_the_card_names_the_provider_and_only_finance_approves() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let provider = runtime.block_on(toolnexus_test_support::oidc::Provider::start());
    let issuer = provider.issuer().to_owned();
    let file = std::env::temp_dir().join(format!("a2a-agent-oidc-{}.db", std::process::id()));
    let db = format!("sqlite://{}", file.display());
    let agent = Serving::start(
        "a2a_agent",
        &[
            "--port",
            "0",
            "--db",
            &db,
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
        ],
        "A2A agent at ",
    );
    let url = agent.url.as_str();
    let token = |client: &str, resource: &str, scope: &str| {
        runtime.block_on(provider.token(client, resource, Some(scope)))
    };
    let partner = token("partner", url, "agent:call");
    let alice = token("alice", url, "agent:call");

    let out = drive(
        url,
        json!([
            {"card": {}},
            {"send": {"text": "buy a gpu", "token": partner}},
            {"send": {"text": "approve", "task": "$task", "token": partner}},
            {"get": {"task": "$task", "token": partner}},
            {"send": {"text": "approve", "task": "$task", "token": alice}},
            {"get": {"task": "$task", "token": partner}},
        ]),
    );
    let card = &out[0]["card"];
    assert_eq!(
        card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"],
        format!("{issuer}/.well-known/openid-configuration"),
        "{card}"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"oidc": {"list": ["agent:call"]}}}]),
        "{card}"
    );
    assert_eq!(state(&out[1]), "TASK_STATE_INPUT_REQUIRED", "{}", out[1]);
    assert_eq!(text(&out[1]), "Approve purchase of gpu?");
    assert!(
        out[2].get("error").is_some(),
        "the partner's approval is refused: {}",
        out[2]
    );
    assert_eq!(state(&out[3]), "TASK_STATE_INPUT_REQUIRED", "{}", out[3]);
    assert_eq!(state(&out[4]), "TASK_STATE_COMPLETED", "{}", out[4]);
    assert!(text(&out[5]).contains("ORDER-1"), "{}", out[5]);

    let expired = runtime.block_on(provider.expired_token("alice", url));
    let elsewhere = token("alice", "https://other.toolnexus.test", "agent:call");
    let unscoped = token("alice", url, "inbox:read");
    let realm = "Bearer realm=\"Shop agent\"";
    let invalid = format!("{realm}, error=\"invalid_token\"");
    assert_eq!(
        refusal(url, None),
        ("HTTP/1.1 401 Unauthorized".to_owned(), realm.to_owned())
    );
    for sent in [&expired, &elsewhere] {
        let (status, challenge) = refusal(url, Some(sent));
        assert_eq!(
            (status.as_str(), challenge.as_str()),
            ("HTTP/1.1 401 Unauthorized", invalid.as_str())
        );
    }
    let (status, challenge) = refusal(url, Some(&unscoped));
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    assert_eq!(
        challenge,
        format!("{realm}, error=\"insufficient_scope\", scope=\"agent:call\"")
    );
    // The official client is refused with the expired token too, and told nothing of it.
    let out = drive(
        url,
        json!([{"send": {"text": "buy a cpu", "token": expired}}]),
    );
    assert!(out[0].get("error").is_some(), "{}", out[0]);
    assert!(!out[0].to_string().contains(&expired), "{}", out[0]);
    drop(agent);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
