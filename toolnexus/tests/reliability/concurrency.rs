//! Many runs on one shared client, half of them suspending: every suspended call gets the
//! answer to its own request, in-process (one shared `wait_for`) and durably (resumed with
//! `run_with_answer`). Delays on the model side and in `wait_for` shuffle the interleaving.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, ClientError, NativeTool, Request, RunResult, RunStatus, Style, Tool, ToolContext,
    ToolResult, Toolkit,
};

use crate::support::{jitter, last_message, on, Last, PATIENCE};

const RUNS: usize = 64;

/// Run `i` asks for `buy item-i` (suspends for approval) when `i` is even, `echo item-i`
/// otherwise.
fn prompt(i: usize) -> String {
    let verb = if i % 2 == 0 { "buy" } else { "echo" };
    format!("{verb} item-{i}")
}

/// The model: calls the tool the prompt names, then repeats the tool's output as its answer;
/// each reply late by a delay derived from the request.
async fn model() -> MockLlm {
    MockLlm::with_fn(|req| match last_message(req) {
        Last::ToolResult(output) => {
            Reply::text(format!("done: {output}")).delayed(jitter(&output, 8))
        }
        Last::User(prompt) => {
            let (tool, item) = prompt.split_once(' ').unwrap_or(("echo", ""));
            Reply::tool_call(format!("call-{item}"), tool, json!({"item": item}))
                .delayed(jitter(&prompt, 8))
        }
    })
    .await
    .unwrap()
}

fn item_of(args: &Value) -> String {
    args["item"].as_str().unwrap_or_default().to_owned()
}

/// `buy`: suspends with a request carrying its item; re-run with an answer, reports the
/// item the answer approved and the answer's id.
fn buy() -> impl Tool {
    NativeTool::of(
        "buy",
        "Buys an item once approved",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        |args: Value, ctx: ToolContext| async move {
            let item = item_of(&args);
            match ctx.answer {
                None => ToolResult::pending(
                    Request::new("approval", format!("Buy {item}?"))
                        .with_data(json!({"item": item})),
                ),
                Some(answer) => ToolResult::ok(format!(
                    "bought {item}; approved {}; answer {}",
                    answer.data.as_ref().map(item_of).unwrap_or_default(),
                    answer.id
                )),
            }
        },
    )
}

fn echo() -> impl Tool {
    NativeTool::of(
        "echo",
        "Echoes an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        |args: Value, _ctx: ToolContext| async move { format!("echo {}", item_of(&args)) },
    )
}

fn toolkit() -> Toolkit {
    Toolkit::builder().tool(buy()).tool(echo()).build().unwrap()
}

/// The answer a host gives: it approves exactly the item the request names.
fn approve(request: &Request) -> Answer {
    let item = request.data.as_ref().map(item_of).unwrap_or_default();
    Answer::ok(request.id.clone()).with_data(json!({"item": item}))
}

async fn run_all(
    client: &toolnexus::LlmClient,
    tk: &Toolkit,
) -> Vec<(usize, Result<RunResult, ClientError>)> {
    let tasks: Vec<_> = (0..RUNS)
        .map(|i| {
            let (client, tk) = (client.clone(), tk.clone());
            tokio::spawn(async move { (i, client.run(prompt(i), &tk).await) })
        })
        .collect();
    let mut results = Vec::with_capacity(RUNS);
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_wait_for_answers_every_run_its_own_request() {
    let mock = model().await;
    // request id -> the item its request named, as wait_for saw it
    let asked: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let seen = asked.clone();
    let client = on(&mock, Style::OpenAi)
        .wait_for(move |request: Request| {
            let seen = seen.clone();
            async move {
                tokio::time::sleep(jitter(&request.id, 15)).await;
                let item = request.data.as_ref().map(item_of).unwrap_or_default();
                let fresh = seen.lock().unwrap().insert(request.id.clone(), item);
                assert!(fresh.is_none(), "request {} asked twice", request.id);
                approve(&request)
            }
        })
        .build()
        .unwrap();
    let tk = toolkit();

    let results = tokio::time::timeout(PATIENCE, run_all(&client, &tk))
        .await
        .expect("the runs finish");

    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), RUNS / 2, "one request per suspending run");
    for (i, result) in results {
        let result = result.unwrap();
        let item = format!("item-{i}");
        assert_eq!(result.status, RunStatus::Done, "run {i}");
        assert_eq!(result.tool_calls.len(), 1, "run {i}");
        let output = &result.tool_calls[0].output;
        if i % 2 == 0 {
            let answer_id = output.rsplit("answer ").next().unwrap_or_default();
            assert_eq!(
                output,
                &format!("bought {item}; approved {item}; answer {answer_id}")
            );
            assert_eq!(
                asked.get(answer_id),
                Some(&item),
                "run {i} got the answer to its own request"
            );
        } else {
            assert_eq!(output, &format!("echo {item}"));
        }
        assert_eq!(result.text, format!("done: {output}"));
    }
    assert_eq!(mock.calls(), RUNS * 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halted_runs_resume_concurrently_with_their_own_answers() {
    let mock = model().await;
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = toolkit();

    let results = tokio::time::timeout(PATIENCE, run_all(&client, &tk))
        .await
        .expect("the runs finish");

    let mut halted = Vec::new();
    for (i, result) in results {
        let result = result.unwrap();
        let item = format!("item-{i}");
        if i % 2 != 0 {
            assert_eq!(result.status, RunStatus::Done, "run {i}");
            assert_eq!(result.text, format!("done: echo {item}"));
            continue;
        }
        assert_eq!(result.status, RunStatus::Pending, "run {i}");
        let request = result.pending.clone().unwrap();
        assert_eq!(request.data.as_ref().map(item_of), Some(item.clone()));
        halted.push((i, request, result.messages));
    }
    assert_eq!(halted.len(), RUNS / 2);
    let mut ids: Vec<&str> = halted.iter().map(|(_, r, _)| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        RUNS / 2,
        "every halted run has its own request id"
    );

    // A transcript refuses another run's request, even with a matching answer.
    let (_, other, _) = &halted[1];
    let crossed = client
        .run_with_answer(halted[0].2.clone(), other, approve(other), &tk)
        .await
        .unwrap_err();
    assert!(
        matches!(crossed, ClientError::RequestMismatch(_)),
        "{crossed}"
    );

    let resumes: Vec<_> = halted
        .into_iter()
        .map(|(i, request, messages)| {
            let (client, tk) = (client.clone(), tk.clone());
            tokio::spawn(async move {
                tokio::time::sleep(jitter(&request.id, 10)).await;
                let answer = approve(&request);
                let resumed = client
                    .run_with_answer(messages, &request, answer, &tk)
                    .await;
                (i, request, resumed)
            })
        })
        .collect();
    let resumed = tokio::time::timeout(PATIENCE, futures::future::join_all(resumes))
        .await
        .expect("the resumes finish");
    for joined in resumed {
        let (i, request, result) = joined.unwrap();
        let result = result.unwrap();
        let item = format!("item-{i}");
        let output = format!("bought {item}; approved {item}; answer {}", request.id);
        assert_eq!(result.status, RunStatus::Done, "run {i}");
        assert_eq!(result.tool_calls[0].output, output);
        assert_eq!(result.text, format!("done: {output}"));
    }
    assert_eq!(mock.calls(), RUNS + RUNS / 2 + RUNS / 2);
}
