//! The protocol's interrupt rules and capability discovery as the official client meets
//! them: every resume the rules forbid (a new message while interrupts wait, a resume
//! leaving one open, naming another thread's or a forged interrupt, answering one twice, a
//! payload that fits no answer, a resume on a thread of its own) is refused and runs
//! nothing; a replayed resume changes nothing; a stale one is refused and the run goes on
//! as the inbox's expiry rule says; a resume's envelope is kept with its answer in the
//! audit trail; a quorum's progress and the end of a wait reach the client's state as
//! deltas; a front end that connects is shown the thread as it stands; and
//! `getCapabilities()` reads what the endpoint does through `@ag-ui/core`'s own schema.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{NativeTool, ToolContext, ToolResult, Toolkit};
use toolnexus_inbox::AuditKind;

use crate::support::*;

fn approve(id: &Value) -> Value {
    json!([{"interruptId": id, "status": "resolved", "payload": {"approved": true}}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replayed_resume_buys_nothing_twice() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("a", &agent.url, "buy a gpu").await;
    let id = interrupts(&asked)[0]["id"].clone();
    let bought = client.resume("a", &agent.url, approve(&id)).await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    // The same resume again, as a client that lost the answer would send it.
    let replayed = client.resume("a", &agent.url, approve(&id)).await;
    assert_eq!(last(&replayed)["type"], "RUN_ERROR", "{replayed}");
    assert_eq!(last(&replayed)["code"], "nothing_to_resume", "{replayed}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1, "bought once");
    client.close().await;
    agent.stop().await;
}

/// When the offer to delete lapses: a time the tests' clock passes when told.
const LAPSES: &str = "2031-01-01T00:00:00Z";
/// Seconds from now to past [`LAPSES`], whatever today is before it.
fn past_the_lapse() -> u64 {
    let lapse = SystemTime::UNIX_EPOCH + Duration::from_secs(1_924_992_000);
    lapse
        .duration_since(SystemTime::now())
        .map(|left| left.as_secs() + 60)
        .unwrap_or(60)
}

/// `delete`, whose approval lapses at [`LAPSES`]; it counts the files it deleted.
fn lapsing_toolkit(deleted: Arc<AtomicU64>) -> Toolkit {
    let delete = NativeTool::of(
        "delete",
        "Deletes a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        move |_args: Value, ctx: ToolContext| {
            let deleted = deleted.clone();
            async move {
                match ctx.answer {
                    None => toolnexus::pending!(
                        kind = "approval",
                        prompt = "Delete the file?",
                        expires_at = LAPSES
                    ),
                    Some(answer) if answer.ok => {
                        deleted.fetch_add(1, Ordering::SeqCst);
                        ToolResult::ok("deleted")
                    }
                    Some(_) => ToolResult::ok("kept"),
                }
            }
        },
    );
    Toolkit::builder().tool(delete).build().expect("a toolkit")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stale_resume_is_refused_and_the_run_goes_on_as_expired() {
    let db = TestDb::sqlite();
    let model = MockLlm::with_fn(|req| match req.tool_results().pop() {
        Some((_, out)) => Reply::text(format!("The file is {out}.")),
        None => Reply::tool_call("call_0", "delete", json!({"path": "/tmp/x"})),
    })
    .await
    .expect("the scripted model starts");
    let deleted = Arc::new(AtomicU64::new(0));
    // The inbox's clock: now, until the test moves it past the lapse.
    let ahead = Arc::new(AtomicU64::new(0));
    let clock = ahead.clone();
    let agent = Agent::serve_on(
        &db,
        &model,
        Default::default(),
        lapsing_toolkit(deleted.clone()),
        move |inbox| {
            inbox.clock(move || {
                SystemTime::now() + Duration::from_secs(clock.load(Ordering::SeqCst))
            })
        },
        |server| server,
    )
    .await;
    let mut client = Client::start();
    let asked = client.say("a", &agent.url, "delete /tmp/x").await;
    let interrupt = interrupts(&asked)[0].clone();
    assert_eq!(interrupt["expiresAt"], LAPSES, "{interrupt}");

    ahead.store(past_the_lapse(), Ordering::SeqCst);
    let stale = client
        .resume("a", &agent.url, approve(&interrupt["id"]))
        .await;
    assert_eq!(last(&stale)["type"], "RUN_ERROR", "{stale}");
    assert_eq!(last(&stale)["code"], "interrupt_expired", "{stale}");
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "nothing deleted");

    // The wait is over all the same: the inbox declined it as expired, and the next
    // resume shows the run going on from there, whatever it answers.
    let cancel = json!([{"interruptId": interrupt["id"], "status": "cancelled"}]);
    let ended = client.resume("a", &agent.url, cancel).await;
    assert_eq!(last(&ended)["outcome"]["type"], "success", "{ended}");
    // The model reads the refusal the inbox's rule gave, not an answer of the client's.
    assert!(text(&ended).contains("(reason: expired)"), "{ended}");
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "nothing deleted");
    client.close().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resumes_envelope_is_kept_with_its_answer_in_the_audit_trail() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("a", &agent.url, "buy a gpu").await;
    let id = interrupts(&asked)[0]["id"].clone();
    let envelope = json!({"signature": "c2lnbmVkIGJ5IHRoZSBmcm9udCBlbmQ", "keyId": "front-1"});
    let signed = json!([{"interruptId": id, "status": "resolved",
        "payload": {"approved": true}, "metadata": envelope}]);
    let bought = client.resume("a", &agent.url, signed).await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");

    let id = id.as_str().expect("an interrupt id");
    let trail = agent.inbox.audit(id).await.expect("the audit trail");
    let answered = trail
        .iter()
        .find(|e| e.kind == AuditKind::Answered)
        .unwrap_or_else(|| panic!("an answer on the trail: {trail:?}"));
    let detail: Value = serde_json::from_str(answered.detail.as_deref().unwrap_or("null"))
        .expect("the answer as JSON");
    assert_eq!(detail["metadata"], envelope, "{detail}");
    assert_eq!(detail["ok"], true, "{detail}");
    client.close().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_quorums_progress_and_the_end_of_the_wait_reach_the_state_as_deltas() {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = quorum_agent(&db, &model, FINANCE).await;
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});

    let asked = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-alice"), "say": "buy a gpu"}))
        .await;
    // A client holding nothing of ours is sent the state whole.
    assert_eq!(of_type(&asked, "STATE_SNAPSHOT").len(), 1, "{asked}");
    assert_eq!(
        asked["state"]["interrupts"][0]["metadata"]["approvals"]["count"],
        0
    );
    let id = interrupts(&asked)[0]["id"].clone();

    // Alice's approval is one of two: her client's state changes by a delta.
    let first = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-alice"), "resume": approve(&id)}))
        .await;
    assert_eq!(last(&first)["outcome"]["type"], "interrupt", "{first}");
    assert!(of_type(&first, "STATE_SNAPSHOT").is_empty(), "{first}");
    let delta = of_type(&first, "STATE_DELTA");
    assert_eq!(delta.len(), 1, "{first}");
    assert!(
        delta[0]["delta"].as_array().is_some_and(|ops| ops
            .iter()
            .all(|op| op["op"] != "replace" || op["path"] != "/interrupts")),
        "a change, not the list again: {delta:?}"
    );
    // The state the client built from it is the one the interrupt says.
    let state = &first["state"]["interrupts"][0];
    assert_eq!(state["metadata"]["approvals"]["count"], 1, "{state}");
    assert_eq!(*state, interrupts(&first)[0], "{first}");

    // Bob's ends the wait. His front end holds the state Alice's does (it loaded the
    // thread): the list of what is waited on empties by a delta.
    let bought = client
        .step(
            json!({"agent": "bob", "url": agent.url, "threadId": "q", "state": first["state"],
            "headers": bearer("tok-bob"), "resume": approve(&id)}),
        )
        .await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert_eq!(of_type(&bought, "STATE_DELTA").len(), 1, "{bought}");
    assert_eq!(bought["state"]["interrupts"], json!([]), "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    client.close().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn capabilities_say_what_the_endpoint_does_as_the_official_schema_reads_them() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let read = client
        .step(json!({"agent": "a", "url": agent.url, "capabilities": true}))
        .await;
    assert_eq!(read["error"], json!(null), "{read}");
    let caps = &read["capabilities"];
    let hitl = &caps["humanInTheLoop"];
    for flag in ["supported", "approvals", "interrupts", "approveWithEdits"] {
        assert_eq!(hitl[flag], true, "{flag}: {caps}");
    }
    let tools: Vec<&str> = caps["tools"]["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let served: Vec<&str> = agent.tk.names().collect();
    assert_eq!(tools, served, "{caps}");
    assert_eq!(
        caps["tools"]["items"][0]["parameters"]["type"], "object",
        "{caps}"
    );
    assert_eq!(caps["state"]["deltas"], true, "{caps}");
    assert_eq!(caps["transport"]["streaming"], true, "{caps}");
    client.close().await;
    agent.stop().await;

    // Behind a sign-in, nobody unknown learns what the agent holds.
    let db = TestDb::sqlite();
    let model = model().await;
    let guarded = quorum_agent(&db, &model, FINANCE).await;
    let mut client = Client::start();
    let stranger = client
        .step(json!({"agent": "x", "url": guarded.url, "capabilities": true}))
        .await;
    assert!(
        stranger["error"]
            .as_str()
            .is_some_and(|e| e.contains("401")),
        "{stranger}"
    );
    let alice = client
        .step(
            json!({"agent": "alice", "url": guarded.url, "capabilities": true,
            "headers": {"Authorization": "Bearer tok-alice"}}),
        )
        .await;
    assert_eq!(alice["error"], json!(null), "{alice}");
    assert_eq!(
        alice["capabilities"]["tools"]["items"][0]["name"],
        "purchase"
    );
    client.close().await;
    guarded.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_front_end_that_connects_is_shown_the_thread_as_it_stands_and_nothing_runs() {
    let db = TestDb::sqlite();
    let model = model().await;
    let tokens = format!("{FINANCE}tok-mallory mallory@shop.example\n");
    let agent = quorum_agent(&db, &model, &tokens).await;
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});
    let asked = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "t",
            "headers": bearer("tok-alice"), "say": "buy a gpu"}))
        .await;
    let interrupt = interrupts(&asked)[0].clone();

    // Alice reloads: a new front end on her thread gets it back from the server alone.
    let reloaded = client
        .step(
            json!({"agent": "alice-again", "url": agent.url, "threadId": "t",
            "headers": bearer("tok-alice"), "connect": true}),
        )
        .await;
    assert_eq!(reloaded["error"], json!(null), "{reloaded}");
    assert_eq!(
        types(&reloaded),
        [
            "RUN_STARTED",
            "MESSAGES_SNAPSHOT",
            "STATE_SNAPSHOT",
            "RUN_FINISHED"
        ],
        "{reloaded}"
    );
    assert_eq!(interrupts(&reloaded).len(), 1, "{reloaded}");
    assert_eq!(interrupts(&reloaded)[0], interrupt, "{reloaded}");
    assert_eq!(
        reloaded["messages"][0]["content"], "buy a gpu",
        "{reloaded}"
    );
    assert_eq!(reloaded["state"]["interrupts"][0]["id"], interrupt["id"]);

    // Bob of finance may answer it: he sees the question, not Alice's conversation.
    let approver = client
        .step(json!({"agent": "bob", "url": agent.url, "threadId": "t",
            "headers": bearer("tok-bob"), "connect": true}))
        .await;
    assert_eq!(
        types(&approver),
        ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"],
        "{approver}"
    );
    assert_eq!(
        interrupts(&approver)[0]["id"],
        interrupt["id"],
        "{approver}"
    );

    // Nobody unknown learns that the thread exists (the client would only log the 401).
    let stranger = reqwest::Client::new()
        .post(format!("{}connect", agent.url))
        .json(&json!({"threadId": "t", "runId": "r", "messages": []}))
        .send()
        .await
        .expect("the endpoint answers");
    assert_eq!(stranger.status(), 401);
    // Someone known who may not answer it is told no more: no thread of theirs is there.
    let mallory = client
        .step(
            json!({"agent": "mallory", "url": agent.url, "threadId": "t",
            "headers": bearer("tok-mallory"), "connect": true}),
        )
        .await;
    assert_eq!(types(&mallory), ["RUN_ERROR"], "{mallory}");
    assert_eq!(last(&mallory)["code"], "unknown_thread", "{mallory}");

    // Both approve from where they connected; a connect afterwards shows the end, and
    // running nothing, buys nothing more.
    for (who, token) in [("alice-again", "tok-alice"), ("bob", "tok-bob")] {
        let answered = client
            .step(
                json!({"agent": who, "url": agent.url, "headers": bearer(token),
                "resume": approve(&interrupt["id"])}),
            )
            .await;
        assert_eq!(last(&answered)["type"], "RUN_FINISHED", "{answered}");
    }
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    let after = client
        .step(
            json!({"agent": "alice-later", "url": agent.url, "threadId": "t",
            "headers": bearer("tok-alice"), "connect": true}),
        )
        .await;
    assert_eq!(last(&after)["outcome"]["type"], "success", "{after}");
    assert_eq!(after["state"]["interrupts"], json!([]), "{after}");
    let said = after["messages"]
        .as_array()
        .and_then(|all| all.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(
        said.contains("ORDER-"),
        "the order is in the conversation: {after}"
    );
    assert_eq!(
        agent.purchases.load(Ordering::SeqCst),
        1,
        "a connect runs nothing"
    );
    client.close().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_resume_the_rules_forbid_is_refused_as_the_official_client_sends_it() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client
        .step(
            json!({"agent": "a", "url": agent.url, "threadId": "t1", "say": "buy a gpu and a tpu"}),
        )
        .await;
    let open: Vec<Value> = interrupts(&asked).iter().map(|i| i["id"].clone()).collect();
    assert_eq!(open.len(), 2, "{asked}");
    let other = client
        .step(json!({"agent": "b", "url": agent.url, "threadId": "t2", "say": "log me in"}))
        .await;
    let elsewhere = interrupts(&other)[0]["id"].clone();
    let yes = |id: &Value| json!({"interruptId": id, "status": "resolved", "payload": {"approved": true}});

    // Each from a front end of its own on the thread, holding no interrupts, so the client
    // sends what the rule forbids instead of refusing it first.
    let cases = [
        (
            "a new message while interrupts wait",
            json!({"say": "buy a tpu"}),
            "interrupts_open",
        ),
        (
            "a resume leaving one open",
            json!({"resume": [yes(&open[0])]}),
            "resume_incomplete",
        ),
        (
            "a resume naming another thread's interrupt",
            json!({"resume": [yes(&open[0]), yes(&elsewhere)]}),
            "unknown_interrupt",
        ),
        (
            "a resume naming an interrupt never asked",
            json!({"resume": [yes(&open[0]), yes(&open[1]), yes(&json!("forged"))]}),
            "unknown_interrupt",
        ),
        (
            "a resume answering one twice",
            json!({"resume": [yes(&open[0]), yes(&open[0]), yes(&open[1])]}),
            "resume_duplicate",
        ),
        (
            "a payload that fits no answer",
            json!({"resume": [yes(&open[0]), {"interruptId": open[1], "status": "resolved", "payload": "yes"}]}),
            "invalid_answer",
        ),
    ];
    for (i, (what, step, code)) in cases.into_iter().enumerate() {
        let mut step = step;
        step["agent"] = json!(format!("fresh-{i}"));
        step["url"] = json!(agent.url);
        step["threadId"] = json!("t1");
        let refused = client.step(step).await;
        assert_eq!(last(&refused)["type"], "RUN_ERROR", "{what}: {refused}");
        assert_eq!(last(&refused)["code"], code, "{what}: {refused}");
    }
    // A resume on a thread of its own answers nothing of another's.
    let stray = client
        .step(json!({"agent": "stray", "url": agent.url, "threadId": "t3",
            "resume": [yes(&open[0]), yes(&open[1])]}))
        .await;
    assert_eq!(last(&stray)["code"], "unknown_thread", "{stray}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing ran");

    // Both interrupts are still open, and the front end that holds them resumes the run.
    let done = client
        .step(json!({"agent": "a", "url": agent.url, "resume": [yes(&open[0]), yes(&open[1])]}))
        .await;
    assert_eq!(last(&done)["outcome"]["type"], "success", "{done}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
    client.close().await;
    agent.stop().await;
}
