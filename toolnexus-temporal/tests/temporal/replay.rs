//! Recorded histories of the shop agent's runs replay against the workflow as it is now:
//! a change to `AgentRun` (or to the loop it replays) that would make a running workflow
//! decide otherwise fails here, before it reaches a worker with runs in flight.
//!
//! The histories in `tests/histories/` were recorded from the dev server by the ignored
//! test `record_histories` (see CONTRIBUTING.md); they are unencrypted, since a history
//! written with a codec key does not decode without it. They are in the JSON form of the
//! Rust SDK's history protos (its `WorkflowHistory::to_json`), which is what its replayer
//! reads back: the SDK does not read the proto3 JSON that `temporal workflow show --output
//! json` prints (field names, enums and 64-bit numbers are spelt otherwise there).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use temporalio_client::{WorkflowExecutionInfo, WorkflowFetchHistoryOptions, WorkflowHistory};
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::history::v1::{History, HistoryEvent};
use temporalio_sdk::workflow_replayer::{
    WorkflowReplayError, WorkflowReplayFailure, WorkflowReplayer, WorkflowReplayerOptions,
};
use toolnexus::testing::MockLlm;
use toolnexus::{Answer, RunStatus};
use toolnexus_temporal::{Agent, AgentRun, Runs};

use crate::common::{
    self, client as client_of, patiently, runs, shop_toolkit, unique, waiting, Serving,
};

/// The runs recorded, each a file `tests/histories/NAME.json`.
const RECORDED: [&str; 4] = ["approve", "decline", "sign-in", "two-approvals"];

/// A purchase by an agent that continues as new after [`CONTINUED_AFTER`] events: its first
/// execution, which continued as new at its wait, and its second, answered.
const CONTINUED: [&str; 2] = ["continued-first", "continued-second"];
const CONTINUED_AFTER: u32 = 10;

fn histories() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/histories")
}

fn recorded(name: &str) -> WorkflowHistory {
    let path = histories().join(format!("{name}.json"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}): record the histories again (CONTRIBUTING.md)",
            path.display()
        )
    });
    WorkflowHistory::from_json(&bytes)
        .unwrap_or_else(|e| panic!("{} is not a history: {e}", path.display()))
}

/// The agent the runs were recorded with. The workflow makes no call of its own (its
/// steps' outputs come from the history), so its client points nowhere.
fn recorded_agent() -> Agent {
    Agent::new(
        client_of("http://127.0.0.1:9/v1"),
        shop_toolkit(Arc::new(AtomicUsize::new(0))),
    )
}

/// A replayer of `AgentRun` running `agent`.
fn replayer(agent: Agent) -> WorkflowReplayer {
    let options = WorkflowReplayerOptions::new()
        .register_workflow_with_factory::<AgentRun, _>(move || AgentRun::new(agent.clone()))
        .expect("AgentRun registers")
        .build();
    WorkflowReplayer::new(options).expect("a replayer")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_recorded_run_replays_against_the_workflow_as_it_is() {
    let results = replayer(recorded_agent())
        .replay_workflows(RECORDED.map(recorded))
        .await
        .expect("the replayer runs");
    assert_eq!(results.len(), RECORDED.len());
    let continued = replayer(recorded_agent().continue_after(CONTINUED_AFTER))
        .replay_workflows(CONTINUED.map(recorded))
        .await
        .expect("the replayer runs");
    let failures: Vec<String> = RECORDED
        .iter()
        .chain(&CONTINUED)
        .zip(results.iter().chain(&continued))
        .filter_map(|(name, result)| {
            let failure = result.replay_failure.as_ref()?;
            Some(format!("{name}: {failure}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "recorded runs no longer replay:\n{}",
        failures.join("\n")
    );
    // Each of these runs was answered: its replay went past the wait, through the update,
    // into the steps after it.
    for (name, result) in RECORDED.iter().zip(&results) {
        assert!(
            result.history.events().len() > 20,
            "{name} holds {} events: record it again",
            result.history.events().len()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workflow_that_would_decide_otherwise_does_not_replay() {
    // An agent that continues as new after a single event would hand its first wait to a
    // new execution, where the recorded run waited and was answered.
    let error = replayer(recorded_agent().continue_after(1))
        .replay_workflow(recorded("approve"))
        .await
        .expect_err("a changed workflow must not replay");
    assert!(
        matches!(
            error,
            WorkflowReplayError::Replay(WorkflowReplayFailure::Nondeterminism { .. })
        ),
        "not a nondeterminism error: {error}"
    );
}

/// Gives run `id` every one of `answers` and waits for it to end well.
async fn end_with(runs: &Runs, id: &str, answers: impl IntoIterator<Item = Answer>) {
    for answer in answers {
        runs.answer(id, &answer).await.expect("the answer is taken");
    }
    let result = patiently("the run's end", runs.result(id))
        .await
        .expect("the run ends well");
    assert_eq!(result.status, RunStatus::Done, "{id}: {}", result.text);
}

/// The events of run `id`'s history as it stands (of its latest execution, or of `run_id`).
async fn events(
    client: &temporalio_client::Client,
    id: &str,
    run_id: Option<String>,
) -> Vec<HistoryEvent> {
    WorkflowExecutionInfo::builder()
        .namespace("default")
        .workflow_id(id)
        .maybe_run_id(run_id)
        .build()
        .bind_untyped(client.clone())
        .fetch_history(WorkflowFetchHistoryOptions::default())
        .into_events()
        .await
        .expect("the history is fetched")
}

/// How many activities `events` schedule.
fn activities(events: &[HistoryEvent]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e.attributes,
                Some(Attributes::ActivityTaskScheduledEventAttributes(_))
            )
        })
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_gate_halts_the_run_after_the_model_call_alone_and_its_run_replays() {
    let model = MockLlm::with_fn(common::shop_agent::script)
        .await
        .expect("the scripted model starts");
    let bought = Arc::new(AtomicUsize::new(0));
    let agent = Agent::new(client_of(&model.base_url()), shop_toolkit(bought.clone()));
    let queue = unique("declared-gate");
    let worker = Serving::start(agent, &queue);
    let runs = runs(&queue).await;
    let client = common::sdk_client().await;
    let mut answered = Vec::new();
    for (prompt, items) in [("buy a gpu", 1), ("buy a gpu and a tpu", 2)] {
        let id = unique("declared-gate");
        runs.start(&id, prompt).await.expect("the run starts");
        let requests = waiting(&runs, &id, items).await;
        // The gates were decided in the workflow: before the wait, the model's reply is the
        // only step activity.
        let halted = events(&client, &id, None).await;
        assert_eq!(activities(&halted), 1, "{prompt}: {halted:?}");
        assert_eq!(bought.load(Ordering::SeqCst), answered.len(), "{prompt}");
        let approvals = requests.iter().map(|r| Answer::ok(&r.id));
        end_with(&runs, &id, approvals).await;
        answered.push((id, items));
    }
    assert_eq!(bought.load(Ordering::SeqCst), 3, "each purchase made once");
    worker.stop().await;

    let mut histories = Vec::new();
    for (id, items) in &answered {
        let events = events(&client, id, None).await;
        // After the wait, the purchases, each run on its answer, and the model's reply.
        assert_eq!(activities(&events), items + 2, "{id}: {events:?}");
        histories.push(WorkflowHistory::from(History { events }));
    }
    let results = replayer(recorded_agent())
        .replay_workflows(histories)
        .await
        .expect("the replayer runs");
    for ((id, _), result) in answered.iter().zip(&results) {
        assert!(
            result.replay_failure.is_none(),
            "{id} does not replay: {:?}",
            result.replay_failure
        );
    }
}

/// Writes run `id`'s history (of its latest execution, or of `run_id`) as `NAME.json`, in
/// the form the SDK's replayer reads; returns it.
async fn record(
    client: &temporalio_client::Client,
    name: &str,
    id: &str,
    run_id: Option<String>,
) -> serde_json::Value {
    let events = events(client, id, run_id).await;
    // As the SDK's `WorkflowHistory::to_json` writes it.
    let history = serde_json::to_value(History { events }).expect("a history is JSON");
    let pretty = serde_json::to_string_pretty(&history).expect("JSON prints") + "\n";
    std::fs::write(histories().join(format!("{name}.json")), pretty)
        .expect("the history is written");
    history
}

/// Records the runs the replay test replays, on the dev server, into `tests/histories/`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "rewrites tests/histories/: scripts/test.sh -p toolnexus-temporal --test temporal -- --ignored replay::record_histories"]
async fn record_histories() {
    let model = MockLlm::with_fn(common::shop_agent::script)
        .await
        .expect("the scripted model starts");
    let bought = Arc::new(AtomicUsize::new(0));
    let agent = Agent::new(client_of(&model.base_url()), shop_toolkit(bought));
    let queue = unique("record");
    let worker = Serving::start(agent, &queue);
    let runs = runs(&queue).await;
    let client = common::sdk_client().await;
    std::fs::create_dir_all(histories()).expect("the histories' folder");
    for name in RECORDED {
        let id = unique(name);
        let prompt = if name == "sign-in" {
            "log me in"
        } else if name == "two-approvals" {
            "buy a gpu and a tpu"
        } else {
            "buy a gpu"
        };
        runs.start(&id, prompt).await.expect("the run starts");
        let count = if name == "two-approvals" { 2 } else { 1 };
        let answers = waiting(&runs, &id, count).await.into_iter().map(|request| {
            if name == "decline" {
                Answer::decline(&request.id, "too dear")
            } else {
                Answer::ok(&request.id)
            }
        });
        end_with(&runs, &id, answers).await;
        record(&client, name, &id, None).await;
    }
    worker.stop().await;

    let continuing = Agent::new(
        client_of(&model.base_url()),
        shop_toolkit(Arc::new(AtomicUsize::new(0))),
    )
    .continue_after(CONTINUED_AFTER);
    let queue = unique("record-continued");
    let worker = Serving::start(continuing, &queue);
    let runs = common::runs(&queue).await;
    let id = unique("continued");
    runs.start(&id, "buy a gpu").await.expect("the run starts");
    let request = waiting(&runs, &id, 1).await.remove(0);
    runs.answer(&id, &Answer::ok(&request.id))
        .await
        .expect("the answer is taken");
    patiently("the run's end", runs.result(&id))
        .await
        .expect("the run ends well");
    let second = record(&client, CONTINUED[1], &id, None).await;
    let first = second["events"][0]["attributes"]["WorkflowExecutionStartedEventAttributes"]
        ["continued_execution_run_id"]
        .as_str()
        .filter(|run| !run.is_empty())
        .unwrap_or_else(|| panic!("run `{id}` did not continue as new"))
        .to_owned();
    record(&client, CONTINUED[0], &id, Some(first)).await;
    worker.stop().await;
}
