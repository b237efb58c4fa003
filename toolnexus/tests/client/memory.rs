//! Memory across runs: a run's `history`, and the conversation store behind
//! `client.conversation(id)`.

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, BoxFuture, ClientError, ConversationStore, InMemoryStore, Message, RunStatus,
    StoreError, Style, ToolCall, Toolkit,
};

use crate::support::*;

/// The `role: content` lines of a request's transcript, whatever the wire format.
fn said(mock: &MockLlm, request: usize) -> Vec<String> {
    let seen = &mock.requests()[request];
    let mut lines: Vec<String> = seen
        .body
        .get("system")
        .and_then(|s| s.as_str())
        .map(|s| format!("system: {s}"))
        .into_iter()
        .collect();
    for m in seen.messages() {
        let content = match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            blocks => blocks[0]["text"].as_str().unwrap_or_default().to_owned(),
        };
        lines.push(format!(
            "{}: {content}",
            m["role"].as_str().unwrap_or_default()
        ));
    }
    lines
}

#[tokio::test]
async fn two_clients_sharing_a_store_continue_one_thread() {
    let mock = MockLlm::start([Reply::text("Hi Ann!"), Reply::text("You are Ann.")])
        .await
        .unwrap();
    let store = InMemoryStore::new();
    let tk = Toolkit::empty();
    let first = on(&mock, Style::OpenAi)
        .system_prompt("Be brief.")
        .store(store.clone())
        .build()
        .unwrap();
    let second = on(&mock, Style::Anthropic)
        .system_prompt("Be brief.")
        .store(store.clone())
        .build()
        .unwrap();

    let thread = first.conversation("thread-1");
    thread.send("I am Ann.", &tk).await.unwrap();
    let thread = second.conversation("thread-1");
    let reply = thread.send("Who am I?", &tk).await.unwrap();
    assert_eq!(reply.text, "You are Ann.");
    assert_eq!(
        said(&mock, 1),
        [
            "system: Be brief.",
            "user: I am Ann.",
            "assistant: Hi Ann!",
            "user: Who am I?"
        ],
        "the second client saw the first one's exchange, system prompt once"
    );

    let thread = store.get("thread-1").await.unwrap();
    assert_eq!(thread, reply.messages);
    assert_eq!(thread.len(), 5);
    assert!(store.get("another").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_conversation_sends_lists_and_resets_its_thread() {
    let mock = MockLlm::start([Reply::text("one"), Reply::text("two"), Reply::text("fresh")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::empty();
    let chat = client.conversation("c-1");
    assert_eq!(chat.id(), "c-1");
    chat.send("first", &tk).await.unwrap();
    chat.send("second", &tk).await.unwrap();
    assert_eq!(chat.messages().await.unwrap().len(), 4);
    assert_eq!(
        said(&mock, 1),
        ["user: first", "assistant: one", "user: second"]
    );

    chat.reset().await.unwrap();
    assert!(chat.messages().await.unwrap().is_empty());
    chat.send("again", &tk).await.unwrap();
    assert_eq!(said(&mock, 2), ["user: again"]);
}

#[tokio::test]
async fn a_halted_thread_is_resumed_through_its_conversation() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let chat = client.conversation("shop");

    let halted = chat.send("buy a gpu", &tk).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(chat.messages().await.unwrap(), halted.messages);

    let request = halted.pending.unwrap();
    let done = chat
        .resume(&request, Answer::ok(request.id.clone()), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(chat.messages().await.unwrap(), done.messages);
}

#[tokio::test]
async fn a_run_with_history_continues_a_transcript() {
    let mock = MockLlm::start([Reply::text("first"), Reply::text("second")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi)
        .system_prompt("Sys")
        .build()
        .unwrap();
    let tk = Toolkit::empty();
    let first = client.run("a", &tk).await.unwrap();
    let second = client.run("b", &tk).history(first.messages).await.unwrap();
    assert_eq!(
        said(&mock, 1),
        ["system: Sys", "user: a", "assistant: first", "user: b"]
    );
    assert_eq!(second.messages.len(), 5);
    assert_eq!(second.turns, 1, "turns count this invocation only");

    let dangling = vec![
        Message::user("buy"),
        Message::Assistant {
            state: None,
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "approve_purchase".into(),
                args: json!({}),
            }],
        },
    ];
    let err = client.run("x", &tk).history(dangling).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidTranscript(_)), "{err}");
    assert_eq!(
        mock.calls(),
        2,
        "nothing sent for a transcript with unanswered calls"
    );
}

/// A store whose backend is down.
struct Broken;

impl ConversationStore for Broken {
    fn get<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Vec<Message>, StoreError>> {
        Box::pin(async { Err("database unreachable".into()) })
    }
    fn save<'a>(&'a self, _: &'a str, _: &'a [Message]) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Err("database unreachable".into()) })
    }
}

#[tokio::test]
async fn a_failing_store_is_a_store_error() {
    let mock = MockLlm::start([Reply::text("unused")]).await.unwrap();
    let client = on(&mock, Style::OpenAi).store(Broken).build().unwrap();
    let tk = Toolkit::empty();
    let err = client.conversation("t").send("hi", &tk).await.unwrap_err();
    assert_eq!(err, ClientError::Store("database unreachable".into()));
    assert_eq!(mock.calls(), 0);
}
