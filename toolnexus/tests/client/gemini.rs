//! `Style::Gemini` over real HTTP against the strict stub: Gemini's request shapes, thought
//! signatures carried back on their parts, results in one user turn, usage details, the
//! suspension flows, settings, and the ways a reply can fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, ClientError, LlmCall, LlmClientBuilder, Message, NativeTool, Request, RunOptions,
    RunResult, RunStatus, StreamEvent, Style, Tool, ToolChoice, Toolkit, Usage,
};

use crate::support::*;

const MODEL: &str = "gemini-3-pro";

fn gemini(mock: &MockLlm) -> LlmClientBuilder {
    on(mock, Style::Gemini).model(MODEL)
}

/// `get_weather`: the weather of `city`, counting its runs.
fn weather(runs: Arc<AtomicUsize>) -> impl Tool {
    NativeTool::of(
        "get_weather",
        "The weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        move |args: Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { format!("sunny in {}", args["city"].as_str().unwrap_or_default()) }
        },
    )
}

fn weather_toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(weather(Arc::new(AtomicUsize::new(0))))
        .build()
        .unwrap()
}

fn contents(request: &RecordedRequest) -> &[Value] {
    request.body["contents"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// The thought tokens the stub reports for reasoning: one per word.
fn thought_tokens(reasoning: &str) -> u64 {
    reasoning.split_whitespace().count() as u64
}

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

/// A client that approves (or declines) through `wait_for`, on the one-call purchase script.
async fn purchase_with(answer: fn(String) -> Answer) -> (MockLlm, Approver, RunResult) {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = gemini(&mock)
        .wait_for(move |req: Request| std::future::ready(answer(req.id)))
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();
    (mock, approver, result)
}

fn fed_back(request: &RecordedRequest) -> Value {
    contents(request).last().unwrap()["parts"][0]["functionResponse"].clone()
}

#[tokio::test]
async fn an_approval_through_wait_for_reruns_the_call() {
    let (mock, approver, result) = purchase_with(Answer::ok).await;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(
        fed_back(&mock.requests()[1]),
        json!({"id": "call_1", "name": "approve_purchase", "response": {"output": "approved: gpu"}})
    );
}

#[tokio::test]
async fn a_decline_goes_back_as_the_calls_error() {
    let (mock, approver, result) = purchase_with(|id| Answer::decline(id, "over budget")).await;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1);
    let record = &result.tool_calls[0];
    assert!(record.is_error);
    assert_eq!(
        fed_back(&mock.requests()[1]),
        json!({"id": "call_1", "name": "approve_purchase", "response": {"error": record.output}})
    );
}

#[tokio::test]
async fn a_halted_run_persisted_as_text_resumes_in_a_fresh_client() {
    let approver = Approver::default();
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("A purchase needs approval first."),
        Reply::text("bought"),
    ])
    .await
    .unwrap();
    let saved = {
        let client = gemini(&mock)
            .system_prompt("You run a shop.")
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let halted = client.run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        (
            serde_json::to_string(&halted.messages).unwrap(),
            serde_json::to_string(halted.pending.as_ref().unwrap()).unwrap(),
        )
    };
    let messages: Vec<Message> = serde_json::from_str(&saved.0).unwrap();
    let request: Request = serde_json::from_str(&saved.1).unwrap();
    let client = gemini(&mock)
        .system_prompt("You run a shop.")
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let answer = Answer::ok(request.id.clone());
    let result = client
        .run_with_answer(messages, &request, answer, &tk)
        .await
        .expect("the strict stub accepts the resumed turn, signature and all");

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2);
    let requests = mock.requests();
    let resumed = &requests[1];
    assert_eq!(
        resumed.body["systemInstruction"],
        json!({"parts": [{"text": "You run a shop."}]})
    );
    let sent = contents(resumed);
    let roles: Vec<&str> = sent.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user"]);
    assert!(sent[1]["parts"][1]["thoughtSignature"].is_string());
    assert_eq!(fed_back(resumed)["response"]["output"], "approved: gpu");
}

#[tokio::test]
async fn a_dropped_signature_is_refused_unless_the_stub_is_lenient() {
    // A hook that forgets every turn's provider state, as a careless host would.
    let forget = |mut call: LlmCall| async move {
        for message in &mut call.messages {
            if let Message::Assistant { state, .. } = message {
                *state = None;
            }
        }
        call
    };
    let script = || {
        [
            Reply::tool_call("call_1", "get_weather", json!({"city": "Oslo"}))
                .with_reasoning("Ask the tool."),
            Reply::text("Cold."),
        ]
    };
    let mock = MockLlm::start(script()).await.unwrap();
    let client = gemini(&mock).before_llm(forget).build().unwrap();
    let err = client.run("Oslo?", &weather_toolkit()).await.unwrap_err();
    let ClientError::Status {
        status: 400,
        excerpt,
    } = &err
    else {
        panic!("not refused: {err:?}")
    };
    assert!(
        excerpt.starts_with("INVALID_ARGUMENT: Function call is missing a thought_signature"),
        "{excerpt}"
    );
    assert!(excerpt.contains("default_api:get_weather"), "{excerpt}");

    let mock = MockLlm::start(script()).await.unwrap().lenient();
    let client = gemini(&mock).before_llm(forget).build().unwrap();
    let result = client.run("Oslo?", &weather_toolkit()).await.unwrap();
    assert_eq!(result.text, "Cold.");
}

#[tokio::test]
async fn calls_without_ids_pair_with_their_results_by_order() {
    // Scripted without ids, the stub sends the calls as pre-3 models do.
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("", "get_weather", json!({"city": "Oslo"})),
            ("", "get_weather", json!({"city": "Bergen"})),
        ]),
        Reply::text("Cold in both."),
    ])
    .await
    .unwrap();
    let client = gemini(&mock).build().unwrap();
    let result = client.run("Norway?", &weather_toolkit()).await.unwrap();
    assert_eq!(result.text, "Cold in both.");
    let ids: Vec<&str> = result.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.iter().all(|id| !id.is_empty()) && ids[0] != ids[1],
        "{ids:?}"
    );
    let requests = mock.requests();
    let sent = contents(&requests[1]);
    for part in sent[1]["parts"].as_array().unwrap() {
        assert!(part["functionCall"].get("id").is_none(), "{part}");
    }
    let outputs: Vec<&Value> = sent[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["functionResponse"].get("id").is_none(), "{p}");
            &p["functionResponse"]["response"]["output"]
        })
        .collect();
    assert_eq!(
        outputs,
        [&json!("sunny in Oslo"), &json!("sunny in Bergen")]
    );
}

/// The Gemini settings fields of each body a client built by `configure` sent, for one
/// echo turn then "done".
async fn settings_sent(
    configure: impl FnOnce(LlmClientBuilder) -> LlmClientBuilder,
    options: Option<RunOptions>,
) -> Vec<Value> {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = configure(gemini(&mock)).build().unwrap();
    let tk = echo_toolkit();
    let result = match options {
        Some(options) => client.run("go", &tk).options(options).await,
        None => client.run("go", &tk).await,
    }
    .unwrap();
    assert_eq!(result.text, "done");
    mock.requests()
        .iter()
        .map(|r| {
            let body = &r.body;
            json!({"toolConfig": body["toolConfig"], "generationConfig": body["generationConfig"]})
        })
        .collect()
}

#[tokio::test]
async fn settings_take_geminis_shapes() {
    let configure = |b: LlmClientBuilder| {
        b.temperature(0.25)
            .max_tokens(256)
            .stop(["END"])
            .tool_choice(ToolChoice::Required)
            .extra_body(json!({"generationConfig": {"thinkingConfig": {"includeThoughts": true}}}))
    };
    let bodies = settings_sent(configure, None).await;
    let expected = json!({
        "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        "generationConfig": {"temperature": 0.25, "maxOutputTokens": 256, "stopSequences": ["END"],
            "thinkingConfig": {"includeThoughts": true}},
    });
    assert_eq!(bodies, [expected.clone(), expected]);

    let cases = [
        (ToolChoice::Auto, json!({"mode": "AUTO"})),
        (ToolChoice::None, json!({"mode": "NONE"})),
        (ToolChoice::Required, json!({"mode": "ANY"})),
        (
            ToolChoice::tool("echo"),
            json!({"mode": "ANY", "allowedFunctionNames": ["echo"]}),
        ),
    ];
    for (choice, config) in cases {
        let options = RunOptions::new().tool_choice(choice.clone());
        let bodies = settings_sent(|b| b, Some(options)).await;
        assert_eq!(
            bodies[0],
            json!({"toolConfig": {"functionCallingConfig": config}, "generationConfig": null}),
            "{choice:?}"
        );
    }
}

#[tokio::test]
async fn tool_settings_are_left_out_without_tools() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let client = gemini(&mock).tool_choice(ToolChoice::Auto).build().unwrap();
    client.run("hi", &Toolkit::empty()).await.unwrap();
    let body = &mock.requests()[0].body;
    assert!(
        body.get("toolConfig").is_none() && body.get("tools").is_none(),
        "{body}"
    );
}

#[tokio::test]
async fn tools_are_declared_with_their_json_schema_as_is() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let client = gemini(&mock).build().unwrap();
    let tk = echo_toolkit();
    client.run("hi", &tk).await.unwrap();
    let body = &mock.requests()[0].body;
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{"name": "echo", "description": "Echoes its item",
            "parametersJsonSchema": item_schema()}]}])
    );
}

#[tokio::test]
async fn parallel_tool_calls_is_refused_naming_it() {
    let mock = MockLlm::start([]).await.unwrap();
    let err = gemini(&mock)
        .parallel_tool_calls(false)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("parallel_tool_calls"), "{err}");

    let client = gemini(&mock).build().unwrap();
    let by_run = RunOptions::new().parallel_tool_calls(true);
    let err = client
        .run("go", &echo_toolkit())
        .options(by_run)
        .await
        .unwrap_err();
    assert!(matches!(&err, ClientError::InvalidOptions(_)), "{err:?}");
    assert!(err.to_string().contains("parallel_tool_calls"), "{err}");
    assert_eq!(mock.calls(), 0, "nothing was sent");
}

async fn run_against(reply: Reply, streamed: bool) -> Result<RunResult, ClientError> {
    let mock = MockLlm::start([reply]).await.unwrap();
    let client = gemini(&mock).retries(0).build().unwrap();
    let tk = Toolkit::empty();
    if !streamed {
        return client.run("hi", &tk).await;
    }
    let items: Vec<_> = soon("the stream", client.stream("hi", &tk).collect()).await;
    match items.into_iter().last() {
        Some(Ok(StreamEvent::Done(result))) => Ok(result),
        Some(Err(e)) => Err(e),
        other => panic!("the stream ended with {other:?}"),
    }
}

#[tokio::test]
async fn a_safety_stop_fails_the_run_naming_the_reason() {
    let blocked = json!({"candidates": [{"finishReason": "SAFETY", "index": 0,
        "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]}],
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}});
    let whole = Reply::raw(200, "application/json", blocked.to_string());
    let streamed = Reply::raw(200, "text/event-stream", format!("data: {blocked}\r\n\r\n"));
    for (reply, is_stream) in [(whole, false), (streamed, true)] {
        let err = run_against(reply, is_stream).await.unwrap_err();
        let ClientError::Stopped { reason } = &err else {
            panic!("not stopped: {err:?}")
        };
        assert!(reason.contains("SAFETY"), "{reason}");
    }
    let prompt_blocked = json!({"promptFeedback": {"blockReason": "BLOCKLIST"}});
    let err = run_against(
        Reply::raw(200, "application/json", prompt_blocked.to_string()),
        false,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ClientError::Stopped { reason } if reason.contains("BLOCKLIST")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_reply_without_candidates_is_invalid() {
    let err = run_against(
        Reply::raw(
            200,
            "application/json",
            r#"{"modelVersion": "gemini-3-pro"}"#,
        ),
        false,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
}

#[tokio::test]
async fn a_stream_without_a_finish_reason_is_an_error() {
    let chunk =
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Half"}]}}]});
    let err = run_against(
        Reply::raw(200, "text/event-stream", format!("data: {chunk}\r\n\r\n")),
        true,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
}

#[tokio::test]
async fn error_bodies_are_read_for_their_message() {
    let long_detail = "x".repeat(400);
    let array = json!([{"error": {"code": 400, "message": "Request contains an invalid argument.",
        "status": "INVALID_ARGUMENT", "details": [{"reason": long_detail}]}}]);
    let err = run_against(
        Reply::raw(400, "application/json", array.to_string()),
        false,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        ClientError::Status {
            status: 400,
            excerpt: "INVALID_ARGUMENT: Request contains an invalid argument.".into()
        }
    );
    let err = run_against(Reply::error(429, "Quota exceeded."), false)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { status: 429, excerpt } if excerpt == "RESOURCE_EXHAUSTED: Quota exceeded."),
        "{err:?}"
    );
}

#[tokio::test]
async fn usage_details_sum_over_turns() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})).with_usage(11, 3),
        Reply::text("done").with_usage(17, 2),
    ])
    .await
    .unwrap();
    let client = gemini(&mock).build().unwrap();
    let result = client.run("go", &echo_toolkit()).await.unwrap();
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 28,
            completion_tokens: 5,
            total_tokens: 33,
            ..Usage::default()
        }
    );
}
