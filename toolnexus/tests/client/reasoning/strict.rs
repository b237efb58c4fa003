//! The strict stub refuses reasoning state that was dropped or changed, in each provider's
//! words, and the lenient stub accepts it.

use super::*;

/// A `before_llm` hook that changes what every assistant turn's state sends.
fn tamper(
    builder: LlmClientBuilder,
    change: fn(&mut Option<Box<ProviderState>>),
) -> LlmClientBuilder {
    builder.before_llm(move |mut call: LlmCall| async move {
        for m in &mut call.messages {
            if let Message::Assistant { state, .. } = m {
                change(state);
            }
        }
        call
    })
}

/// Runs the echo turn with reasoning through a client whose second request is tampered
/// with; strict, the stub must refuse it with `words`; lenient, it must accept it.
async fn assert_refused_then_lenient_accepts(
    style: Style,
    change: fn(&mut Option<Box<ProviderState>>),
    words: &str,
) {
    for streamed in [false, true] {
        let mock = MockLlm::start([echo_turn(), Reply::text("done")])
            .await
            .unwrap();
        let client = tamper(on(&mock, style), change).build().unwrap();
        match run(&client, streamed, "go", &echo_toolkit()).await {
            Err(ClientError::Status { status, excerpt }) => {
                assert_eq!(status, 400);
                assert!(excerpt.contains(words), "{style:?}: {excerpt}");
            }
            other => panic!(
                "{style:?}: expected the provider's 400, got {:?}",
                other.map(|r| r.result)
            ),
        }
        assert_eq!(mock.calls(), 2, "a 400 is not retried");

        let mock = MockLlm::start([echo_turn(), Reply::text("done")])
            .await
            .unwrap()
            .lenient();
        let client = tamper(on(&mock, style), change).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit()).await.unwrap();
        assert_eq!(ran.result.text, "done");
    }
}

fn drop_state(state: &mut Option<Box<ProviderState>>) {
    *state = None;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_thinking_block_in_anthropics_words() {
    assert_refused_then_lenient_accepts(
        Style::Anthropic,
        drop_state,
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_changed_signature() {
    fn forge(state: &mut Option<Box<ProviderState>>) {
        if let Some(ProviderState::Anthropic { content }) = state.as_deref_mut() {
            content[0]["signature"] = json!("forged");
        }
    }
    assert_refused_then_lenient_accepts(
        Style::Anthropic,
        forge,
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_reasoning_content_in_deepseeks_words() {
    assert_refused_then_lenient_accepts(
        Style::OpenAi,
        drop_state,
        "Missing `reasoning_content` field in the assistant message at message index 1",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_thought_signature_in_geminis_words() {
    fn unsign(state: &mut Option<Box<ProviderState>>) {
        if let Some(ProviderState::OpenAi { calls, .. }) = state.as_deref_mut() {
            calls.clear();
        }
    }
    assert_refused_then_lenient_accepts(
        Style::OpenAi,
        unsign,
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:echo` , position 1.",
    )
    .await;
}
