//! Consuming: an MCP server's tools inside a toolkit and an agent run, its questions as
//! suspensions, and servers that die, hang or talk nonsense.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, LlmClient, Message, MetricEvent, NativeTool, Refusal, Request, RequestKind, RunStatus,
    ToolContext, ToolResult, Toolkit,
};
use toolnexus_mcp::{McpServer, McpTools, McpToolsBuilder};

use crate::serve::SignIn;
use crate::shop;
use crate::support::{legacy, paris, serve_in_process};

const KEY: &[u8] = b"a key both server processes share, 32+ bytes";

/// The shop as a server process would build it (same name, same sealing key).
fn shop() -> McpServer {
    McpServer::builder(shop::toolkit())
        .name("shop")
        .state_key(KEY)
        .build()
        .unwrap()
}

async fn shop_tools() -> McpTools {
    let (stream, _task) = serve_in_process(shop());
    McpTools::builder().over(stream).await.unwrap()
}

async fn shop_toolkit() -> Toolkit {
    Toolkit::builder()
        .tools(shop_tools().await)
        .build()
        .unwrap()
}

async fn scripted(replies: impl IntoIterator<Item = Reply>) -> MockLlm {
    MockLlm::start(replies).await.unwrap()
}

fn llm(mock: &MockLlm) -> toolnexus::LlmClientBuilder {
    LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("k")
}

#[tokio::test]
async fn tools_are_named_after_their_server_and_report_it_as_source() {
    let tools = shop_tools().await;
    assert_eq!(tools.server(), "shop");
    assert_eq!(
        tools.names(),
        [
            (
                "shop__approve_purchase".to_owned(),
                "approve_purchase".to_owned()
            ),
            ("shop__ship_order".to_owned(), "ship_order".to_owned()),
        ]
    );
    assert!(
        tools
            .tools()
            .iter()
            .all(|t| t.source().to_string() == "mcp:shop")
    );
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let declared = tk.to_openai();
    assert_eq!(declared[0]["function"]["name"], "shop__approve_purchase");
    assert_eq!(
        declared[0]["function"]["parameters"]["required"],
        json!(["item"])
    );
}

#[tokio::test]
async fn a_servers_question_halts_a_durable_run_that_resumes_elsewhere() {
    // Process 1: the run halts on the MCP server's question.
    let (transcript, request) = {
        let mock = scripted([
            Reply::tool_call("call_1", "shop__approve_purchase", json!({"item": "gpu"})),
            Reply::text("unreachable"),
        ])
        .await;
        let tk = shop_toolkit().await;
        let sources = Arc::new(Mutex::new(Vec::new()));
        let seen = sources.clone();
        let client = llm(&mock)
            .on_metric(move |event: &MetricEvent| {
                if let MetricEvent::Tool {
                    source, pending, ..
                } = event
                {
                    seen.lock().unwrap().push((source.clone(), *pending));
                }
            })
            .build()
            .unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        let request = halted.pending.clone().unwrap();
        assert_eq!(request.kind, "input");
        assert_eq!(request.prompt, "Approve purchase of gpu?");
        assert_eq!(
            *sources.lock().unwrap(),
            [("mcp:shop".to_owned(), true)],
            "a suspension from MCP is pending, not an error"
        );
        (
            serde_json::to_string(&halted.messages).unwrap(),
            serde_json::to_string(&request).unwrap(),
        )
    };

    // Process 2: everything rebuilt from the saved text, a new connection to a new server.
    let messages: Vec<Message> = serde_json::from_str(&transcript).unwrap();
    let request: Request = serde_json::from_str(&request).unwrap();
    let mock = scripted([Reply::text("Bought.")]).await;
    let tk = shop_toolkit().await;
    let client = llm(&mock).build().unwrap();
    let done = client
        .run_with_answer(messages, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Bought.");
    let call = done.tool_calls.last().unwrap();
    assert_eq!(call.name, "shop__approve_purchase");
    assert_eq!(call.output, "approved: gpu");
    assert!(!call.is_error);
}

#[tokio::test]
async fn the_clients_wait_for_fills_a_servers_form_inline() {
    let mock = scripted([
        Reply::tool_call("call_1", "shop__ship_order", json!({"order": 7})),
        Reply::text("Shipped."),
    ])
    .await;
    let tk = shop_toolkit().await;
    let client = llm(&mock)
        .wait_for(|req: Request| async move {
            let fields = req.data.as_ref().unwrap()["schema"]["properties"].clone();
            assert!(
                fields["zip"].is_object(),
                "the form reached the host: {fields}"
            );
            Answer::ok(req.id).with_data(paris())
        })
        .build()
        .unwrap();
    let result = client.run("ship order 7", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(
        result.tool_calls[0].output,
        "order 7 ships to 75001 Paris, express"
    );
}

#[tokio::test]
async fn a_legacy_servers_mid_call_elicitation_goes_to_wait_for_or_is_declined() {
    /// Asks the shop, over the `initialize` handshake, to approve a gpu.
    async fn approve_gpu(builder: McpToolsBuilder) -> ToolResult {
        let (stream, _task) = serve_in_process(shop());
        let tools = builder.lifecycle(legacy()).over(stream).await.unwrap();
        let tk = Toolkit::builder().tools(tools).build().unwrap();
        let args = json!({"item": "gpu"});
        tk.execute("shop__approve_purchase", args, ToolContext::default())
            .await
    }

    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let answering = McpTools::builder().wait_for(move |req: Request| {
        seen.lock().unwrap().push(req.clone());
        async move { Answer::ok(req.id) }
    });
    assert_eq!(approve_gpu(answering).await.output, "approved: gpu");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "input");
    assert_eq!(asked[0].prompt, "Approve purchase of gpu?");

    let declined = approve_gpu(McpTools::builder()).await;
    assert!(declined.is_error);
    assert_eq!(
        declined.output,
        "declined/expired: Approve purchase of gpu? (reason: declined)"
    );
}

/// A server whose one tool asks the client to sign in at a URL.
fn login_server() -> McpServer {
    let tk = Toolkit::builder().tool(SignIn).build().unwrap();
    McpServer::builder(tk).name("login").build().unwrap()
}

#[tokio::test]
async fn a_sign_in_cancelled_with_a_note_reaches_the_server_as_a_cancel() {
    // Asked mid-call (protocols before 2026-07-28), the host answers the way the inbox page
    // records a cancelled sign-in the person wrote something about.
    let (stream, _task) = serve_in_process(login_server());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let tools = McpTools::builder()
        .lifecycle(legacy())
        .wait_for(move |req: Request| {
            seen.lock().unwrap().push(req.kind.clone());
            async move { Answer::refuse(req.id, Refusal::Cancelled).with_note("wrong account") }
        })
        .over(stream)
        .await
        .unwrap();
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let result = tk
        .execute("login__sign_in", json!({}), ToolContext::default())
        .await;
    assert_eq!(*asked.lock().unwrap(), [RequestKind::Authorization]);
    assert!(result.is_error);
    // The server settles its own refusal text from the action it received: a cancel.
    assert_eq!(
        result.output,
        "declined/expired: Sign in to continue. (reason: cancelled)"
    );
}

/// A toolkit with a server's tools and a native one beside them.
fn with_native(tools: McpTools) -> Toolkit {
    let native = NativeTool::of(
        "local_echo",
        "Echoes",
        json!({"type": "object", "properties": {}}),
        |_args: Value, _ctx| async { "still here" },
    );
    Toolkit::builder()
        .tools(tools)
        .tool(native)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_hung_call_times_out_and_the_rest_keeps_working() {
    let stall = NativeTool::of(
        "stall",
        "Never finishes",
        json!({"type": "object", "properties": {}}),
        |_args: Value, _ctx| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "woke"
        },
    );
    let server_tk = Toolkit::builder()
        .tool(stall)
        .tool(shop::ApprovePurchase)
        .build()
        .unwrap();
    let (stream, _task) =
        serve_in_process(McpServer::builder(server_tk).name("slow").build().unwrap());
    let tools = McpTools::builder()
        .timeout(Duration::from_millis(300))
        .over(stream)
        .await
        .unwrap();
    let tk = with_native(tools);
    let hung = tk
        .execute("slow__stall", json!({}), ToolContext::default())
        .await;
    assert!(hung.is_error);
    assert!(
        hung.output
            .contains("MCP server `slow` did not answer `stall` within"),
        "{}",
        hung.output
    );
    let other = tk
        .execute(
            "slow__approve_purchase",
            json!({"item": "gpu"}),
            ToolContext::default(),
        )
        .await;
    assert!(other.is_pending(), "{other:?}");
    let native = tk
        .execute("local_echo", json!({}), ToolContext::default())
        .await;
    assert_eq!(native.output, "still here");
}

#[tokio::test]
async fn a_dead_server_is_an_error_result_on_every_call() {
    let (stream, task) = serve_in_process(shop());
    let tk = with_native(McpTools::builder().over(stream).await.unwrap());
    task.abort();
    let _ = task.await;
    for _ in 0..2 {
        let dead = tk
            .execute(
                "shop__approve_purchase",
                json!({"item": "gpu"}),
                ToolContext::default(),
            )
            .await;
        assert!(dead.is_error && !dead.is_pending(), "{dead:?}");
        assert!(dead.output.contains("MCP server `shop`"), "{}", dead.output);
    }
    let native = tk
        .execute("local_echo", json!({}), ToolContext::default())
        .await;
    assert_eq!(native.output, "still here");
}

/// A "server" that speaks just enough MCP to be listed, then answers calls with junk.
async fn garbage_server(stream: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let reply = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "junk", "version": "0"},
            }}),
            Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "noise", "inputSchema": {"type": "object", "properties": {}}},
            ]}}),
            Some("tools/call") => {
                write.write_all(b"this is not json\n").await.ok();
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": "not a list", "isError": "maybe"}})
            }
            _ => continue,
        };
        let mut bytes = serde_json::to_vec(&reply).unwrap();
        bytes.push(b'\n');
        if write.write_all(&bytes).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_server_talking_garbage_is_an_error_result() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(garbage_server(ours));
    let tools = McpTools::builder()
        .lifecycle(legacy())
        .timeout(Duration::from_secs(2))
        .over(theirs)
        .await
        .unwrap();
    assert_eq!(tools.server(), "junk");
    let tk = with_native(tools);
    let junk = tk
        .execute("junk__noise", json!({}), ToolContext::default())
        .await;
    assert!(junk.is_error && !junk.is_pending(), "{junk:?}");
    assert!(junk.output.contains("MCP server `junk`"), "{}", junk.output);
    let native = tk
        .execute("local_echo", json!({}), ToolContext::default())
        .await;
    assert_eq!(native.output, "still here");
}

#[tokio::test]
async fn a_consumed_servers_tool_is_gated_by_the_toolkits_approval() {
    let mock = scripted([
        Reply::tool_calls([
            ("call_1", "shop__approve_purchase", json!({"item": "gpu"})),
            ("call_2", "shop__approve_purchase", json!({"item": "yacht"})),
        ]),
        Reply::text("Bought the gpu."),
    ])
    .await;
    let tk = Toolkit::builder()
        .tools(shop_tools().await)
        .approval(
            toolnexus::Approval::tools(["shop__*"])
                .prompt(|name: &str, args: &Value| format!("Let {name} buy {}?", args["item"])),
        )
        .build()
        .unwrap();
    let client = llm(&mock).build().unwrap();
    let halted = client.run("buy a gpu and a yacht", &tk).await.unwrap();
    let prompts: Vec<&str> = halted.waiting.iter().map(|r| r.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            r#"Let shop__approve_purchase buy "gpu"?"#,
            r#"Let shop__approve_purchase buy "yacht"?"#
        ],
        "the gate asks before the server is called"
    );

    // Approving the gate calls the server, whose own question then halts the call again.
    let answers = vec![
        Answer::ok(&halted.waiting[0].id),
        Answer::decline(&halted.waiting[1].id, "declined"),
    ];
    let asked = client
        .run_with_answers(halted.messages, answers, &tk)
        .await
        .unwrap();
    assert_eq!(asked.status, RunStatus::Pending);
    let own = asked.pending.clone().unwrap();
    assert_eq!(own.prompt, "Approve purchase of gpu?");
    assert_eq!(own.gated_tool(), None, "the server's own request");
    let done = client
        .run_with_answer(asked.messages, &own, Answer::ok(&own.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    let sent = mock.requests()[1].tool_results();
    assert_eq!(sent[0].1, "approved: gpu");
    assert_eq!(
        sent[1].1,
        r#"declined/expired: Let shop__approve_purchase buy "yacht"? (reason: declined)"#
    );
}
