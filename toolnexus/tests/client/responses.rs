//! `Style::Responses` against the stub: the stateless transcript (each turn's output items,
//! reasoning included, replayed verbatim; results by `call_id`), streamed and not; halting,
//! declining and durable resumes; the request settings; what the strict stub refuses; and
//! replies that failed, were cut off or cannot be read.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, ClientError, LlmClientBuilder, Message, NativeTool, ProviderState, Request, RunOptions,
    RunResult, RunStatus, StreamEvent, Style, Tool, ToolChoice, Toolkit,
};

use crate::support::*;

/// A Responses client on the mock.
fn client(mock: &MockLlm) -> LlmClientBuilder {
    on(mock, Style::Responses).model("gpt-5-mini")
}

/// `get_weather`: "sunny in {city}" for Paris, "rain in {city}" elsewhere.
fn weather() -> impl Tool {
    NativeTool::of(
        "get_weather",
        "The weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args: Value, _| async move {
            let city = args["city"].as_str().unwrap_or_default().to_owned();
            match city.as_str() {
                "Paris" => format!("sunny in {city}"),
                _ => format!("rain in {city}"),
            }
        },
    )
}

fn weather_toolkit() -> Toolkit {
    Toolkit::builder().tool(weather()).build().unwrap()
}

/// Keeps every reply body the client read (`after_llm`): a response object, or for a
/// streamed reply the array of its events' data.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Value>>>);

impl Seen {
    fn hook(&self, b: LlmClientBuilder) -> LlmClientBuilder {
        let sink = self.0.clone();
        b.after_llm(move |raw: Value| {
            sink.lock().unwrap().push(raw);
            async {}
        })
    }

    /// The output items of the `n`th reply, as the stub sent them: for a stream, those of
    /// the response its final event carried.
    fn output(&self, n: usize) -> Vec<Value> {
        let raw = self.0.lock().unwrap()[n].clone();
        let response = match raw {
            Value::Array(events) => events.last().expect("events")["response"].clone(),
            whole => whole,
        };
        response["output"].as_array().expect("output items").clone()
    }
}

/// The request's `input` items.
fn input(request: &RecordedRequest) -> Vec<Value> {
    request.body["input"]
        .as_array()
        .expect("input is a list")
        .clone()
}

/// `(call_id, output)` of the request's `function_call_output` items.
fn outputs(request: &RecordedRequest) -> Vec<(String, String)> {
    input(request)
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| {
            let text = |key: &str| item[key].as_str().unwrap_or_default().to_owned();
            (text("call_id"), text("output"))
        })
        .collect()
}

/// Runs `prompt`, streamed or not; also returns the reasoning deltas a stream delivered.
async fn run(
    client: &toolnexus::LlmClient,
    prompt: &str,
    tk: &Toolkit,
    streamed: bool,
) -> Result<(RunResult, String), ClientError> {
    if !streamed {
        return Ok((client.run(prompt, tk).await?, String::new()));
    }
    let items: Vec<_> = soon("the stream", client.stream(prompt, tk).collect()).await;
    let mut reasoning = String::new();
    for item in items {
        match item? {
            StreamEvent::Reasoning { delta } => reasoning.push_str(&delta),
            StreamEvent::Done(result) => return Ok((result, reasoning)),
            _ => {}
        }
    }
    panic!("the stream ended without Done")
}

const THINK_CALLS: &str = "The user wants two cities; ask the tool for each.";
const THINK_ANSWER: &str = "Both answers are in; summarize.";
const ANSWER: &str = "Sunny in Paris, rain in Rome.";

/// The weather conversation: two calls with reasoning, then the answer with reasoning, each
/// turn with its own token counts and details.
fn weather_script() -> [Reply; 2] {
    [
        Reply::tool_calls([
            ("call_paris", "get_weather", json!({"city": "Paris"})),
            ("call_rome", "get_weather", json!({"city": "Rome"})),
        ])
        .with_reasoning(THINK_CALLS)
        .with_usage(40, 12)
        .with_usage_details(16, 7),
        Reply::text(ANSWER)
            .with_reasoning(THINK_ANSWER)
            .with_usage(70, 9)
            .with_usage_details(48, 3),
    ]
}

#[tokio::test]
async fn the_weather_turns_replay_their_reasoning_and_answer_by_call_id() {
    for streamed in [false, true] {
        let mock = MockLlm::start(weather_script()).await.unwrap();
        let seen = Seen::default();
        let client = seen
            .hook(client(&mock).system_prompt("Answer in one line."))
            .build()
            .unwrap();
        let (result, reasoning_events) = run(
            &client,
            "Weather in Paris and Rome?",
            &weather_toolkit(),
            streamed,
        )
        .await
        .unwrap();

        assert_eq!(result.status, RunStatus::Done, "streamed: {streamed}");
        assert_eq!(result.text, ANSWER);
        let usage = result.usage;
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens
            ),
            (40 + 70, 12 + 9, 40 + 12 + 70 + 9)
        );
        assert_eq!(
            (usage.cached_tokens, usage.reasoning_tokens),
            (16 + 48, 7 + 3)
        );

        let requests = mock.requests();
        assert_eq!(requests.len(), 2);
        for request in &requests {
            assert_eq!(request.path, "/v1/responses");
            assert_eq!(request.header("authorization"), Some("Bearer test-key"));
            assert_eq!(request.body["instructions"], "Answer in one line.");
            assert_eq!(request.body["store"], false);
            assert_eq!(
                request.body["include"],
                json!(["reasoning.encrypted_content"])
            );
            assert_eq!(request.is_stream(), streamed);
        }
        // The second turn: the prompt, the first reply's items exactly as sent (reasoning
        // first, right before the calls), then the results by call id in call order.
        let first_output = seen.output(0);
        let kinds: Vec<&str> = first_output
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["reasoning", "function_call", "function_call"]);
        let second = input(&requests[1]);
        assert_eq!(
            second[0],
            json!({"type": "message", "role": "user", "content": "Weather in Paris and Rome?"})
        );
        assert_eq!(second[1..4], first_output[..], "streamed: {streamed}");
        assert_eq!(
            outputs(&requests[1]),
            [
                ("call_paris".to_owned(), "sunny in Paris".to_owned()),
                ("call_rome".to_owned(), "rain in Rome".to_owned()),
            ]
        );
        assert_eq!(second.len(), 6);

        // The transcript keeps the reasoning readable and the items for the next turn.
        let assistants: Vec<&Message> = result
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .collect();
        assert_eq!(assistants[0].reasoning().as_deref(), Some(THINK_CALLS));
        assert_eq!(assistants[1].reasoning().as_deref(), Some(THINK_ANSWER));
        let Some(ProviderState::Responses { output }) = assistants[0].state() else {
            panic!(
                "the calling turn keeps its output items: {:?}",
                assistants[0]
            );
        };
        assert_eq!(*output, first_output);
        if streamed {
            assert_eq!(reasoning_events, format!("{THINK_CALLS}{THINK_ANSWER}"));
        }
    }
}

#[tokio::test]
async fn turns_without_reasoning_keep_no_state_and_replay_as_plain_items() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "get_weather", json!({"city": "Paris"})).with_text("Checking."),
        Reply::text("Sunny."),
    ])
    .await
    .unwrap();
    let client = client(&mock).build().unwrap();
    let result = client.run("Weather?", &weather_toolkit()).await.unwrap();
    assert_eq!(result.text, "Sunny.");
    assert!(result
        .messages
        .iter()
        .all(|m| !matches!(m, Message::Assistant { state: Some(_), .. })));
    assert_eq!(
        input(&mock.requests()[1]),
        [
            json!({"type": "message", "role": "user", "content": "Weather?"}),
            json!({"type": "message", "role": "assistant", "content": "Checking."}),
            json!({"type": "function_call", "call_id": "call_1", "name": "get_weather",
                   "arguments": json!({"city": "Paris"}).to_string()}),
            json!({"type": "function_call_output", "call_id": "call_1", "output": "sunny in Paris"}),
        ]
    );
}

/// A purchase that needs approval, the model reasoning before it asks.
async fn reasoned_purchase() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("A purchase: it needs approval first."),
        Reply::text("bought"),
    ])
    .await
    .unwrap()
}

#[tokio::test]
async fn an_approval_through_wait_for_reruns_the_call_and_goes_on() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let client = client(&mock)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    assert_eq!(approver.runs(), 2, "asked, then re-run with the answer");
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), "approved: gpu".to_owned())]
    );
}

#[tokio::test]
async fn a_declined_approval_is_fed_back_with_its_reason() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let client = client(&mock)
        .wait_for(|req: Request| async move { Answer::decline(req.id, "over budget") })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(approver.runs(), 1, "a refusal is not re-run");
    let record = &result.tool_calls[0];
    assert!(record.is_error);
    assert_eq!(
        record.output,
        "declined/expired: Approve purchase of gpu? (reason: over budget)"
    );
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), record.output.clone())],
        "the model is told what the record says"
    );
}

#[tokio::test]
async fn a_halted_run_parked_as_json_resumes_in_a_fresh_client() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client(&mock)
        .build()
        .unwrap()
        .run("buy a gpu", &tk)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().expect("the request it halted on");

    let parked = serde_json::to_string(&halted.messages).unwrap();
    let messages: Vec<Message> = serde_json::from_str(&parked).unwrap();
    assert_eq!(
        messages, halted.messages,
        "the provider state survives JSON"
    );

    let fresh = client(&mock).build().unwrap();
    let answer = Answer::ok(request.id.clone());
    let result = fresh
        .run_with_answer(messages, &request, answer, &tk)
        .await
        .expect("the strict stub accepts the replayed reasoning");
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "bought");
    let resumed = input(&mock.requests()[1]);
    let reasoning = resumed
        .iter()
        .position(|item| item["type"] == "reasoning")
        .expect("the reasoning item went back");
    assert_eq!(resumed[reasoning + 1]["type"], "function_call");
    assert_eq!(
        outputs(&mock.requests()[1]),
        [("call_1".to_owned(), "approved: gpu".to_owned())]
    );
}

/// The transcript of `halted` with its calling turn edited by `edit`.
fn edited(halted: &RunResult, edit: impl Fn(&mut Option<Box<ProviderState>>)) -> Vec<Message> {
    let mut messages = halted.messages.clone();
    for message in &mut messages {
        if let Message::Assistant { state, .. } = message {
            edit(state);
        }
    }
    messages
}

#[tokio::test]
async fn the_strict_stub_refuses_calls_whose_reasoning_did_not_come_back() {
    let approver = Approver::default();
    let mock = reasoned_purchase().await;
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let client = client(&mock).build().unwrap();
    let halted = client.run("buy a gpu", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();

    let without_item = edited(&halted, |state| {
        if let Some(ProviderState::Responses { output }) = state.as_deref_mut() {
            output.retain(|item| item["type"] != "reasoning");
        }
    });
    let without_state = edited(&halted, |state| *state = None);
    for messages in [without_item, without_state.clone()] {
        let answer = Answer::ok(request.id.clone());
        let err = client
            .run_with_answer(messages, &request, answer, &tk)
            .await
            .unwrap_err();
        let ClientError::Status { status, excerpt } = &err else {
            panic!("expected the provider's refusal, got {err:?}");
        };
        assert_eq!(*status, 400);
        assert!(
            excerpt.contains("of type 'function_call' was provided without its required 'reasoning' item: 'rs_mock_1'"),
            "{excerpt}"
        );
    }
    assert_eq!(mock.remaining(), 1, "no scripted reply was used");

    let mock = mock.lenient();
    let answer = Answer::ok(request.id.clone());
    let result = client
        .run_with_answer(without_state, &request, answer, &tk)
        .await
        .expect("a lenient stub answers whatever it is sent");
    assert_eq!(result.text, "bought");
    assert_eq!(mock.remaining(), 0);
}

/// The settings part of each body the endpoint received in a one-call run with `options`.
async fn settings_sent(
    configure: impl FnOnce(LlmClientBuilder) -> LlmClientBuilder,
    options: RunOptions,
) -> Vec<Value> {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "get_weather", json!({"city": "Paris"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = configure(client(&mock)).build().unwrap();
    let result = client
        .run("go", &weather_toolkit())
        .options(options)
        .await
        .unwrap();
    assert_eq!(result.text, "done");
    const KEYS: [&str; 7] = [
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "max_tokens",
        "temperature",
        "stop",
        "metadata",
    ];
    mock.requests()
        .iter()
        .map(|r| {
            let found = KEYS
                .iter()
                .filter_map(|k| Some((k.to_string(), r.body.get(*k)?.clone())))
                .collect();
            Value::Object(found)
        })
        .collect()
}

#[tokio::test]
async fn settings_are_sent_in_responses_shape() {
    let per_client = |b: LlmClientBuilder| {
        b.temperature(0.25)
            .max_tokens(256)
            .tool_choice(ToolChoice::Required)
            .parallel_tool_calls(false)
            .extra_body(json!({"metadata": {"user_id": "u-1"}}))
    };
    let bodies = settings_sent(per_client, RunOptions::new()).await;
    let expected = json!({
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "max_output_tokens": 256,
        "temperature": 0.25,
        "metadata": {"user_id": "u-1"},
    });
    assert_eq!(
        bodies,
        [expected.clone(), expected],
        "every turn carries them"
    );

    let cases = [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
        (
            ToolChoice::tool("get_weather"),
            json!({"type": "function", "name": "get_weather"}),
        ),
    ];
    for (choice, shape) in cases {
        let options = RunOptions::new().tool_choice(choice.clone());
        let bodies = settings_sent(|b| b, options).await;
        assert_eq!(bodies[0], json!({"tool_choice": shape}), "{choice:?}");
    }
}

/// Models without reasoning refuse being asked for encrypted reasoning: a host replaces
/// `include` for them; the stateless `store: false` stays the loop's.
#[tokio::test]
async fn extra_body_may_replace_include_but_not_store() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let replaced = client(&mock)
        .extra_body(json!({"include": []}))
        .build()
        .unwrap();
    replaced.run("hello", &Toolkit::empty()).await.unwrap();
    let body = &mock.requests()[0].body;
    assert_eq!(body["include"], json!([]));
    assert_eq!(body["store"], false);

    let err = client(&mock)
        .extra_body(json!({"store": true}))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("`store`"), "{err}");
}

#[tokio::test]
async fn stop_sequences_are_refused_before_anything_is_sent() {
    let mock = MockLlm::start([Reply::text("never")]).await.unwrap();
    let err = client(&mock).stop(["END"]).build().unwrap_err();
    assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    assert!(err.to_string().contains("`stop`"), "{err}");

    let client = client(&mock).build().unwrap();
    let err = client
        .run("go", &weather_toolkit())
        .options(RunOptions::new().stop(["END"]))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidOptions(_)), "{err:?}");
    assert!(err.to_string().contains("`stop`"), "{err}");
    // Clearing the list is no stop sequence at all.
    let cleared = RunOptions::new().stop(Vec::<String>::new());
    let result = client
        .run("go", &weather_toolkit())
        .options(cleared)
        .await
        .unwrap();
    assert_eq!(result.text, "never");
    assert_eq!(mock.calls(), 1);
}

/// A response object as the API sends it, with `status`, `output` and more fields.
fn response_body(status: &str, output: Value, more: Value) -> Value {
    let mut body = json!({
        "id": "resp_raw", "object": "response", "status": status, "model": "gpt-5-mini",
        "output": output,
        "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 64, "output_tokens_details": {"reasoning_tokens": 60}, "total_tokens": 84},
    });
    if let (Value::Object(body), Value::Object(more)) = (&mut body, more) {
        body.extend(more);
    }
    body
}

/// `response` as a stream: created, the items as they finish, then `final_event`.
fn as_events(response: &Value, final_event: &str) -> String {
    let mut events = vec![
        json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
    ];
    for (index, item) in response["output"].as_array().unwrap().iter().enumerate() {
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(json!({"type": final_event, "response": response}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn scripted(response: &Value, streamed: bool, final_event: &str) -> Reply {
    if streamed {
        Reply::raw(200, "text/event-stream", as_events(response, final_event))
    } else {
        Reply::raw(200, "application/json", response.to_string())
    }
}

#[tokio::test]
async fn an_incomplete_reply_with_cut_off_arguments_gives_that_call_an_error_result() {
    let cut = response_body(
        "incomplete",
        json!([
            {"type": "reasoning", "id": "rs_raw", "summary": [], "encrypted_content": "gAAAA"},
            {"type": "function_call", "id": "fc_raw", "call_id": "call_1", "name": "get_weather",
             "arguments": "{\"city\": \"Par", "status": "incomplete"},
        ]),
        json!({"incomplete_details": {"reason": "max_output_tokens"}}),
    );
    for streamed in [false, true] {
        let mock = MockLlm::start([
            scripted(&cut, streamed, "response.incomplete"),
            Reply::text("I ran out of room; ask again."),
        ])
        .await
        .unwrap();
        let client = client(&mock).build().unwrap();
        let (result, _) = run(&client, "Weather?", &weather_toolkit(), streamed)
            .await
            .unwrap();
        assert_eq!(result.status, RunStatus::Done, "streamed: {streamed}");
        let call = &result.tool_calls[0];
        assert!(call.is_error);
        assert!(
            call.output.contains("invalid arguments for get_weather"),
            "{}",
            call.output
        );
        assert_eq!(
            outputs(&mock.requests()[1]),
            [("call_1".to_owned(), call.output.clone())]
        );
    }
}

#[tokio::test]
async fn failed_or_empty_incomplete_replies_stop_the_run() {
    let failed = response_body(
        "failed",
        json!([]),
        json!({"error": {"code": "server_error", "message": "The model failed to produce a response."}}),
    );
    let thought_only = response_body(
        "incomplete",
        json!([{"type": "reasoning", "id": "rs_raw", "summary": [], "encrypted_content": "gAAAA"}]),
        json!({"incomplete_details": {"reason": "max_output_tokens"}}),
    );
    let cases = [
        (
            &failed,
            "response.failed",
            "The model failed to produce a response.",
        ),
        (&thought_only, "response.incomplete", "max_output_tokens"),
    ];
    for streamed in [false, true] {
        for (body, final_event, reason) in cases {
            let mock = MockLlm::start([scripted(body, streamed, final_event)])
                .await
                .unwrap();
            let client = client(&mock).build().unwrap();
            let err = run(&client, "hi", &weather_toolkit(), streamed)
                .await
                .unwrap_err();
            let ClientError::Stopped { reason: said } = &err else {
                panic!("expected Stopped, got {err:?}");
            };
            assert!(said.contains(reason), "{said}");
            assert_eq!(mock.calls(), 1, "not retried");
        }
    }
}

#[tokio::test]
async fn replies_that_cannot_be_read_are_invalid_responses() {
    let no_output =
        json!({"id": "resp_raw", "object": "response", "status": "completed"}).to_string();
    let cut = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n";
    let cases = [
        (
            Reply::raw(200, "application/json", no_output),
            false,
            "no output",
        ),
        (
            Reply::raw(200, "application/json", "<html>bad gateway</html>"),
            false,
            "not valid JSON",
        ),
        (
            Reply::raw(200, "text/event-stream", cut),
            true,
            "ended before the reply was complete",
        ),
    ];
    for (reply, streamed, expected) in cases {
        let mock = MockLlm::start([reply]).await.unwrap();
        let client = client(&mock).build().unwrap();
        let err = run(&client, "hi", &Toolkit::empty(), streamed)
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
        assert!(err.to_string().contains(expected), "{err}");
    }

    let error_event = concat!(
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\",\"output\":[]}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"Try again later.\",\"param\":null}\n\n",
    );
    let mock = MockLlm::start([Reply::raw(200, "text/event-stream", error_event)])
        .await
        .unwrap();
    let client = client(&mock).build().unwrap();
    let err = run(&client, "hi", &Toolkit::empty(), true)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::StreamError("server_error: Try again later.".into())
    );
}
