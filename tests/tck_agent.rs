//! The `tck_agent` example as the A2A conformance kit drives it: started on a free port, and
//! driven by the official Python `a2a-sdk` client (`TOOLNEXUS_TEST_PYTHON`, set up by
//! scripts/test.sh) over both bindings through the scenarios its message ids name — a task
//! completed with a message, an artifact of each part type, a message instead of a task, a
//! question answered in words, and a streamed lifecycle.

use serde_json::{json, Value};
use toolnexus_test_support::example_bin::Serving;

/// The A2A crate's driver of the official client, run on `steps` over `binding`.
fn drive(url: &str, binding: &str, steps: Value) -> Vec<Value> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/toolnexus-a2a/tests/a2a_driver.py"
    );
    let needs = "'a2a-sdk[http-server]==1.3.0'";
    toolnexus_test_support::sdk::drive(needs, script, &[url, binding], &steps)
}

/// The one part of a task's only artifact.
fn artifact_part(result: &Value) -> &Value {
    let artifacts = result["task"]["artifacts"].as_array();
    assert_eq!(artifacts.map(Vec::len), Some(1), "one artifact: {result}");
    &result["task"]["artifacts"][0]["parts"][0]
}

fn state(result: &Value) -> &str {
    result["task"]["status"]["state"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn the_tck_agent_does_what_each_scenario_says_on_both_bindings() {
    let agent = Serving::start("tck_agent", &["--port", "0"], "A2A TCK agent at ");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let send = |id: &str| json!({"send": {"text": "TCK test", "messageId": format!("{id}-{binding}")}});
        let out = drive(
            &agent.url,
            binding,
            json!([
                send("tck-complete-task"),
                send("tck-artifact-text"),
                send("tck-artifact-file"),
                send("tck-artifact-file-url"),
                send("tck-artifact-data"),
                send("tck-message-response"),
                send("tck-input-required"),
                {"send": {"text": "Follow-up message", "task": "$task5"}},
                {"stream": {"text": "TCK test", "messageId": format!("tck-stream-001-{binding}")}},
            ]),
        );
        let what = |i: usize| format!("{binding}, step {i}: {}", out[i]);

        assert_eq!(state(&out[0]), "TASK_STATE_COMPLETED", "{}", what(0));
        let said = &out[0]["task"]["status"]["message"]["parts"][0]["text"];
        assert_eq!(said, "Hello from TCK", "{}", what(0));

        assert_eq!(
            artifact_part(&out[1])["text"],
            "Generated text content",
            "{}",
            what(1)
        );

        let file = artifact_part(&out[2]);
        assert_eq!(file["raw"], "dGNr", "the bytes `tck`: {}", what(2));
        assert_eq!(
            (&file["filename"], &file["mediaType"]),
            (&json!("output.txt"), &json!("text/plain"))
        );

        let link = artifact_part(&out[3]);
        assert_eq!(link["url"], "https://example.com/output.txt", "{}", what(3));
        assert_eq!(link["filename"], "output.txt", "{}", what(3));

        let data = &artifact_part(&out[4])["data"];
        // The SDK reads a data part as protobuf's `Struct`, whose numbers are doubles.
        assert_eq!(data["key"], "value", "{}", what(4));
        assert_eq!(data["count"].as_f64(), Some(42.0), "{}", what(4));

        let reply = &out[5]["events"][0]["message"];
        assert_eq!(
            reply["parts"][0]["text"],
            "Direct message response",
            "{}",
            what(5)
        );
        assert_eq!(
            out[5]["events"].as_array().map(Vec::len),
            Some(1),
            "{}",
            what(5)
        );

        assert_eq!(state(&out[6]), "TASK_STATE_INPUT_REQUIRED", "{}", what(6));
        assert_eq!(state(&out[7]), "TASK_STATE_COMPLETED", "{}", what(7));
        let done = &out[7]["task"]["status"]["message"]["parts"][0]["text"];
        assert_eq!(
            done,
            "Done: Follow-up message",
            "the words answered: {}",
            what(7)
        );

        let events = out[8]["events"].as_array().cloned().unwrap_or_default();
        let kinds: Vec<&str> = events
            .iter()
            .filter_map(|e| e.as_object()?.keys().next().map(String::as_str))
            .collect();
        assert_eq!(kinds.first(), Some(&"task"), "{}", what(8));
        assert_eq!(
            &kinds[kinds.len() - 2..],
            ["artifactUpdate", "statusUpdate"],
            "{}",
            what(8)
        );
        let artifact = &events[kinds.len() - 2]["artifactUpdate"]["artifact"];
        assert_eq!(
            artifact["parts"][0]["text"],
            "Stream hello from TCK",
            "{}",
            what(8)
        );
        let last = &events[kinds.len() - 1]["statusUpdate"]["status"]["state"];
        assert_eq!(last, "TASK_STATE_COMPLETED", "{}", what(8));
    }
}
