//! What a Temporal server keeps of the `temporal_agent` example's runs, read back with the
//! Temporal CLI: with a codec key, neither the model's API key nor a token given as an
//! answer is in a run's history, in clear or base64 (without one, the token is, which
//! shows the check sees it); and a run that continues as new at its wait still ends as
//! one run. The runs are driven by the official Python SDK (`tests/python/
//! history_client.py`), whose payload codec is written apart from the crate's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus_test_support::{example_bin, temporal, wait::within_blocking};

use crate::common::shop_agent;

/// Patience for a slow machine: a run's steps, a worker's start.
const PATIENCE: Duration = Duration::from_secs(90);

fn python() -> String {
    toolnexus_test_support::sdk::python("temporalio cryptography")
}

/// `n` random bytes as hex, from the system's generator.
fn random_hex(n: usize) -> String {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom gives bytes");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("temporal-history-{}-{name}", std::process::id()))
}

/// The example's worker, killed when dropped.
struct Worker(Child);

impl Worker {
    /// `temporal_agent worker` on `queue`, its model at `model` with `api_key`.
    fn start(queue: &str, model: &MockLlm, api_key: &str, extra: &[&str]) -> Worker {
        let child = example_bin::command("temporal_agent")
            .args([
                "worker",
                "--address",
                &temporal::address(),
                "--task-queue",
                queue,
            ])
            .args(extra)
            .env("TOOLNEXUS_BASE_URL", model.base_url())
            .env("OPENAI_API_KEY", api_key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the example's worker starts");
        Worker(child)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Python client, on `queue`, with the codec key in `key` if any.
struct Client {
    queue: String,
    key: Option<PathBuf>,
}

impl Client {
    fn call(&self, args: &[&str]) -> Value {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/history_client.py"
        );
        let mut cmd = Command::new(python());
        cmd.arg(script)
            .arg(temporal::address())
            .args(["--task-queue", &self.queue]);
        if let Some(key) = &self.key {
            cmd.arg("--codec-key").arg(key);
        }
        let out = cmd.args(args).output().expect("TOOLNEXUS_TEST_PYTHON runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "history_client.py {args:?} failed: {stderr}"
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("history_client.py printed no JSON ({e}): {stderr}"))
    }

    fn start(&self, id: &str, prompt: &str) {
        self.call(&["start", id, prompt]);
    }

    /// What run `id` waits on, once it waits on `count` requests.
    fn waiting(&self, id: &str, count: usize) -> Vec<Value> {
        within_blocking(PATIENCE, || {
            let waiting = self.call(&["pending", id]);
            let waiting = waiting.as_array()?;
            (waiting.len() == count).then(|| waiting.clone())
        })
        .unwrap_or_else(|| panic!("run `{id}` never waited on {count} request(s)"))
    }

    /// `{"waiting": [...]}` when taken, `{"refused": "why"}` when not.
    fn answer(&self, id: &str, answer: Value) -> Value {
        self.call(&["answer", id, &answer.to_string()])
    }

    fn result(&self, id: &str) -> Value {
        self.call(&["result", id])
    }

    /// Approves the gpu run `id` waits to buy; returns its result, checked to carry the
    /// order made.
    fn approve_the_gpu(&self, id: &str) -> Value {
        let request = &self.waiting(id, 1)[0];
        assert_eq!(request["prompt"], "Approve purchase of gpu?", "{request}");
        let taken = self.answer(id, json!({"id": request["id"], "ok": true}));
        assert_eq!(taken["waiting"], json!([]), "{taken}");
        let result = self.result(id);
        assert_eq!(result["status"], "done", "{result}");
        assert!(
            result["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("Bought, order ORDER-")),
            "{result}"
        );
        result
    }
}

/// Every string of the history that is base64, decoded (lossily, as text): what a reader
/// of the history sees in its payloads.
/// The events of `history` (the CLI's JSON) whose text holds `needle`.
fn events_holding(history: &str, needle: &str) -> Vec<Value> {
    let parsed: Value = serde_json::from_str(history).expect("the CLI prints a history as JSON");
    let events = parsed["events"].as_array().cloned().unwrap_or_default();
    events
        .into_iter()
        .filter(|event| event.to_string().contains(needle))
        .collect()
}

/// Whether `event` is Temporal's record of the workflow's patch: the marker the worker's
/// core writes when a run first takes the patched path, or the search attribute listing the
/// run's patches, holding nothing but the patch's name.
fn names_a_patch(event: &Value) -> bool {
    let payloads: Vec<&Value> = match event["eventType"].as_str() {
        Some("EVENT_TYPE_MARKER_RECORDED") => {
            let marker = &event["markerRecordedEventAttributes"];
            if marker["markerName"] != "core_patch" {
                return false;
            }
            marker["details"]
                .as_object()
                .into_iter()
                .flat_map(|details| details.values())
                .flat_map(|detail| detail["payloads"].as_array().into_iter().flatten())
                .collect()
        }
        Some("EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES") => {
            let fields = &event["upsertWorkflowSearchAttributesEventAttributes"]
                ["searchAttributes"]["indexedFields"];
            match fields.as_object() {
                Some(fields) if fields.keys().all(|k| k == "TemporalChangeVersion") => {
                    fields.values().collect()
                }
                _ => return false,
            }
        }
        _ => return false,
    };
    !payloads.is_empty()
        && payloads.iter().all(|payload| {
            payload["data"]
                .as_str()
                .and_then(unbase64)
                .and_then(|data| serde_json::from_slice::<Value>(&data).ok())
                .is_some_and(|data| only_the_patch(&data))
        })
}

/// Whether `data` (a patch marker's or search attribute's value) holds the workflow's patch
/// name and no other text.
fn only_the_patch(data: &Value) -> bool {
    match data {
        Value::String(s) => s == "toolnexus-gates-in-workflow",
        Value::Array(items) => items.iter().all(only_the_patch),
        Value::Object(fields) => fields.iter().all(|(key, value)| match key.as_str() {
            "id" => only_the_patch(value),
            _ => !matches!(value, Value::String(_) | Value::Array(_) | Value::Object(_)),
        }),
        _ => true,
    }
}

fn decoded(history: &str) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::String(text) => {
                if let Some(bytes) = unbase64(text) {
                    out.push_str(&String::from_utf8_lossy(&bytes));
                    out.push('\n');
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(fields) => fields.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let json: Value = serde_json::from_str(history).expect("the CLI prints JSON");
    let mut out = String::new();
    walk(&json, &mut out);
    out
}

/// Standard base64 of `bytes`, padded.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
        out.extend(std::iter::repeat_n('=', 3 - chunk.len()));
    }
    out
}

/// `text` decoded from standard base64, when it is that.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=');
    if text.is_empty() || !text.len().is_multiple_of(4) || text.len() - digits.len() > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut held) = (0u32, 0u32);
    for c in digits.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = bits << 6 | u32::from(v);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    Some(out)
}

/// The forms `secret` takes inside base64 text, wherever it starts in the encoded bytes:
/// for each of the three alignments, the characters that encode its bytes alone.
fn base64_forms(secret: &str) -> Vec<String> {
    (0..3)
        .map(|shift| {
            let mut bytes = vec![b' '; shift];
            bytes.extend_from_slice(secret.as_bytes());
            let encoded = base64(&bytes);
            let first = (shift * 8).div_ceil(6);
            let last = (shift + secret.len()) * 8 / 6;
            encoded[first..last].to_owned()
        })
        .collect()
}

/// Where `secret` shows in `history`, in clear or in a base64 form.
fn shows(history: &str, secret: &str) -> Option<String> {
    if history.contains(secret) {
        return Some(format!("`{secret}` in clear"));
    }
    base64_forms(secret)
        .into_iter()
        .find(|form| history.contains(form.as_str()))
        .map(|form| format!("`{secret}` as base64 `{form}`"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime for the scripted model")
}

fn write_key(path: &Path) {
    std::fs::write(path, format!("{}\n", random_hex(32))).expect("the key file is written");
}

#[test]
fn base64_forms_are_found_at_every_alignment() {
    let secret = "tok-0123456789";
    for prefix in ["", "a", "ab", "abc", "{\"token\":\""] {
        let encoded = base64(format!("{prefix}{secret}\"}}").as_bytes());
        assert!(
            shows(&encoded, secret).is_some(),
            "missed after {prefix:?}: {encoded}"
        );
    }
    assert_eq!(base64(b"hello"), "aGVsbG8=");
    for text in ["", "h", "he", "hel", "hello, world"] {
        let encoded = base64(text.as_bytes());
        assert_eq!(
            unbase64(&encoded).as_deref(),
            (!text.is_empty()).then_some(text.as_bytes())
        );
    }
    assert!(unbase64("not base64!").is_none());
    assert!(shows(&base64(b"nothing to see"), secret).is_none());
}

#[test]
fn with_a_codec_key_no_secret_is_in_the_history_and_without_one_the_token_is() {
    let rt = runtime();
    let model = rt.block_on(shop_agent::model());
    let api_key = format!("sk-test-{}", random_hex(16));
    let key_file = scratch("codec.key");
    write_key(&key_file);
    let key_arg = key_file.to_str().expect("a UTF-8 temp path");

    // Encrypted: the worker and the Python client share the key.
    let sealed_queue = format!("sealed-{}", random_hex(6));
    let _sealed_worker = Worker::start(&sealed_queue, &model, &api_key, &["--codec-key", key_arg]);
    let sealed = Client {
        queue: sealed_queue,
        key: Some(key_file.clone()),
    };
    let token = format!("tok-{}", random_hex(16));
    let login = format!("login-{}", random_hex(6));
    sealed.start(&login, "log me in");
    let request = &sealed.waiting(&login, 1)[0];
    assert_eq!(request["kind"], "authorization", "{request}");
    assert_eq!(request["url"], shop_agent::LOGIN_URL, "{request}");
    let taken = sealed.answer(
        &login,
        json!({"id": request["id"], "ok": true, "data": {"token": token}}),
    );
    assert_eq!(taken["waiting"], json!([]), "{taken}");
    let signed_in = sealed.result(&login);
    assert_eq!(signed_in["status"], "done", "{signed_in}");
    assert_eq!(signed_in["text"], "You are signed in.", "{signed_in}");

    let buy = format!("buy-{}", random_hex(6));
    sealed.start(&buy, "buy a gpu");
    sealed.approve_the_gpu(&buy);

    // The key was really used: the model saw it on every call.
    let calls = model.requests();
    assert!(calls.len() >= 4, "{} model calls", calls.len());
    let bearer = format!("Bearer {api_key}");
    assert!(
        calls
            .iter()
            .all(|c| c.header("authorization") == Some(bearer.as_str())),
        "a model call without the API key"
    );

    for id in [&login, &buy] {
        let history = temporal::history(id);
        // Every payload was sealed by the codec: its encoding names it.
        assert!(
            history.contains(&base64(b"binary/encrypted")),
            "{id}: no encrypted payload in the history"
        );
        // Every payload the run wrote was sealed. Temporal's own record of a patch (its
        // marker, and the search attribute listing the run's patches) is written by the
        // worker's core, never through a codec, and names the patch alone.
        let plain = events_holding(&history, &base64(b"json/plain"));
        let unsealed: Vec<&Value> = plain.iter().filter(|e| !names_a_patch(e)).collect();
        assert!(unsealed.is_empty(), "{id}: plain payloads in {unsealed:#?}");
        let opened = decoded(&history);
        for secret in [&api_key, &token] {
            if let Some(found) = shows(&history, secret).or_else(|| shows(&opened, secret)) {
                panic!("{id}'s history holds {found}");
            }
        }
    }

    // Plain: the same sign-in without a codec keeps the token where anyone reads it.
    let plain_queue = format!("plain-{}", random_hex(6));
    let _plain_worker = Worker::start(&plain_queue, &model, &api_key, &[]);
    let plain = Client {
        queue: plain_queue,
        key: None,
    };
    let clear_token = format!("tok-{}", random_hex(16));
    let login = format!("login-{}", random_hex(6));
    plain.start(&login, "log me in");
    let request = &plain.waiting(&login, 1)[0];
    plain.answer(
        &login,
        json!({"id": request["id"], "ok": true, "data": {"token": clear_token}}),
    );
    assert_eq!(plain.result(&login)["status"], "done");
    let history = temporal::history(&login);
    assert!(
        decoded(&history).contains(&clear_token),
        "the token, in clear in a payload, is missed"
    );
    assert!(
        !history.contains(&clear_token) && shows(&history, &clear_token).is_some(),
        "the token, as base64, is missed"
    );
    // The API key never enters a payload, sealed or not.
    assert!(shows(&history, &api_key).is_none() && shows(&decoded(&history), &api_key).is_none());
    let _ = std::fs::remove_file(&key_file);
}

#[test]
fn a_long_run_continues_as_new_at_its_wait_and_still_ends_as_one_run() {
    let rt = runtime();
    let model = rt.block_on(shop_agent::model());
    let queue = format!("long-{}", random_hex(6));
    let orders = scratch("orders.txt");
    let orders_arg = orders.to_str().expect("a UTF-8 temp path");
    let _worker = Worker::start(
        &queue,
        &model,
        "sk-test-long",
        &["--continue-after", "10", "--orders", orders_arg],
    );
    let client = Client { queue, key: None };
    let runs = |id: &str, count: usize| -> Vec<Value> {
        within_blocking(PATIENCE, || {
            let runs = client.call(&["runs", id]);
            let runs = runs.as_array()?;
            (runs.len() >= count).then(|| runs.clone())
        })
        .unwrap_or_else(|| panic!("run `{id}` never had {count} executions"))
    };

    // One purchase: the run continues as new at its wait, and is answered in the new one.
    let id = format!("long-{}", random_hex(6));
    client.start(&id, "buy a gpu");
    let chain = runs(&id, 2);
    assert_eq!(chain[0]["status"], "CONTINUED_AS_NEW", "{chain:?}");
    let result = client.approve_the_gpu(&id);
    // The result covers the whole run: the first execution's model call and its halted
    // purchase as well as the second's.
    let calls = result["tool_calls"].as_array().expect("tool calls");
    assert!(
        calls.iter().any(|c| c["name"] == "purchase"
            && c["output"]
                .as_str()
                .is_some_and(|o| o.starts_with("ORDER-"))),
        "{result}"
    );
    assert!(result["turns"].as_u64() >= Some(2), "{result}");
    let chain = runs(&id, 2);
    assert_eq!(chain.len(), 2, "{chain:?}");
    assert_eq!(chain[1]["status"], "COMPLETED", "{chain:?}");

    // Two purchases, answered one at a time: the first answer, taken by one execution, is
    // still refused by the next.
    let id = format!("long-{}", random_hex(6));
    client.start(&id, "buy a gpu and a tpu");
    runs(&id, 2);
    let both = client.waiting(&id, 2);
    let (first, second) = (&both[0]["id"], &both[1]["id"]);
    let taken = client.answer(&id, json!({"id": first, "ok": true}));
    assert_eq!(
        taken["waiting"].as_array().map(Vec::len),
        Some(1),
        "{taken}"
    );
    // The first execution continued as new at its first wait; the second, resumed with the
    // first answer, halts again on the second purchase and continues as new there too.
    let chain = runs(&id, 3);
    assert_eq!(chain[2]["status"], "RUNNING", "{chain:?}");
    client.waiting(&id, 1);
    let again = client.answer(&id, json!({"id": first, "ok": false, "reason": "declined"}));
    let refused = again["refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("already answered"),
        "{again} after {chain:?}"
    );
    client.answer(&id, json!({"id": second, "ok": true}));
    let result = client.result(&id);
    assert_eq!(result["status"], "done", "{result}");
    let orders_made: Vec<String> = std::fs::read_to_string(&orders)
        .expect("the order book")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(orders_made.len(), 3, "{orders_made:?}");
    let _ = std::fs::remove_file(&orders);
    let _ = std::fs::remove_file(format!("{orders_arg}.keys"));
}
