//! Request settings (temperature, max tokens, tool choice, parallel calls, stop sequences,
//! extra body fields) as each style's endpoint receives them, per client and per run.

use futures::StreamExt;
use serde_json::{json, Map, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, LlmClientBuilder, RunOptions, Style, ToolChoice, Toolkit};

use crate::support::*;

/// The settings part of a body: every key a setting can write, those present only.
fn settings_in(body: &Value) -> Value {
    const KEYS: [&str; 10] = [
        "temperature",
        "max_tokens",
        "tool_choice",
        "parallel_tool_calls",
        "stop",
        "stop_sequences",
        "seed",
        "user",
        "metadata",
        "stream",
    ];
    let found: Map<String, Value> = KEYS
        .iter()
        .filter_map(|k| Some((k.to_string(), body.get(*k)?.clone())))
        .collect();
    Value::Object(found)
}

/// Runs one echo turn then "done" on a client of `style` built by `configure`; returns the
/// settings of each body the endpoint received.
async fn sent(
    style: Style,
    configure: impl FnOnce(LlmClientBuilder) -> LlmClientBuilder,
    options: Option<RunOptions>,
    tk: &Toolkit,
) -> Vec<Value> {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = configure(on(&mock, style)).build().unwrap();
    let run = client.run("go", tk);
    let result = match options {
        Some(options) => run.options(options).await,
        None => run.await,
    }
    .unwrap();
    assert_eq!(result.text, "done");
    mock.requests()
        .iter()
        .map(|r| settings_in(&r.body))
        .collect()
}

fn per_client(b: LlmClientBuilder) -> LlmClientBuilder {
    b.temperature(0.25)
        .max_tokens(256)
        .tool_choice(ToolChoice::Required)
        .parallel_tool_calls(false)
        .stop(["END", "STOP"])
        .extra_body(json!({"seed": 7, "metadata": {"user_id": "u-1"}}))
}

#[tokio::test]
async fn per_client_settings_in_openai_shape() {
    let bodies = sent(Style::OpenAi, per_client, None, &echo_toolkit()).await;
    let expected = json!({
        "temperature": 0.25,
        "max_tokens": 256,
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "stop": ["END", "STOP"],
        "seed": 7,
        "metadata": {"user_id": "u-1"},
    });
    assert_eq!(
        bodies,
        [expected.clone(), expected],
        "every turn carries them"
    );
}

#[tokio::test]
async fn per_client_settings_in_anthropic_shape() {
    let bodies = sent(Style::Anthropic, per_client, None, &echo_toolkit()).await;
    let expected = json!({
        "temperature": 0.25,
        "max_tokens": 256,
        "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
        "stop_sequences": ["END", "STOP"],
        "seed": 7,
        "metadata": {"user_id": "u-1"},
    });
    assert_eq!(bodies, [expected.clone(), expected]);
}

#[tokio::test]
async fn each_tool_choice_in_each_shape() {
    let cases = [
        (ToolChoice::Auto, json!("auto"), json!({"type": "auto"})),
        (ToolChoice::None, json!("none"), json!({"type": "none"})),
        (
            ToolChoice::Required,
            json!("required"),
            json!({"type": "any"}),
        ),
        (
            ToolChoice::tool("echo"),
            json!({"type": "function", "function": {"name": "echo"}}),
            json!({"type": "tool", "name": "echo"}),
        ),
    ];
    for (choice, openai, anthropic) in cases {
        for (style, expected) in [(Style::OpenAi, &openai), (Style::Anthropic, &anthropic)] {
            let options = RunOptions::new().tool_choice(choice.clone());
            let bodies = sent(style, |b| b, Some(options), &echo_toolkit()).await;
            assert_eq!(bodies[0]["tool_choice"], *expected, "{style:?} {choice:?}");
            assert!(bodies[0].get("parallel_tool_calls").is_none());
        }
    }
    // Anthropic's parallel switch lives inside its choice, which `none` has no room for;
    // with no choice set, turning parallel calls off sends `auto` to carry it.
    let serial = RunOptions::new().parallel_tool_calls(false);
    let bodies = sent(
        Style::Anthropic,
        |b| b,
        Some(serial.clone()),
        &echo_toolkit(),
    )
    .await;
    assert_eq!(
        bodies[0]["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    let none = serial.tool_choice(ToolChoice::None);
    let bodies = sent(Style::Anthropic, |b| b, Some(none), &echo_toolkit()).await;
    assert_eq!(bodies[0]["tool_choice"], json!({"type": "none"}));
    let allowed = RunOptions::new().parallel_tool_calls(true);
    let bodies = sent(
        Style::Anthropic,
        |b| b,
        Some(allowed.clone()),
        &echo_toolkit(),
    )
    .await;
    assert!(
        bodies[0].get("tool_choice").is_none(),
        "parallel is Anthropic's default"
    );
    let bodies = sent(Style::OpenAi, |b| b, Some(allowed), &echo_toolkit()).await;
    assert_eq!(bodies[0]["parallel_tool_calls"], true);
}

#[tokio::test]
async fn a_run_overrides_the_clients_settings_one_by_one() {
    let client = |b: LlmClientBuilder| {
        b.temperature(0.5)
            .tool_choice(ToolChoice::Auto)
            .stop(["END"])
            .extra_body(json!({"seed": 1, "user": "client"}))
    };
    let run = RunOptions::new()
        .temperature(0.0)
        .tool_choice(ToolChoice::tool("echo"))
        .stop(Vec::<String>::new())
        .extra_body(json!({"user": "run"}));
    let bodies = sent(Style::OpenAi, client, Some(run.clone()), &echo_toolkit()).await;
    assert_eq!(
        bodies[0],
        json!({
            "temperature": 0.0,
            "tool_choice": {"type": "function", "function": {"name": "echo"}},
            "seed": 1,
            "user": "run",
        })
    );
    let bodies = sent(Style::Anthropic, client, Some(run), &echo_toolkit()).await;
    assert_eq!(
        bodies[0],
        json!({
            "temperature": 0.0,
            "max_tokens": 4096,
            "tool_choice": {"type": "tool", "name": "echo"},
            "seed": 1,
            "user": "run",
        })
    );
    // The client itself is unchanged for runs without options.
    let bodies = sent(Style::OpenAi, client, None, &echo_toolkit()).await;
    assert_eq!(bodies[0]["temperature"], 0.5);
    assert_eq!(bodies[0]["stop"], json!(["END"]));
}

/// Where `style` writes the token limit, as a JSON pointer and as an `extra_body` that sets it.
fn max_tokens_at(style: Style, n: u32) -> (&'static str, Value) {
    match style {
        Style::Responses => ("/max_output_tokens", json!({"max_output_tokens": n})),
        Style::Gemini => (
            "/generationConfig/maxOutputTokens",
            json!({"generationConfig": {"maxOutputTokens": n}}),
        ),
        _ => ("/max_tokens", json!({"max_tokens": n})),
    }
}

#[tokio::test]
async fn extra_fields_replace_the_clients_own_values() {
    for style in STYLES {
        let (at, nine) = max_tokens_at(style, 9);
        let configure = |b: LlmClientBuilder| b.temperature(0.5).max_tokens(100).extra_body(nine);
        let mock = MockLlm::start([Reply::text("done")]).await.unwrap();
        configure(on(&mock, style))
            .build()
            .unwrap()
            .run("go", &echo_toolkit())
            .await
            .unwrap();
        let body = &mock.requests()[0].body;
        assert_eq!(body.pointer(at), Some(&json!(9)), "{style:?}: {body}");
        // An object merges into the loop's own, key by key: the temperature stays.
        let temperature = match style {
            Style::Gemini => body.pointer("/generationConfig/temperature"),
            _ => body.get("temperature"),
        };
        assert_eq!(temperature, Some(&json!(0.5)), "{style:?}: {body}");
    }
}

#[tokio::test]
async fn without_tools_no_tool_settings_are_sent() {
    let no_tools = Toolkit::builder().build().unwrap();
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
        let mut builder = on(&mock, style)
            .tool_choice(ToolChoice::Required)
            .temperature(1.0);
        // Gemini has no such setting and refuses it when the client is built.
        if style != Style::Gemini {
            builder = builder.parallel_tool_calls(false);
        }
        builder
            .build()
            .unwrap()
            .run("hello", &no_tools)
            .await
            .unwrap();
        let body = &mock.requests()[0].body;
        for key in ["tools", "tool_choice", "parallel_tool_calls", "toolConfig"] {
            assert!(body.get(key).is_none(), "{style:?}: {key} in {body}");
        }
        let temperature = match style {
            Style::Gemini => &body["generationConfig"]["temperature"],
            _ => &body["temperature"],
        };
        assert_eq!(temperature, 1.0, "{style:?}");
    }
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let client = on(&mock, Style::Anthropic).build().unwrap();
    client.run("hello", &no_tools).await.unwrap();
    assert_eq!(
        settings_in(&mock.requests()[0].body),
        json!({"max_tokens": 4096}),
        "Anthropic's required max_tokens keeps its default"
    );
}

#[tokio::test]
async fn a_named_tool_the_toolkit_lacks_fails_before_any_request() {
    let mock = MockLlm::start([Reply::text("never")]).await.unwrap();
    let tk = echo_toolkit();
    let by_client = on(&mock, Style::OpenAi)
        .tool_choice(ToolChoice::tool("refund"))
        .build()
        .unwrap();
    let err = by_client.run("go", &tk).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request settings: tool_choice names `refund`, which is not in the toolkit \
         (it has echo)"
    );
    let plain = on(&mock, Style::Anthropic).build().unwrap();
    let by_run = RunOptions::new().tool_choice(ToolChoice::tool("refund"));
    let err = plain.run("go", &tk).options(by_run).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidOptions(_)), "{err:?}");
    let empty = Toolkit::builder().build().unwrap();
    let by_run = RunOptions::new().tool_choice(ToolChoice::tool("echo"));
    let err = plain.run("go", &empty).options(by_run).await.unwrap_err();
    assert!(err.to_string().ends_with("(it has no tools)"), "{err}");
    assert_eq!(mock.calls(), 0, "nothing was sent");
}

#[tokio::test]
async fn unusable_settings_are_refused_before_any_request() {
    let mock = MockLlm::start([Reply::text("never")]).await.unwrap();
    let err = on(&mock, Style::OpenAi)
        .temperature(f64::NAN)
        .build()
        .unwrap_err();
    assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    let err = on(&mock, Style::OpenAi)
        .extra_body(json!({"messages": []}))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid client configuration: extra_body may not set `messages`: the loop writes it \
         itself"
    );

    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = echo_toolkit();
    for options in [
        RunOptions::new().temperature(-0.5),
        RunOptions::new().extra_body(json!("seed=7")),
        RunOptions::new().max_tokens(0),
    ] {
        let err = client.run("go", &tk).options(options).await.unwrap_err();
        assert!(matches!(err, ClientError::InvalidOptions(_)), "{err:?}");
    }
    assert_eq!(mock.calls(), 0);
}

#[tokio::test]
async fn streamed_and_resumed_runs_carry_the_runs_settings() {
    let options = RunOptions::new().temperature(0.75).stop(["END"]);
    let mock = MockLlm::start([Reply::text("streamed")]).await.unwrap();
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = echo_toolkit();
    let run = client.run("go", &tk).options(options.clone());
    let events: Vec<_> = run.stream().collect().await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    let body = &mock.requests()[0].body;
    assert_eq!(body["temperature"], 0.75);
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert_eq!(body["stream"], true);

    let approver = Approver::default();
    let mock = purchase_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let halted = client.run("buy", &tk).await.unwrap();
    let request = halted.pending.clone().unwrap();
    let answer = toolnexus::Answer::ok(request.id.clone());
    client
        .run_with_answer(halted.messages, &request, answer, &tk)
        .options(options)
        .await
        .unwrap();
    let requests = mock.requests();
    assert!(requests[0].body.get("temperature").is_none());
    assert_eq!(requests[1].body["temperature"], 0.75);
    assert_eq!(requests[1].body["stop"], json!(["END"]));
}
