//! Who answers over MCP: the streamable HTTP endpoint identifies each request by its bearer
//! token, refuses one without, and the inbox records the person as answering a kept task,
//! its rules of who may answer applied — driven by the official Python SDK's client.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus_inbox::{AuditKind, BearerTokens, Inbox};
use toolnexus_test_support::databases::TestDb;

use rmcp::model::{CallToolResult, TaskPayload};
use serde_json::Value;

use crate::hostile::actors;
use crate::support::{run_script, text};
use crate::tasks::{builder, raw, serve, until_ended, waiting};

const TOKENS: &str = "tok-alice alice@shop.example finance\ntok-mallory mallory@partner.example\n";

toolnexus_test_support::both_engines!(only_finance_answers_a_kept_approval_over_http);

async fn only_finance_answers_a_kept_approval_over_http(db: TestDb) {
    let inbox = Inbox::builder(&db.url)
        .agent("mcp-shop")
        .responders("approval", ["group:finance"])
        .open()
        .await
        .unwrap();
    let deleted = Arc::new(AtomicUsize::new(0));
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .inbox(inbox.clone())
        .identify(BearerTokens::parse(TOKENS).unwrap())
        .require_identity()
        .build()
        .unwrap();
    let url = serve(server).await;
    // The SDK's client cannot take a task for a call (it reads every `tools/call` result
    // as a plain one), so rmcp's client asks for the call on a second server sharing the
    // inbox, open to anyone; the task it leaves waiting is answered at the guarded one.
    let open = builder(deleted.clone(), Duration::from_millis(20))
        .inbox(inbox.clone())
        .build()
        .unwrap();
    let asker = raw(&serve(open).await).await;
    let (task, key) = waiting(&asker, "/srv/ledger").await;

    let stdout = run_script("identity.py", &[&url, &task]).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "no token: 401 | Bearer",
            "unknown token: refused",
            "asked: Delete /srv/ledger?",
            "mallory: refused -32602",
            "mallory reads: refused -32602",
            "after mallory: input_required",
            "alice after: refused -32602",
            "again: refused -32602",
        ],
        "{stdout}"
    );
    // The one who started the task reads how it ended.
    let TaskPayload::Completed { result } = until_ended(&asker, &task).await else {
        panic!("the task completes")
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
    assert_eq!(text(&result), (false, "deleted /srv/ledger".to_owned()));
    assert_eq!(deleted.load(Ordering::SeqCst), 1, "the call ran once");

    // The audit trail names alice as the one who answered, and no one else.
    assert_eq!(
        actors(&inbox, &key, AuditKind::Answered).await,
        [Some("alice@shop.example".to_owned())]
    );
    assert!(
        inbox.waiting().await.unwrap().is_empty(),
        "nothing still waits"
    );
}
