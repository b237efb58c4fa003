//! The request settings in the Responses shape, and what `extra_body` and stop sequences may not do.

use super::*;

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
