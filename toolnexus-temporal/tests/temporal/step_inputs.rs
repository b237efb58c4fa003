//! What a stretch's history costs: a run of twenty tool calls, one a turn, on the dev
//! server. A step activity's input names its step and where the stretch starts; it carries
//! the steps made before it only while they are small, and past that its activity reads
//! them from the run's history, so no input grows as the stretch goes on, and the history
//! grows with the stretch's length rather than with its square.
//! `cargo test --test temporal -- step_inputs --nocapture` prints the history's size.

use prost::Message as _;
use serde_json::json;
use temporalio_client::{WorkflowExecutionInfo, WorkflowFetchHistoryOptions};
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::history::v1::History;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{LlmClient, NativeTool, RunStatus, ToolResult, Toolkit};
use toolnexus_temporal::Agent;

use crate::common::{patiently, runs, sdk_client, unique, Serving, MODEL};

/// The run's tool calls, one a turn.
const CALLS: usize = 20;

/// The model reads page after page, one a turn, then says it is done.
fn script(req: &RecordedRequest) -> Reply {
    let read = req.tool_results().len();
    if read < CALLS {
        Reply::tool_call(format!("call_{read}"), "read_page", json!({ "page": read }))
    } else {
        Reply::text(format!("read {read} pages"))
    }
}

/// `read_page(page)`: a paragraph, as a tool that fetches a document returns one.
fn pages() -> Toolkit {
    let read = NativeTool::of(
        "read_page",
        "Reads a page",
        json!({"type": "object", "properties": {"page": {"type": "integer"}}, "required": ["page"]}),
        |args: serde_json::Value, _ctx| async move {
            let page = args["page"].as_u64().unwrap_or_default();
            ToolResult::ok(format!(
                "page {page}: {}",
                "lorem ipsum dolor sit amet ".repeat(8)
            ))
        },
    );
    Toolkit::builder().tool(read).build().expect("one tool")
}

#[tokio::test(flavor = "multi_thread")]
async fn no_step_input_grows_as_the_stretch_goes_on() {
    let model = MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts");
    let queue = unique("step-inputs");
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model(MODEL)
        .api_key("sk-test-scripted")
        .max_turns(CALLS + 1)
        .build()
        .expect("a client of the scripted model");
    let worker = Serving::start(Agent::new(client, pages()), &queue);
    let runs = runs(&queue).await;
    let id = unique("twenty-calls");
    runs.start(&id, "read every page")
        .await
        .expect("the run starts");
    let result = patiently("the run's result", runs.result(&id))
        .await
        .expect("the run ends");
    assert_eq!(result.status, RunStatus::Done, "{result:?}");
    assert_eq!(result.tool_calls.len(), CALLS);
    assert_eq!(result.text, format!("read {CALLS} pages"));

    let events = WorkflowExecutionInfo::builder()
        .namespace("default")
        .workflow_id(id.clone())
        .build()
        .bind_untyped(sdk_client().await)
        .fetch_history(WorkflowFetchHistoryOptions::default())
        .into_events()
        .await
        .expect("the history is fetched");
    let inputs: Vec<usize> = events
        .iter()
        .filter_map(|e| match &e.attributes {
            Some(Attributes::ActivityTaskScheduledEventAttributes(step)) => {
                step.input.as_ref().map(|i| i.encoded_len())
            }
            _ => None,
        })
        .collect();
    let history = History {
        events: events.clone(),
    }
    .encoded_len();
    let (smallest, largest) = (
        inputs.iter().copied().min().unwrap_or_default(),
        inputs.iter().copied().max().unwrap_or_default(),
    );
    println!(
        "a run of {CALLS} tool calls, one a turn: {} events, {history} bytes of history; \
         {} step inputs, {} bytes in all, {smallest} to {largest} bytes each",
        events.len(),
        inputs.len(),
        inputs.iter().sum::<usize>(),
    );
    assert_eq!(
        inputs.len(),
        2 * CALLS + 1,
        "a model step and a tool step a turn"
    );
    // The first few inputs carry the few steps made before them; past a few kilobytes an
    // input names where they are instead, and carries nothing it made: the later inputs
    // are the size of the first.
    assert!(
        largest < smallest + 4096,
        "a step input carries too much: {smallest} to {largest} bytes"
    );
    let later = &inputs[inputs.len() / 2..];
    assert!(
        later.iter().all(|&size| size < smallest * 2),
        "step inputs grow with the stretch: {smallest} bytes first, then {later:?}"
    );
    worker.stop().await;
}
