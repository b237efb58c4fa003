//! A chain of our own agents: A calls B over A2A; B's purchase waits for a person behind a
//! declared approval; A's run halts with B's prompt; the person answers A; B's purchase
//! runs once; A completes with B's result.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Approval, NativeTool, Request, RunStatus, ToolContext, ToolResult, Toolkit,
};
use toolnexus_a2a::{A2aServer, RemoteAgent};
use toolnexus_inbox::Inbox;

use super::support::{client, model, toolkit};

/// Agent B, served over A2A on a loopback port: its model buys what it is asked for, its
/// purchase waits for a person's approval, and it says what it bought.
struct AgentB {
    url: String,
    purchases: Arc<AtomicUsize>,
    _model: MockLlm,
    dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn agent_b(name: &str) -> AgentB {
    let purchases = Arc::new(AtomicUsize::new(0));
    let counted = purchases.clone();
    let purchase = NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args: Value, _ctx: ToolContext| {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                ToolResult::ok(format!(
                    "ORDER-{n}: bought {}",
                    args["item"].as_str().unwrap_or("?")
                ))
            }
        },
    );
    let tk = Toolkit::builder()
        .tool(purchase)
        .approval(Approval::tools(["purchase"]).prompt(|_, args| {
            format!(
                "Approve purchase of {}?",
                args["item"].as_str().unwrap_or("?")
            )
        }))
        .build()
        .unwrap();
    let mock = MockLlm::with_fn(|req| match req.tool_results().last() {
        Some((_, output)) => Reply::text(format!("B says: {output}")),
        None => Reply::tool_call("call_b", "purchase", json!({"item": "gpu"})),
    })
    .await
    .unwrap();
    let dir =
        std::env::temp_dir().join(format!("toolnexus-a2a-chain-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inbox = Inbox::open(&format!("sqlite://{}", dir.join("b.db").display()))
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = A2aServer::builder(client(&mock).build().unwrap(), tk, inbox)
        .name("purchasing")
        .description("Buys things once a person approves")
        .url(&url)
        .build()
        .unwrap();
    let app = server.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    AgentB {
        url,
        purchases,
        _model: mock,
        dir: TempDir(dir),
    }
}

#[tokio::test]
async fn a_halted_chain_resumes_in_a_fresh_client_and_a_replay_buys_nothing() {
    let b = agent_b("halt").await;
    let mock_a = model("purchasing", "buy a gpu").await;
    let halted = client(&mock_a)
        .build()
        .unwrap()
        .run(
            "buy me a gpu",
            &toolkit(RemoteAgent::connect(&b.url).await.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.prompt, "Approve purchase of gpu?", "B's prompt");
    assert_eq!(request.kind, "approval");
    assert_eq!(
        b.purchases.load(Ordering::SeqCst),
        0,
        "nothing bought before the answer"
    );

    // A fresh process: the transcript and request as stored text, a new agent A.
    let stored = serde_json::to_string(&halted.messages).unwrap();
    let request: Request = serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
    let resume = || async {
        let tk = toolkit(RemoteAgent::connect(&b.url).await.unwrap());
        client(&mock_a)
            .build()
            .unwrap()
            .run_with_answer(
                serde_json::from_str(&stored).unwrap(),
                &request,
                Answer::ok(&request.id),
                &tk,
            )
            .await
            .unwrap()
    };
    let done = resume().await;
    assert_eq!(done.status, RunStatus::Done);
    let output = &done.tool_calls[0].output;
    assert_eq!(output, "B says: ORDER-1: bought gpu");
    assert_eq!(done.text, format!("remote says: {output}"));
    assert_eq!(b.purchases.load(Ordering::SeqCst), 1);

    // The same answer replayed: B's task is over, so nothing is bought twice.
    let replayed = resume().await;
    let call = &replayed.tool_calls[0];
    assert!(call.is_error, "{call:?}");
    // B's card declares streaming, so the continuation goes as a streaming message.
    assert!(
        call.output.contains("refused SendStreamingMessage"),
        "{}",
        call.output
    );
    assert_eq!(
        b.purchases.load(Ordering::SeqCst),
        1,
        "B's purchase ran once"
    );
}

#[tokio::test]
async fn a_chain_answered_by_wait_for_completes_with_bs_result() {
    let b = agent_b("wait").await;
    let mock_a = model("purchasing", "buy a gpu").await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let done = client(&mock_a)
        .wait_for(move |request: Request| {
            seen.lock().unwrap().push(request.prompt.clone());
            std::future::ready(Answer::ok(request.id))
        })
        .build()
        .unwrap()
        .run(
            "buy me a gpu",
            &toolkit(RemoteAgent::connect(&b.url).await.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), ["Approve purchase of gpu?"]);
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls[0].output, "B says: ORDER-1: bought gpu");
    assert_eq!(b.purchases.load(Ordering::SeqCst), 1);
}

/// Where the halted chain's state goes for the second process, and its result comes back.
const CHILD_STATE: &str = "TOOLNEXUS_A2A_CHAIN_STATE";

#[tokio::test]
async fn a_halted_chain_resumes_in_another_process_and_runs_b_once() {
    let b = agent_b("process").await;
    let mock_a = model("purchasing", "buy a gpu").await;
    let halted = client(&mock_a)
        .build()
        .unwrap()
        .run(
            "buy me a gpu",
            &toolkit(RemoteAgent::connect(&b.url).await.unwrap()),
        )
        .await
        .unwrap();
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.prompt, "Approve purchase of gpu?");
    let state = b.dir.0.join("halted.json");
    let saved = json!({"url": b.url, "messages": halted.messages, "request": request});
    std::fs::write(&state, saved.to_string()).unwrap();

    // The test binary again, running only the resume below: a process that shares nothing
    // with this one but the files and B's address.
    let child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "chain::resumes_a_halted_chain_it_is_given",
            "--include-ignored",
        ])
        .env(CHILD_STATE, &state)
        .output()
        .await
        .unwrap();
    assert!(
        child.status.success(),
        "the resuming process failed:\n{}\n{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let done: Value =
        serde_json::from_str(&std::fs::read_to_string(state.with_extension("done")).unwrap())
            .unwrap();
    assert_eq!(done["status"], "done");
    assert_eq!(
        done["toolCalls"][0]["output"],
        "B says: ORDER-1: bought gpu"
    );
    assert_eq!(
        b.purchases.load(Ordering::SeqCst),
        1,
        "B's purchase ran once"
    );
}

/// The second process of the test above; it refuses to run on its own.
#[tokio::test]
#[ignore = "the second process of a_halted_chain_resumes_in_another_process_and_runs_b_once"]
async fn resumes_a_halted_chain_it_is_given() {
    let state = std::env::var(CHILD_STATE).unwrap_or_else(|_| {
        panic!("{CHILD_STATE} is not set: this runs only as the second process of its test")
    });
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let request: Request = serde_json::from_value(saved["request"].clone()).unwrap();
    let mock_a = model("purchasing", "buy a gpu").await;
    let tk = toolkit(
        RemoteAgent::connect(saved["url"].as_str().unwrap())
            .await
            .unwrap(),
    );
    let done = client(&mock_a)
        .build()
        .unwrap()
        .run_with_answer(
            serde_json::from_value(saved["messages"].clone()).unwrap(),
            &request,
            Answer::ok(&request.id),
            &tk,
        )
        .await
        .unwrap();
    let result = json!({"status": done.status, "toolCalls": done.tool_calls.iter()
        .map(|c| json!({"output": c.output, "isError": c.is_error})).collect::<Vec<_>>()});
    std::fs::write(
        std::path::Path::new(&state).with_extension("done"),
        result.to_string(),
    )
    .unwrap();
}
