//! The offline testing stub (`toolnexus::testing`) driven over real HTTP with a plain
//! reqwest client: both wire formats, JSON and SSE, errors, delays, recording.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

const OPENAI: &str = "/chat/completions";
const ANTHROPIC: &str = "/messages";

async fn post(mock: &MockLlm, endpoint: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{endpoint}", mock.base_url()))
        .json(&body)
        .send()
        .await
        .expect("the mock answers")
}

async fn post_json(mock: &MockLlm, endpoint: &str, body: Value) -> (u16, Value) {
    let resp = post(mock, endpoint, body).await;
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("a JSON body"))
}

/// One SSE event: its `event:` name (Anthropic) and its `data:` payload.
#[derive(Debug)]
struct Event {
    name: Option<String>,
    data: String,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).expect("event data is JSON")
    }
}

fn parse_sse(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = Event {
                name: None,
                data: String::new(),
            };
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event.name = Some(name.to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    event.data.push_str(data);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            event
        })
        .collect()
}

async fn stream_events(mock: &MockLlm, endpoint: &str, mut body: Value) -> Vec<Event> {
    body["stream"] = json!(true);
    let resp = post(mock, endpoint, body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    parse_sse(&resp.text().await.expect("a body"))
}

fn weather_turn() -> Reply {
    Reply::tool_calls([
        ("call_1", "get_weather", json!({"city": "Paris"})),
        ("call_2", "get_weather", json!({"city": "Zürich"})),
    ])
    .with_text("Checking both.")
}

#[tokio::test]
async fn openai_json_renders_calls_text_usage_and_echoes_the_model() {
    let mock = MockLlm::start([weather_turn(), Reply::text("Sunny.")])
        .await
        .unwrap();

    let (status, first) = post_json(
        &mock,
        OPENAI,
        json!({"model": "gpt-4o-mini", "messages": []}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(first["object"], "chat.completion");
    assert_eq!(first["model"], "gpt-4o-mini");
    let choice = &first["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "Checking both.");
    let calls = choice["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[1]["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"city": "Zürich"}));
    assert_eq!(
        first["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );

    let (_, second) = post_json(
        &mock,
        OPENAI,
        json!({"model": "gpt-4o-mini", "messages": []}),
    )
    .await;
    assert_eq!(second["choices"][0]["finish_reason"], "stop");
    assert_eq!(second["choices"][0]["message"]["content"], "Sunny.");
    assert!(second["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(second["usage"]["total_tokens"], 19);
    assert_ne!(first["id"], second["id"]);
}

#[tokio::test]
async fn openai_call_without_text_has_null_content() {
    let mock = MockLlm::start([Reply::tool_call("c", "t", json!({}))])
        .await
        .unwrap();
    let (_, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
    assert_eq!(body["model"], "mock-model");
}

#[tokio::test]
async fn anthropic_json_renders_blocks_stop_reason_and_usage() {
    let mock = MockLlm::start([weather_turn(), Reply::text("Sunny.").with_usage(40, 6)])
        .await
        .unwrap();

    let (status, first) = post_json(
        &mock,
        ANTHROPIC,
        json!({"model": "claude-x", "max_tokens": 64, "messages": []}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(first["type"], "message");
    assert_eq!(first["model"], "claude-x");
    assert_eq!(first["stop_reason"], "tool_use");
    assert_eq!(
        first["content"],
        json!([
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Zürich"}},
        ])
    );
    assert_eq!(
        first["usage"],
        json!({"input_tokens": 10, "output_tokens": 5})
    );

    let (_, second) = post_json(
        &mock,
        ANTHROPIC,
        json!({"model": "claude-x", "max_tokens": 64, "messages": []}),
    )
    .await;
    assert_eq!(second["stop_reason"], "end_turn");
    assert_eq!(
        second["content"],
        json!([{"type": "text", "text": "Sunny."}])
    );
    assert_eq!(
        second["usage"],
        json!({"input_tokens": 40, "output_tokens": 6})
    );
}

#[tokio::test]
async fn openai_sse_streams_text_pieces_indexed_calls_usage_and_done() {
    let mock = MockLlm::start([weather_turn(), weather_turn()])
        .await
        .unwrap();
    let request = json!({"model": "m", "messages": [], "stream_options": {"include_usage": true}});
    let events = stream_events(&mock, OPENAI, request).await;

    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(Event::json).collect();
    assert!(events.iter().all(|e| e.name.is_none()));
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "m"));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");

    let mut text = String::new();
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    let mut text_deltas = 0;
    let mut argument_deltas = 0;
    for chunk in &chunks {
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str() {
            text.push_str(piece);
            text_deltas += usize::from(!piece.is_empty());
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let entry = calls.entry(call["index"].as_u64().unwrap()).or_default();
            if let Some(id) = call["id"].as_str() {
                // The head chunk carries id and name before any argument fragment.
                assert!(entry.2.is_empty());
                entry.0 = id.to_owned();
                entry.1 = call["function"]["name"].as_str().unwrap().to_owned();
            }
            let fragment = call["function"]["arguments"].as_str().unwrap();
            argument_deltas += usize::from(!fragment.is_empty());
            entry.2.push_str(fragment);
        }
    }
    assert_eq!(text, "Checking both.");
    assert!(text_deltas >= 2, "text arrives in pieces");
    assert_eq!(
        argument_deltas, 4,
        "each call's arguments arrive in two fragments"
    );
    assert_eq!(calls[&0].0, "call_1");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[&1].2).unwrap(),
        json!({"city": "Zürich"})
    );

    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );

    // Without include_usage there is no usage chunk: the finish chunk comes right before [DONE].
    let events = stream_events(&mock, OPENAI, json!({"messages": []})).await;
    let last_chunk = events[events.len() - 2].json();
    assert_eq!(last_chunk["choices"][0]["finish_reason"], "tool_calls");
    assert!(events.iter().all(|e| !e.data.contains("\"usage\"")));
}

#[tokio::test]
async fn anthropic_sse_streams_blocks_in_order_with_stop_reason_and_usage() {
    let mock = MockLlm::start([weather_turn()]).await.unwrap();
    let events = stream_events(
        &mock,
        ANTHROPIC,
        json!({"model": "claude-x", "max_tokens": 64, "messages": []}),
    )
    .await;

    let names: Vec<&str> = events.iter().map(|e| e.name.as_deref().unwrap()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    for event in &events {
        assert_eq!(
            event.json()["type"],
            event.name.as_deref().unwrap(),
            "data.type matches the event name"
        );
    }
    let start = events[0].json();
    assert_eq!(start["message"]["model"], "claude-x");
    assert_eq!(start["message"]["usage"]["input_tokens"], 10);

    // Rebuild the content blocks from start/delta/stop events.
    let mut blocks: Vec<Value> = Vec::new();
    let mut open: Option<u64> = None;
    for event in events.iter().map(Event::json) {
        match event["type"].as_str().unwrap() {
            "content_block_start" => {
                let index = event["index"].as_u64().unwrap();
                assert_eq!(open, None);
                assert_eq!(index as usize, blocks.len());
                let mut block = event["content_block"].clone();
                if block["type"] == "tool_use" {
                    block["partial"] = json!("");
                }
                blocks.push(block);
                open = Some(index);
            }
            "content_block_delta" => {
                let block = &mut blocks[event["index"].as_u64().unwrap() as usize];
                let delta = &event["delta"];
                match delta["type"].as_str().unwrap() {
                    "text_delta" => {
                        block["text"] = json!(format!(
                            "{}{}",
                            block["text"].as_str().unwrap(),
                            delta["text"].as_str().unwrap()
                        ))
                    }
                    "input_json_delta" => {
                        let joined = format!(
                            "{}{}",
                            block["partial"].as_str().unwrap(),
                            delta["partial_json"].as_str().unwrap()
                        );
                        block["partial"] = json!(joined);
                    }
                    other => panic!("unexpected delta {other}"),
                }
            }
            "content_block_stop" => {
                assert_eq!(open, event["index"].as_u64());
                open = None;
            }
            _ => {}
        }
    }
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0], json!({"type": "text", "text": "Checking both."}));
    assert_eq!(blocks[2]["id"], "call_2");
    let input: Value = serde_json::from_str(blocks[2]["partial"].as_str().unwrap()).unwrap();
    assert_eq!(input, json!({"city": "Zürich"}));

    let delta = events[events.len() - 2].json();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 5);
}

#[tokio::test]
async fn chunked_replies_arrive_in_many_reads_with_identical_bytes() {
    let reply = Reply::text("Streaming över små bitar, one word at a time.");
    let mock = MockLlm::start([reply.clone(), reply.chunked(3)])
        .await
        .unwrap();
    let request = json!({"max_tokens": 64, "messages": [], "stream": true});

    let whole = post(&mock, ANTHROPIC, request.clone())
        .await
        .text()
        .await
        .unwrap();
    let resp = post(&mock, ANTHROPIC, request).await;
    assert_eq!(resp.headers()["transfer-encoding"], "chunked");
    let mut reads = 0;
    let mut pieced = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(piece) = stream.next().await {
        reads += 1;
        pieced.extend_from_slice(&piece.unwrap());
    }
    let pieced = String::from_utf8(pieced).unwrap();
    // Identical but for the response id, which numbers the requests.
    assert_eq!(pieced.replace("msg_mock_2", "msg_mock_1"), whole);
    assert!(reads > 1, "the body came in {reads} read(s)");
}

#[tokio::test]
async fn errors_carry_status_headers_and_a_provider_shaped_body() {
    let mock = MockLlm::start([
        Reply::error(429, "slow down").with_header("Retry-After", "2"),
        Reply::error(529, "overloaded"),
        Reply::error(42, "not a status"),
    ])
    .await
    .unwrap();

    let resp = post(&mock, OPENAI, json!({"messages": [], "stream": true})).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "slow down");
    assert_eq!(body["error"]["type"], "rate_limit_error");

    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(status, 529);
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}})
    );

    let (status, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(status, 500);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("status 42"),
        "{body}"
    );
}

#[tokio::test]
async fn raw_replies_are_sent_verbatim_even_to_stream_requests() {
    let garbage = "data: {\"choices\": [{\"delta\": {\"content\": \"ha\"\n\n";
    let mock = MockLlm::start([
        Reply::raw(200, "text/event-stream", garbage),
        Reply::raw(502, "text/html", "<html>bad gateway</html>"),
    ])
    .await
    .unwrap();

    let resp = post(&mock, OPENAI, json!({"messages": [], "stream": true})).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.text().await.unwrap(), garbage);

    let resp = post(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(resp.status(), 502);
    assert_eq!(resp.headers()["content-type"], "text/html");
    assert_eq!(resp.text().await.unwrap(), "<html>bad gateway</html>");
}

#[tokio::test]
async fn verbatim_arguments_reach_the_client_unparsed() {
    let broken = r#"{"city": "Par"#;
    let turn = || {
        Reply::tool_call_raw("c1", "get_weather", broken).and_tool_call("c2", "ok", json!({"a": 1}))
    };
    let mock = MockLlm::start([turn(), turn(), turn()]).await.unwrap();

    let (_, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    let calls = &body["choices"][0]["message"]["tool_calls"];
    assert_eq!(calls[0]["function"]["arguments"], broken);
    assert_eq!(calls[1]["function"]["arguments"], r#"{"a":1}"#);

    let (_, body) = post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(
        body["content"][0]["input"], broken,
        "unparseable input stays a JSON string"
    );
    assert_eq!(body["content"][1]["input"], json!({"a": 1}));

    let events = stream_events(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    let partial: String = events
        .iter()
        .map(Event::json)
        .filter(|e| e["index"] == 0 && e["delta"]["type"] == "input_json_delta")
        .map(|e| e["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(partial, broken);
}

#[tokio::test]
async fn a_client_that_gives_up_on_a_delayed_reply_is_counted_as_dropped() {
    let mock = MockLlm::start([
        Reply::text("too late").delayed(Duration::from_secs(30)),
        Reply::text("worth the wait").delayed(Duration::from_millis(20)),
    ])
    .await
    .unwrap();
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();

    let err = impatient
        .post(format!("{}{OPENAI}", mock.base_url()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_dropped(1))
        .await
        .expect("the drop is noticed");
    assert_eq!(mock.dropped(), 1);

    let (status, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["message"]["content"], "worth the wait");
    assert_eq!(mock.dropped(), 1, "an answered request is not a drop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_in_flight_request_is_counted_as_dropped_on_multi_thread() {
    let mock = MockLlm::start([Reply::text("never").delayed(Duration::from_secs(30))])
        .await
        .unwrap();
    let url = format!("{}{ANTHROPIC}", mock.base_url());
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&json!({"max_tokens": 64, "messages": []}))
            .send()
            .await
    });

    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_calls(1))
        .await
        .expect("the request arrives");
    request.abort();
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_dropped(1))
        .await
        .expect("the drop is noticed");
    assert_eq!(mock.calls(), 1);
}

#[tokio::test]
async fn requests_are_recorded_with_headers_query_and_body() {
    let mock = MockLlm::start([Reply::text("a"), Reply::text("b")])
        .await
        .unwrap();
    let http = reqwest::Client::new();
    http.post(format!("{}{ANTHROPIC}?beta=true", mock.base_url()))
        .header("X-Api-Key", "sk-test")
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "claude-x", "max_tokens": 64, "stream": false, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    http.post(format!("{}{OPENAI}", mock.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();

    let seen = mock.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(mock.calls(), 2);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].query.as_deref(), Some("beta=true"));
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|(k, v)| k == "x-api-key" && v == "sk-test"),
        "names are lower-cased"
    );
    assert_eq!(seen[0].header("X-API-KEY"), Some("sk-test"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].body["model"], "claude-x");
    assert_eq!(seen[0].messages()[0]["content"], "hi");
    assert!(!seen[0].is_stream());
    assert!(
        !format!("{:?}", seen[0]).contains("sk-test"),
        "Debug hides credentials"
    );

    assert_eq!(seen[1].body, Value::Null);
    assert_eq!(seen[1].raw_body, b"not json");
    assert_eq!(seen[1].header("x-api-key"), None);
}

#[tokio::test]
async fn an_exhausted_script_answers_410_saying_so_until_more_is_pushed() {
    let mock = MockLlm::start([Reply::text("only")]).await.unwrap();
    assert_eq!(mock.remaining(), 1);
    post_json(&mock, OPENAI, json!({})).await;
    assert_eq!(mock.remaining(), 0);

    let (status, body) = post_json(&mock, OPENAI, json!({})).await;
    assert_eq!(status, 410);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the script ran out"),
        "{body}"
    );
    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(status, 410);
    assert_eq!(body["type"], "error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("request #3"),
        "{body}"
    );

    mock.push(Reply::text("more"));
    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!((status, &body["content"][0]["text"]), (200, &json!("more")));
    assert_eq!(mock.calls(), 4);
}

#[tokio::test]
async fn with_fn_answers_from_the_request_after_the_queue() {
    let mock = MockLlm::with_fn(|req| {
        let has_result = req.messages().iter().any(|m| m["role"] == "tool");
        if has_result {
            Reply::text("done")
        } else {
            Reply::tool_call("c1", "lookup", json!({}))
        }
    })
    .await
    .unwrap()
    // The requests below are bare sketches of a conversation (a tool message without the
    // call it answers), enough for the closure to tell them apart.
    .lenient();
    mock.push(Reply::text("queued first"));

    let (_, body) = post_json(&mock, OPENAI, json!({"messages": [{"role": "user"}]})).await;
    assert_eq!(body["choices"][0]["message"]["content"], "queued first");
    let (_, body) = post_json(&mock, OPENAI, json!({"messages": [{"role": "user"}]})).await;
    assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "c1");
    let (_, body) = post_json(
        &mock,
        OPENAI,
        json!({"messages": [{"role": "user"}, {"role": "tool"}]}),
    )
    .await;
    assert_eq!(body["choices"][0]["message"]["content"], "done");
}

#[tokio::test]
async fn unknown_paths_and_methods_are_refused_without_using_the_script() {
    let mock = MockLlm::start([Reply::text("kept")]).await.unwrap();
    let http = reqwest::Client::new();

    let resp = http
        .post(format!("{}/completions", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/completions"),
        "{body}"
    );

    let resp = http
        .get(format!("{}{OPENAI}", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);

    assert_eq!(mock.calls(), 2);
    assert_eq!(mock.remaining(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_each_get_exactly_one_reply() {
    let n = 16;
    let mock = MockLlm::start((0..n).map(|i| Reply::text(format!("reply {i}"))))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let requests = (0..n).map(|_| {
        let http = http.clone();
        let url = format!("{}{OPENAI}", mock.base_url());
        tokio::spawn(async move {
            let body: Value = http.post(url).json(&json!({})).send().await?.json().await?;
            Ok::<_, reqwest::Error>(
                body["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
    });
    let mut texts: Vec<String> = Vec::new();
    for request in requests.collect::<Vec<_>>() {
        texts.push(request.await.unwrap().unwrap());
    }
    texts.sort();
    let mut expected: Vec<String> = (0..n).map(|i| format!("reply {i}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
    assert_eq!(mock.calls(), n);
}

#[tokio::test]
async fn dropping_the_mock_closes_its_port() {
    let mock = MockLlm::start([]).await.unwrap();
    let url = format!("{}{OPENAI}", mock.base_url());
    drop(mock);
    // Let the aborted accept task be torn down.
    tokio::task::yield_now().await;
    let err = reqwest::Client::new()
        .post(url)
        .json(&json!({}))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err}");
}

#[tokio::test]
async fn dropping_the_mock_lets_an_in_flight_reply_finish() {
    let mock = MockLlm::start([Reply::text("last words").delayed(Duration::from_millis(30))])
        .await
        .unwrap();
    let url = format!("{}{OPENAI}", mock.base_url());
    let request = tokio::spawn(async move {
        let resp = reqwest::Client::new()
            .post(url)
            .json(&json!({}))
            .send()
            .await?;
        resp.json::<Value>().await
    });
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_calls(1))
        .await
        .expect("the request arrives");
    drop(mock);
    let body = request.await.unwrap().expect("the reply still arrives");
    assert_eq!(body["choices"][0]["message"]["content"], "last words");
}

#[tokio::test]
async fn a_scripted_header_replaces_the_mocks_own_and_repeats_append() {
    let reply = Reply::text("x")
        .with_header("Content-Type", "application/json; charset=utf-8")
        .with_header("x-request-id", "a")
        .with_header("x-request-id", "b");
    let mock = MockLlm::start([reply]).await.unwrap();
    let resp = post(&mock, OPENAI, json!({})).await;
    let types: Vec<_> = resp.headers().get_all("content-type").iter().collect();
    assert_eq!(types, ["application/json; charset=utf-8"]);
    let ids: Vec<_> = resp.headers().get_all("x-request-id").iter().collect();
    assert_eq!(ids, ["a", "b"]);
}
