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

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use temporalio_client::{WorkflowFetchHistoryOptions, WorkflowHistory};
use temporalio_sdk::workflow_replayer::{
    WorkflowReplayError, WorkflowReplayFailure, WorkflowReplayer, WorkflowReplayerOptions,
};
use toolnexus::testing::MockLlm;
use toolnexus::{Answer, RunStatus};
use toolnexus_temporal::{Agent, AgentRun};

use common::{client, patiently, runs, shop_toolkit, unique, waiting, Serving};

/// The runs recorded, each a file `tests/histories/NAME.json`.
const RECORDED: [&str; 4] = ["approve", "decline", "sign-in", "two-approvals"];

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
        client("http://127.0.0.1:9/v1"),
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
    let replayer = replayer(recorded_agent());
    let results = replayer
        .replay_workflows(RECORDED.map(recorded))
        .await
        .expect("the replayer runs");
    assert_eq!(results.len(), RECORDED.len());
    let failures: Vec<String> = RECORDED
        .iter()
        .zip(&results)
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
    for (name, result) in RECORDED.iter().zip(&results) {
        // A run that was answered has more than its first stretch: the replay went past
        // the wait, through the update, into the steps after it.
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

/// Records the runs the replay test replays, on the dev server, into `tests/histories/`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "rewrites tests/histories/: scripts/test.sh -p toolnexus-temporal --test replay -- --ignored"]
async fn record_histories() {
    let model = MockLlm::with_fn(common::shop_agent::script)
        .await
        .expect("the scripted model starts");
    let bought = Arc::new(AtomicUsize::new(0));
    let agent = Agent::new(client(&model.base_url()), shop_toolkit(bought));
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
        for request in waiting(&runs, &id, count).await {
            let answer = if name == "decline" {
                Answer::decline(&request.id, "too dear")
            } else {
                Answer::ok(&request.id)
            };
            runs.answer(&id, &answer)
                .await
                .expect("the answer is taken");
        }
        let result = patiently("the run's end", runs.result(&id))
            .await
            .expect("the run ends well");
        assert_eq!(result.status, RunStatus::Done, "{name}: {}", result.text);
        let history = client
            .get_workflow_handle::<AgentRun>(&id)
            .fetch_history(WorkflowFetchHistoryOptions::default())
            .to_json()
            .await
            .expect("the history is fetched");
        let history: serde_json::Value =
            serde_json::from_slice(&history).expect("the SDK writes JSON");
        let pretty = serde_json::to_string_pretty(&history).expect("JSON prints") + "\n";
        std::fs::write(histories().join(format!("{name}.json")), pretty)
            .expect("the history is written");
    }
    worker.stop().await;
}
