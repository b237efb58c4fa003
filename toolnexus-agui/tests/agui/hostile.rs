//! What no client following the protocol sends, over raw HTTP: bodies too large or too
//! deep, no input at all, statuses the protocol does not define, new messages on a thread
//! that waits, partial, doubled, forged and another thread's resumes. Each gets a clear
//! refusal, nothing runs, and an open interrupt stays answerable.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use crate::support::*;

/// Posts `body`; the status and, for a stream, its events (else the JSON body).
async fn post(url: &str, body: impl Into<reqwest::Body>) -> (u16, Vec<Value>) {
    let reply = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body)
        .send()
        .await
        .expect("the server answers");
    let status = reply.status().as_u16();
    let text = reply.text().await.expect("a body");
    let values = if status == 200 {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).expect("each event is JSON"))
            .collect()
    } else {
        vec![serde_json::from_str(&text).expect("an error body is JSON")]
    };
    (status, values)
}

fn input(thread: &str, run: &str, say: Option<&str>, resume: Value) -> String {
    let messages = match say {
        Some(text) => json!([{"id": format!("{run}-user"), "role": "user", "content": text}]),
        None => json!([]),
    };
    json!({"threadId": thread, "runId": run, "messages": messages, "resume": resume}).to_string()
}

/// The one event a refused run sends: a `RUN_ERROR` with `code`.
fn refused(events: &[Value], code: &str) {
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "RUN_ERROR", "{events:?}");
    assert_eq!(events[0]["code"], code, "{events:?}");
    assert!(events[0]["message"].as_str().is_some_and(|m| !m.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bodies_that_are_no_run_input_get_a_4xx_naming_why() {
    let (agent, _db, _model) = agent().await;
    let huge = "x".repeat(128 * 1024);
    let (status, body) = post(&agent.url, input("t", "r", Some(&huge), json!(null))).await;
    assert_eq!(status, 413, "{body:?}");
    assert_eq!(body[0]["error"]["code"], "body_too_large");

    let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
    for (what, body) in [
        ("deep", deep),
        ("not json", "buy a gpu".to_owned()),
        (
            "no thread",
            json!({"runId": "r", "messages": []}).to_string(),
        ),
        ("blank thread", input(" ", "r", Some("hi"), json!(null))),
        (
            "long run id",
            input("t", &"r".repeat(300), Some("hi"), json!(null)),
        ),
        ("no user message", input("t", "r", None, json!(null))),
        (
            "undefined status",
            input(
                "t",
                "r",
                None,
                json!([{"interruptId": "i", "status": "maybe"}]),
            ),
        ),
        (
            "resume not a list",
            input("t", "r", None, json!({"interruptId": "i"})),
        ),
    ] {
        let (status, reply) = post(&agent.url, body).await;
        assert_eq!(status, 400, "{what}: {reply:?}");
        assert_eq!(reply[0]["error"]["code"], "invalid_body", "{what}");
        assert!(
            reply[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resumes_that_do_not_answer_the_open_interrupts_run_nothing() {
    let (agent, _db, _model) = agent().await;
    let (status, asked) = post(
        &agent.url,
        input("t1", "r1", Some("buy a gpu and a tpu"), json!(null)),
    )
    .await;
    assert_eq!(status, 200);
    let open: Vec<String> = asked
        .last()
        .and_then(|e| e["outcome"]["interrupts"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|i| i["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(open.len(), 2, "{asked:?}");
    let (_, other) = post(
        &agent.url,
        input("t2", "r1", Some("log me in"), json!(null)),
    )
    .await;
    let elsewhere = other
        .last()
        .and_then(|e| {
            e["outcome"]["interrupts"][0]["id"]
                .as_str()
                .map(str::to_owned)
        })
        .expect("thread t2 waits");
    let yes =
        |id: &str| json!({"interruptId": id, "status": "resolved", "payload": {"approved": true}});

    for (resume, code) in [
        (json!([yes(&open[0])]), "resume_incomplete"),
        (
            json!([yes(&open[0]), yes(&open[0]), yes(&open[1])]),
            "resume_duplicate",
        ),
        (
            json!([yes(&open[0]), yes(&open[1]), yes("forged-id")]),
            "unknown_interrupt",
        ),
        (json!([yes(&open[0]), yes(&elsewhere)]), "unknown_interrupt"),
        (
            json!([yes(&open[0]), {"interruptId": open[1], "status": "resolved", "payload": "yes"}]),
            "invalid_answer",
        ),
        (
            json!([yes(&open[0]), {"interruptId": open[1], "status": "resolved"}]),
            "invalid_answer",
        ),
    ] {
        let (status, events) = post(&agent.url, input("t1", "r2", None, resume.clone())).await;
        assert_eq!(status, 200);
        refused(&events, code);
    }
    let (_, events) = post(
        &agent.url,
        input("t1", "r2", Some("buy a tpu"), json!(null)),
    )
    .await;
    refused(&events, "interrupts_open");
    let (_, events) = post(&agent.url, input("t3", "r1", None, json!([yes(&open[0])]))).await;
    refused(&events, "unknown_thread");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing ran");

    // Both interrupts are still open and answerable.
    let (_, done) = post(
        &agent.url,
        input("t1", "r3", None, json!([yes(&open[0]), yes(&open[1])])),
    )
    .await;
    assert_eq!(
        done.last().map(|e| e["outcome"]["type"].clone()),
        Some(json!("success")),
        "{done:?}"
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
}
