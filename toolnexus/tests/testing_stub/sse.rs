//! Streamed (SSE) replies in both wire formats, whole or chunked into many reads.

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

use crate::support::*;

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
