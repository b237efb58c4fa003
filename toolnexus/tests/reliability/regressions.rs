//! One test per defect the property tests, the fuzzers or the secrets test found, through
//! the client as a user meets it.

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, RunResult, RunStatus, Style, Toolkit};

use crate::support::{echo_toolkit, on, STYLES};

/// Token counts are whatever the provider writes: counts near `u64::MAX` used to overflow
/// (a panic in debug builds, garbage in release) when summed into a total or over turns.
#[tokio::test]
async fn token_counts_saturate_instead_of_overflowing() {
    for style in STYLES {
        let mock = MockLlm::start([
            Reply::tool_call("c1", "echo", json!({})).with_usage(u64::MAX, 1),
            Reply::text("done").with_usage(u64::MAX - 1, u64::MAX),
        ])
        .await
        .unwrap();
        let builder = on(&mock, style);
        let result = builder
            .build()
            .unwrap()
            .run("hi", &echo_toolkit())
            .await
            .unwrap();
        assert_eq!(result.status, RunStatus::Done, "{style:?}");
        assert_eq!(result.usage.prompt_tokens, u64::MAX, "{style:?}");
        assert_eq!(result.usage.completion_tokens, u64::MAX, "{style:?}");
        assert_eq!(result.usage.total_tokens, u64::MAX, "{style:?}");
    }
}

/// A persisted run used to load back with some of its numbers one ulp off (serde_json's
/// default float parsing is not exact), so a resumed call saw other arguments than the
/// model sent.
#[tokio::test]
async fn a_persisted_run_keeps_the_exact_numbers_of_its_arguments() {
    let args = json!({"ratio": 2.4640420232262982e176, "tiny": -4.5434162152486433e-10});
    let mock = MockLlm::start([
        Reply::tool_call("c1", "echo", args.clone()),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let result = on(&mock, Style::OpenAi)
        .build()
        .unwrap()
        .run("hi", &echo_toolkit())
        .await
        .unwrap();
    assert_eq!(result.tool_calls[0].args, args);
    let back: RunResult = serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
    assert_eq!(back, result);
    assert_eq!(
        back.tool_calls[0].args["ratio"].as_f64(),
        Some(2.4640420232262982e176)
    );
}

/// A reply of the right format holding the key where a number belongs used to put the key
/// into the error: serde quotes the offending value, and only the body excerpt was masked.
#[tokio::test]
async fn a_parse_error_never_quotes_the_key() {
    let key = "sk-test-quoted-1234";
    for (style, body) in [
        (
            Style::OpenAi,
            format!(
                r#"{{"choices":[{{"message":{{"content":"x"}}}}],"usage":{{"prompt_tokens":"{key}"}}}}"#
            ),
        ),
        (Style::Anthropic, format!(r#"{{"content":"{key}"}}"#)),
    ] {
        let mock = MockLlm::start([Reply::raw(200, "application/json", body)])
            .await
            .unwrap();
        let builder = on(&mock, style);
        let err = builder
            .api_key(key)
            .build()
            .unwrap()
            .run("hi", &Toolkit::empty())
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::InvalidResponse(_)), "{err}");
        let text = format!("{err} {err:?}");
        assert!(!text.contains(key), "{style:?}: {text}");
        assert!(
            text.contains("invalid type: string \"[redacted]\""),
            "{style:?}: {text}"
        );
    }
}
