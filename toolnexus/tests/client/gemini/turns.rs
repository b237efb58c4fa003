//! Gemini's weather turns: thought signatures carried back on their parts, streamed reasoning then
//! text, and the stub's own stream.

use super::*;

const FIRST_THOUGHT: &str = "Two cities: call the weather tool for each.";
const CITIES: [(&str, &str); 2] = [("call_paris", "Paris"), ("call_rome", "Rome")];
const ANSWER: &str = "Sunny in both.";
const LAST_THOUGHT: &str = "Both came back sunny.";
/// The final turn's counts, written into the hand-made last reply.
const LAST: (u64, u64, u64, u64) = (40, 4, 5, 32); // prompt, candidates, thoughts, cached

fn weather_calls() -> Reply {
    Reply::tool_calls(CITIES.map(|(id, city)| (id, "get_weather", json!({"city": city}))))
        .with_reasoning(FIRST_THOUGHT)
        .with_usage(20, 6)
}

/// The final answer as Gemini sends it with caching and thoughts, whole or streamed (each
/// event a chunk, CRLF-framed, the signature on an empty last piece).
fn final_answer(streamed: bool) -> Reply {
    let (prompt, candidates, thoughts, cached) = LAST;
    let usage = json!({"promptTokenCount": prompt, "candidatesTokenCount": candidates,
        "thoughtsTokenCount": thoughts, "cachedContentTokenCount": cached,
        "totalTokenCount": prompt + candidates + thoughts});
    let chunk = |parts: Value, last: bool| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        let mut body = json!({"candidates": [], "modelVersion": MODEL});
        if last {
            candidate["finishReason"] = json!("STOP");
            body["usageMetadata"] = usage.clone();
        }
        body["candidates"] = json!([candidate]);
        body
    };
    if !streamed {
        let whole = chunk(
            json!([{"text": LAST_THOUGHT, "thought": true},
                   {"text": ANSWER, "thoughtSignature": "c2lnbmVk"}]),
            true,
        );
        return Reply::raw(200, "application/json", whole.to_string());
    }
    let (head, tail) = ANSWER.split_at(6);
    let events = [
        chunk(json!([{"text": LAST_THOUGHT, "thought": true}]), false),
        chunk(json!([{"text": head}]), false),
        chunk(json!([{"text": tail}]), false),
        chunk(json!([{"text": "", "thoughtSignature": "c2lnbmVk"}]), true),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("data: {e}\r\n\r\n"))
        .collect();
    Reply::raw(200, "text/event-stream", body).chunked(7)
}

/// Checks the second request of the weather scenario and the run's result.
fn check_weather_run(mock: &MockLlm, result: &RunResult) {
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, ANSWER);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .path
            .ends_with(&format!("/models/{MODEL}:generateContent"))
            || requests[0]
                .path
                .ends_with(&format!("/models/{MODEL}:streamGenerateContent"))
    );

    let sent = contents(&requests[1]);
    assert_eq!(
        sent.len(),
        3,
        "user, model, one user turn of results: {sent:?}"
    );
    let model_parts = sent[1]["parts"].as_array().unwrap();
    assert_eq!(sent[1]["role"], "model");
    assert_eq!(
        model_parts[0],
        json!({"text": FIRST_THOUGHT, "thought": true})
    );
    assert_eq!(model_parts[1]["functionCall"]["id"], CITIES[0].0);
    assert!(
        model_parts[1]["thoughtSignature"].is_string(),
        "the signature rides on the call part it came on: {model_parts:?}"
    );
    assert_eq!(model_parts[2]["functionCall"]["id"], CITIES[1].0);
    assert!(model_parts[2].get("thoughtSignature").is_none());

    assert_eq!(sent[2]["role"], "user");
    let responses: Vec<(&str, &str, &str)> = sent[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let r = &p["functionResponse"];
            (
                r["id"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["response"]["output"].as_str().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(&str, &str, String)> = CITIES
        .iter()
        .map(|(id, city)| (*id, "get_weather", format!("sunny in {city}")))
        .collect();
    assert_eq!(
        responses,
        expected
            .iter()
            .map(|(a, b, c)| (*a, *b, c.as_str()))
            .collect::<Vec<_>>()
    );

    let (prompt, candidates, thoughts, cached) = LAST;
    let first_thoughts = thought_tokens(FIRST_THOUGHT);
    let u = result.usage;
    assert_eq!(u.prompt_tokens, 20 + prompt);
    assert_eq!(
        u.completion_tokens,
        6 + first_thoughts + candidates + thoughts
    );
    assert_eq!(u.total_tokens, u.prompt_tokens + u.completion_tokens);
    assert_eq!(u.reasoning_tokens, first_thoughts + thoughts);
    assert_eq!(u.cached_tokens, cached);

    let turns: Vec<&Message> = result
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .collect();
    assert_eq!(turns[0].reasoning().as_deref(), Some(FIRST_THOUGHT));
    assert_eq!(turns[1].reasoning().as_deref(), Some(LAST_THOUGHT));
    let Message::Assistant { content, .. } = turns[1] else {
        unreachable!()
    };
    assert_eq!(content, ANSWER, "reasoning stays out of the text");
}

#[tokio::test]
async fn the_weather_turns_carry_their_signatures_back() {
    let mock = MockLlm::start([weather_calls(), final_answer(false)])
        .await
        .unwrap();
    let client = gemini(&mock).build().unwrap();
    let result = client
        .run("Weather in Paris and Rome?", &weather_toolkit())
        .await
        .unwrap();
    check_weather_run(&mock, &result);
    let first = &mock.requests()[0];
    assert_eq!(first.header("x-goog-api-key"), Some("test-key"));
    assert!(
        first.body.get("model").is_none(),
        "Gemini names the model in the path"
    );
}

#[tokio::test]
async fn the_weather_turns_streamed_show_reasoning_then_text() {
    let mock = MockLlm::start([weather_calls(), final_answer(true)])
        .await
        .unwrap();
    let client = gemini(&mock).build().unwrap();
    let tk = weather_toolkit();
    let items: Vec<_> = soon(
        "the stream",
        client.stream("Weather in Paris and Rome?", &tk).collect(),
    )
    .await;
    let mut reasoning = Vec::new();
    let mut text = String::new();
    let mut result = None;
    for item in items {
        match item.unwrap() {
            StreamEvent::Reasoning { delta } => reasoning.push(delta),
            StreamEvent::Text { delta } => {
                assert_eq!(reasoning.len(), 2, "both turns reasoned before the text");
                text.push_str(&delta);
            }
            StreamEvent::Done(done) => result = Some(done),
            _ => {}
        }
    }
    assert_eq!(reasoning, [FIRST_THOUGHT, LAST_THOUGHT]);
    assert_eq!(text, ANSWER);
    let result = result.expect("a done event");
    check_weather_run(&mock, &result);
    let requests = mock.requests();
    assert!(requests[0].path.ends_with(":streamGenerateContent"));
    assert_eq!(requests[0].query.as_deref(), Some("alt=sse"));
    let Some(Message::Assistant {
        state: Some(state), ..
    }) = result.messages.last()
    else {
        panic!("the final turn keeps its state")
    };
    let state = serde_json::to_value(state).unwrap();
    assert_eq!(
        state["parts"][1],
        json!({"text": ANSWER, "thoughtSignature": "c2lnbmVk"}),
        "streamed pieces join into one part, which keeps the late signature"
    );
}

#[tokio::test]
async fn the_stubs_own_stream_runs_the_same_turns() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mock = MockLlm::start([
        weather_calls(),
        Reply::text(ANSWER).with_reasoning(LAST_THOUGHT),
    ])
    .await
    .unwrap();
    let client = gemini(&mock).build().unwrap();
    let tk = Toolkit::builder()
        .tool(weather(runs.clone()))
        .build()
        .unwrap();
    let lines = steps(client.stream("Weather?", &tk)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let first_thoughts = thought_tokens(FIRST_THOUGHT);
    let last_thoughts = thought_tokens(LAST_THOUGHT);
    assert_eq!(
        lines,
        [
            format!("other:Reasoning {{ delta: {FIRST_THOUGHT:?} }}"),
            format!("usage:20/{}", 6 + first_thoughts),
            "call:call_paris get_weather {\"city\":\"Paris\"}".to_owned(),
            "call:call_rome get_weather {\"city\":\"Rome\"}".to_owned(),
            "result:call_paris sunny in Paris".to_owned(),
            "result:call_rome sunny in Rome".to_owned(),
            format!("other:Reasoning {{ delta: {LAST_THOUGHT:?} }}"),
            format!("text:{ANSWER}"),
            format!("usage:15/{}", 4 + last_thoughts),
            format!("done:Done {ANSWER}"),
        ]
    );
}
