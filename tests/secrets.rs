//! Secrets never leave the library: for runs failing in every way a run can fail (rejected
//! key echoed by the provider, server errors, an unreachable host, unreadable replies) and in
//! both wire styles, everything the library emits — errors (Display and Debug), the client's
//! and builder's Debug, metric events, and tracing output at TRACE (the HTTP stack's log
//! records included) — is captured, and neither the API key, nor the `Authorization` /
//! `x-api-key` header value, nor an extra header's value appears in it.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, LlmClient, LlmClientBuilder, MetricEvent, Style, Toolkit};

const KEY: &str = "sk-live-K3Y-4f9a2c71";
const HEADER_SECRET: &str = "gw-T0KEN-77b1e9";

/// Everything the tracing subscriber (and, through it, the `log` records of the HTTP
/// stack) writes.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn install() -> Capture {
        let capture = Capture::default();
        let writer = capture.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .try_init()
            .expect("the only subscriber of this test binary");
        capture
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn builder(style: Style, base_url: String, events: &Arc<Mutex<Vec<String>>>) -> LlmClientBuilder {
    let events = events.clone();
    LlmClient::builder()
        .base_url(base_url)
        .style(style)
        .model("m-1")
        .api_key(KEY)
        .header("x-gateway-token", HEADER_SECRET)
        .retry_base(Duration::from_millis(1))
        .on_metric(move |e: &MetricEvent| events.lock().unwrap().push(format!("{e:?}")))
}

/// A reply of the right format whose `usage` puts the key where a number belongs, so a
/// parser error message that quotes the offending value would quote the key.
fn key_in_a_wrong_type(style: Style) -> String {
    match style {
        Style::OpenAi => format!(
            r#"{{"choices":[{{"message":{{"content":"x"}}}}],"usage":{{"prompt_tokens":"{KEY}"}}}}"#
        ),
        _ => format!(r#"{{"content":"{KEY} {HEADER_SECRET}"}}"#),
    }
}

fn failing_replies(style: Style) -> Vec<(&'static str, Vec<Reply>)> {
    let echo = format!("Incorrect API key provided: {KEY}; gateway token {HEADER_SECRET}");
    vec![
        ("401 echoing the key", vec![Reply::error(401, echo.clone())]),
        (
            "500s echoing the key",
            vec![Reply::error(500, echo.clone()); 3],
        ),
        (
            "not JSON",
            vec![Reply::raw(200, "text/html", format!("<html>{echo}</html>"))],
        ),
        (
            "wrong shape",
            vec![Reply::raw(
                200,
                "application/json",
                key_in_a_wrong_type(style),
            )],
        ),
    ]
}

fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn no_secret_in_anything_the_library_emits() {
    let capture = Capture::install();
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut emitted: Vec<String> = Vec::new();
    let mut errors: Vec<ClientError> = Vec::new();
    let tk = Toolkit::empty();

    for style in [Style::OpenAi, Style::Anthropic] {
        for (what, replies) in failing_replies(style) {
            let mock = MockLlm::start(replies).await.unwrap();
            let builder = builder(style, mock.base_url(), &events);
            emitted.push(format!("{builder:?}"));
            let client = builder.build().unwrap();
            emitted.push(format!("{client:?}"));
            let err = client.run("hi", &tk).await.expect_err(what);
            // The mock did receive the credentials: they were there to leak.
            let seen = &mock.requests()[0];
            let credential = match style {
                Style::OpenAi => seen.header("authorization").map(str::to_owned),
                _ => seen.header("x-api-key").map(str::to_owned),
            };
            assert!(credential.is_some_and(|v| v.contains(KEY)), "{what}");
            assert_eq!(seen.header("x-gateway-token"), Some(HEADER_SECRET));
            errors.push(err);
        }

        let unreachable = format!("http://127.0.0.1:{}/v1", closed_port());
        let client = builder(style, unreachable, &events).build().unwrap();
        errors.push(client.run("hi", &tk).await.expect_err("closed port"));

        for bad in [
            builder(style, "http://127.0.0.1:1".into(), &events).api_key(format!("{KEY}\n")),
            builder(style, "http://127.0.0.1:1".into(), &events)
                .header("x-other", format!("{HEADER_SECRET}\r\n")),
        ] {
            emitted.push(format!("{bad:?}"));
            errors.push(bad.build().expect_err("invalid credentials are refused"));
        }
    }

    let kinds: Vec<&str> = errors
        .iter()
        .map(|e| match e {
            ClientError::Status { status: 401, .. } => "401",
            ClientError::Status { status: 500, .. } => "500",
            ClientError::Network(_) => "network",
            ClientError::InvalidResponse(_) => "invalid",
            ClientError::Config(_) => "config",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["401", "500", "invalid", "invalid", "network", "config", "config"].repeat(2)
    );
    for err in &errors {
        emitted.push(err.to_string());
        emitted.push(format!("{err:?}"));
    }
    emitted.extend(events.lock().unwrap().iter().cloned());
    let traced = capture.text();
    assert!(
        traced.contains("retrying model request"),
        "the capture sees the library's tracing"
    );
    emitted.push(traced);

    let all = emitted.join("\n");
    assert!(
        all.contains("[redacted]"),
        "the echoed key was masked, not dropped"
    );
    for secret in [KEY, HEADER_SECRET] {
        if let Some(at) = all.find(secret) {
            let from = all[..at]
                .char_indices()
                .rev()
                .nth(300)
                .map_or(0, |(i, _)| i);
            panic!("a secret leaked: …{}", &all[from..(at + secret.len())]);
        }
    }
}
