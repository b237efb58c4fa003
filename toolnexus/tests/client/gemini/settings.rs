//! Request settings in Gemini's shapes, tool declarations, and settings Gemini refuses.

use super::*;

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
