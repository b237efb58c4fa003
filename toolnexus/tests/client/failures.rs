//! Provider failures: retries, error statuses, unreadable bodies, unreachable hosts.

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, RunOptions, RunStatus, Style, Toolkit};

use crate::support::*;

/// A 200 whose JSON-typed body is exactly `body`.
fn raw_json(body: &str) -> Reply {
    Reply::raw(200, "application/json", body)
}

#[tokio::test]
async fn a_429_is_retried_then_succeeds() {
    let mock = MockLlm::start([Reply::error(429, "slow down"), Reply::text("finally")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let result = client.run("hi", &Toolkit::empty()).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "finally");
    assert_eq!(mock.calls(), 2);
    assert_eq!(result.turns, 1, "a retry is not a turn");
}

#[tokio::test]
async fn each_retryable_status_is_retried_up_to_the_limit() {
    for status in [408u16, 409, 500, 502, 503, 504, 529] {
        let mock = MockLlm::start(vec![Reply::error(status, "down"); 3])
            .await
            .unwrap();
        let client = on(&mock, Style::OpenAi).build().unwrap();
        let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Status { status: s, .. } if s == status),
            "{err}"
        );
        assert_eq!(mock.calls(), 3, "default: 1 try + 2 retries for {status}");
    }
}

#[tokio::test]
async fn a_run_can_replace_the_clients_retries() {
    let mock = MockLlm::start(vec![Reply::error(503, "down"); 3])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let err = client
        .run("hi", &Toolkit::empty())
        .options(RunOptions::new().retries(0))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 503, .. }),
        "{err}"
    );
    assert_eq!(mock.calls(), 1, "a run with no retries tries once");

    let err = client
        .run("hi", &Toolkit::empty())
        .options(RunOptions::new().retries(1))
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err}");
    assert_eq!(mock.calls(), 3, "one more run, one retry: two more calls");
}

#[tokio::test]
async fn other_statuses_fail_at_once_with_a_clear_message() {
    let message = format!(
        "Incorrect API key provided: test-key. {}",
        "padding ".repeat(200)
    );
    let mock = MockLlm::start([Reply::error(401, message)]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert_eq!(mock.calls(), 1);
    let text = err.to_string();
    assert!(text.contains("HTTP 401"), "{text}");
    assert!(text.contains("Incorrect API key provided"), "{text}");
    assert!(!text.contains("test-key"), "the key is masked: {text}");
    assert!(text.chars().count() < 400, "the body is truncated: {text}");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_an_error() {
    let mock = MockLlm::start([raw_json("<html>gateway</html>")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("not valid JSON"), "{text}");
    assert!(text.contains("<html>gateway"), "{text}");
}

#[tokio::test]
async fn a_body_of_the_wrong_shape_is_an_error() {
    let failure = |style: Style, body: &'static str| async move {
        let mock = MockLlm::start([raw_json(body)]).await.unwrap();
        let client = on(&mock, style).build().unwrap();
        client.run("hi", &Toolkit::empty()).await.unwrap_err()
    };
    let err = failure(Style::OpenAi, r#"{"choices": []}"#).await;
    assert!(err.to_string().contains("no choices"), "{err}");
    let err = failure(Style::Anthropic, r#"{"content": "text"}"#).await;
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err}");
    let err = failure(Style::OpenAi, r#"{"choices": [{"message": 7}]}"#).await;
    assert!(err.to_string().contains("unexpected shape"), "{err}");
}

#[tokio::test]
async fn an_unreachable_host_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = toolnexus::LlmClient::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .model("m")
        .api_key("test-key")
        .retry_base(std::time::Duration::from_millis(1))
        .build()
        .unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert!(matches!(err, ClientError::Network(_)), "{err}");
    assert!(
        err.to_string().starts_with("could not reach the provider"),
        "{err}"
    );
}

#[tokio::test]
async fn a_one_letter_key_is_masked_without_garbling_the_error() {
    let mock = MockLlm::start([Reply::error(401, "bad key k, see the MockLlm docs")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).api_key("k").build().unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("bad key [redacted], see the MockLlm docs"),
        "{shown}"
    );

    let exhausted = MockLlm::start(Vec::<Reply>::new()).await.unwrap();
    let client = on(&exhausted, Style::OpenAi).api_key("k").build().unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("MockLlm: the script ran out"), "{shown}");
    assert!(!shown.contains("[redacted]"), "{shown}");
}

#[tokio::test]
async fn a_script_that_runs_out_fails_the_run_at_once_counting_only_its_requests() {
    let mock = MockLlm::start([Reply::tool_call(
        "call_1",
        "echo",
        serde_json::json!({"item": "hi"}),
    )])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .api_key("k")
        .retries(3)
        .build()
        .unwrap();
    let err = client.run("hi", &echo_toolkit()).await.unwrap_err();
    assert_eq!(mock.calls(), 2, "the run out script is not retried: {err}");
    let shown = err.to_string();
    assert!(shown.contains("the script ran out"), "{shown}");
    assert!(
        shown.contains(&format!("request #{}", mock.calls())),
        "{shown}"
    );
}
