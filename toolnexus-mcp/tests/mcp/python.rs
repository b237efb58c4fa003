//! The official Python MCP SDK on the other side: as a client of the `mcp_server`
//! example, and as a server whose tools `McpTools::spawn` consumes.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use toolnexus::{Answer, ToolContext, Toolkit};
use toolnexus_mcp::McpTools;

use crate::support::python;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/python")
        .join(name)
}

#[test]
fn the_python_sdk_drives_the_example_server() {
    let out = Command::new(python())
        .arg(script("client.py"))
        .arg(crate::example_bin::path("mcp_server"))
        .output()
        .expect("python starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let expected = [
        "server: shop 2025-11-25",
        "tool: approve_purchase | ['item']",
        "tool: ship_order | ['order']",
        "elicited: form | Approve purchase of gpu? | []",
        "result: False | approved: gpu",
        "elicited: form | Approve purchase of yacht? | []",
        "result: True | declined/expired: Approve purchase of yacht? (reason: declined)",
        "elicited: form | Where should order 7 go? | ['city', 'express', 'zip']",
        "result: False | order 7 ships to 75001 Paris, express",
    ];
    assert_eq!(&lines[..expected.len()], expected, "{stdout}");
    let last = lines[expected.len()];
    assert!(
        last.starts_with("result: True |") && last.contains("ship_order"),
        "bad arguments are an error result naming the tool: {last}"
    );
}

async fn python_shop(timeout: Duration) -> Toolkit {
    let mut command = tokio::process::Command::new(python());
    command.arg(script("server.py"));
    let tools = McpTools::builder()
        .timeout(timeout)
        .spawn(command)
        .await
        .expect("the Python server starts");
    Toolkit::builder().tools(tools).build().unwrap()
}

#[tokio::test]
async fn mcp_tools_consume_a_python_server() {
    let tk = python_shop(Duration::from_secs(20)).await;
    let names: Vec<&str> = tk.tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "py_shop__add",
            "py_shop__deliver",
            "py_shop__echo_v2",
            "py_shop__crash",
            "py_shop__sleepy"
        ]
    );
    assert!(
        tk.tools()
            .iter()
            .all(|t| t.source().to_string() == "mcp:py_shop")
    );
    let ctx = ToolContext::default;
    let sum = tk
        .execute("py_shop__add", json!({"a": 2, "b": 3}), ctx())
        .await;
    assert_eq!((sum.is_error, sum.output.as_str()), (false, "5"));
    let echoed = tk
        .execute("py_shop__echo_v2", json!({"text": "hi"}), ctx())
        .await;
    assert_eq!(echoed.output, "hi");

    // The Python server's question becomes a suspension, and its answer completes the call.
    let args = json!({"item": "gpu"});
    let parked = tk.execute("py_shop__deliver", args.clone(), ctx()).await;
    let request = toolnexus::ToolResult::pending_of(&parked).expect("the question suspends");
    assert_eq!(request.kind, "input");
    assert_eq!(request.prompt, "Where should the gpu go?");
    let schema = &request.data.as_ref().unwrap()["schema"];
    assert_eq!(schema["required"], json!(["city", "zip"]));
    let answer = Answer::ok(&request.id).with_data(json!({"city": "Paris", "zip": "75001"}));
    let done = tk
        .execute("py_shop__deliver", args.clone(), ctx().with_answer(answer))
        .await;
    assert_eq!(
        (done.is_error, done.output.as_str()),
        (false, "gpu goes to 75001 Paris")
    );

    let parked = tk.execute("py_shop__deliver", args.clone(), ctx()).await;
    let request = toolnexus::ToolResult::pending_of(&parked).unwrap();
    let refused = tk
        .execute(
            "py_shop__deliver",
            args,
            ctx().with_answer(Answer::decline(&request.id, "declined")),
        )
        .await;
    assert_eq!(refused.output, "no address for gpu");
}

#[tokio::test]
async fn a_python_server_that_hangs_or_dies_gives_error_results() {
    let tk = python_shop(Duration::from_secs(2)).await;
    let ctx = ToolContext::default;
    let hung = tk.execute("py_shop__sleepy", json!({}), ctx()).await;
    assert!(hung.is_error);
    assert!(
        hung.output.contains("did not answer `sleepy`"),
        "{}",
        hung.output
    );
    let sum = tk
        .execute("py_shop__add", json!({"a": 1, "b": 1}), ctx())
        .await;
    assert_eq!(sum.output, "2", "a hung call leaves the connection usable");

    let crashed = tk.execute("py_shop__crash", json!({}), ctx()).await;
    assert!(crashed.is_error && !crashed.is_pending(), "{crashed:?}");
    let after = tk
        .execute("py_shop__add", json!({"a": 1, "b": 1}), ctx())
        .await;
    assert!(after.is_error);
    assert!(
        after.output.contains("MCP server `py_shop`"),
        "{}",
        after.output
    );
}

/// `ask.py`'s verdict on a call of `tool` with `args` by whoever holds `token` ("" for
/// none) at `url`.
#[cfg(feature = "inbox")]
pub(crate) async fn asked_by(
    url: &str,
    token: &str,
    tool: &str,
    args: serde_json::Value,
) -> serde_json::Value {
    let args = args.to_string();
    let out = crate::support::run_script("ask.py", &[url, token, tool, &args]).await;
    serde_json::from_str(out.trim()).expect("one JSON line")
}

#[cfg(feature = "inbox")]
#[tokio::test]
async fn the_example_server_lets_only_its_approvers_approve() {
    let dir = std::env::temp_dir().join(format!("mcp-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens.txt");
    std::fs::write(
        &tokens,
        "tok-alice alice@shop.example finance\ntok-mallory mallory@partner.example\n",
    )
    .unwrap();
    let tokens = tokens.to_string_lossy().into_owned();
    let args = [
        "--http",
        "127.0.0.1:0",
        "--tokens",
        &tokens,
        "--approvers",
        "finance",
    ];
    let server = crate::example_bin::Serving::start("mcp_server", &args, "listening on ");
    let url = server.url.as_str();
    let gpu = || json!({"item": "gpu"});

    let nobody = asked_by(url, "", "approve_purchase", gpu()).await;
    assert!(
        nobody["refused"].is_string(),
        "no token, no session: {nobody}"
    );
    // A partner accepts the approval it is asked; the purchase waits for finance.
    let mallory = asked_by(url, "tok-mallory", "approve_purchase", gpu()).await;
    assert_eq!(mallory["error"], true, "{mallory}");
    let text = mallory["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("group:finance") && text.contains("not taken"),
        "{text}"
    );
    // Finance's acceptance approves it.
    let alice = asked_by(url, "tok-alice", "approve_purchase", gpu()).await;
    assert_eq!(alice["error"], false, "{alice}");
    assert_eq!(alice["text"], "approved: gpu", "{alice}");
    assert_eq!(alice["elicited"], 1, "{alice}");
    let _ = std::fs::remove_dir_all(&dir);
}
