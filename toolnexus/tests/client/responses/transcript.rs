//! The stateless transcript: each turn's output items, reasoning included, replayed verbatim, and
//! results by `call_id`.

use super::*;

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
