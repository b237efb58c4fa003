//! Secrets never leave the library: for runs failing in every way a run can fail (rejected
//! key echoed by the provider, server errors, an unreachable host, unreadable replies) and in
//! both wire styles, everything the library emits — errors (Display and Debug), the client's
//! and builder's Debug, metric events, and tracing output at TRACE (the HTTP stack's log
//! records included) — is captured, and neither the API key, nor the `Authorization` /
//! `x-api-key` header value, nor an extra header's value appears in it. The inbox's webhooks
//! the same: a Slack-style URL (its path is its credential) and a signing secret never
//! appear in errors, deliveries, Debug output or the log, however delivery fails.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, LlmClient, LlmClientBuilder, MetricEvent, Style, Toolkit};

const KEY: &str = "sk-live-K3Y-4f9a2c71";
const HEADER_SECRET: &str = "gw-T0KEN-77b1e9";
const HOOK_PATH: &str = "services/T0AB/B0CD/hookS3CRETpath";
const HOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

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
    emitted.extend(failed_webhook_deliveries().await);
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
    assert!(
        all.contains("a webhook delivery failed"),
        "the capture sees the inbox's log"
    );
    for secret in [KEY, HEADER_SECRET, HOOK_PATH, &HOOK_SECRET[6..]] {
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

/// Webhook deliveries failing every way one can (refused connection, a peer that hangs
/// up, a timeout, a server error), and all the inbox says of them.
async fn failed_webhook_deliveries() -> Vec<String> {
    use toolnexus::testing::MockLlm as Llm;
    use toolnexus_inbox::{Inbox, Webhook};

    // Hangs up on every connection, or holds it without a word.
    let hang_up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_up_at = hang_up.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = hang_up.accept().await {
            drop(socket);
        }
    });
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_at = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    // Answers the webhook's post with a 500 (any path the stub does not know).
    let erring = Llm::start([]).await.unwrap();
    let urls = [
        format!("http://127.0.0.1:{}/{HOOK_PATH}", closed_port()),
        format!("http://{hang_up_at}/{HOOK_PATH}"),
        format!("http://{silent_at}/{HOOK_PATH}"),
        format!("{}/{HOOK_PATH}", erring.base_url()),
    ];
    let mut builder = Inbox::builder("sqlite::memory:");
    for (n, url) in urls.iter().enumerate() {
        builder = builder.webhook(
            Webhook::new(url)
                .name(format!("hook {n}"))
                .secret(HOOK_SECRET)
                .timeout(Duration::from_millis(300))
                .retries(1, Duration::from_millis(1)),
        );
    }
    let mut emitted = vec![format!("{builder:?}")];
    let inbox = builder.open().await.unwrap();
    emitted.push(format!("{inbox:?}"));

    let llm = Llm::start([Reply::tool_call("c1", "approve", serde_json::json!({}))])
        .await
        .unwrap();
    let client = LlmClient::builder()
        .base_url(llm.base_url())
        .model("m")
        .api_key("k")
        .build()
        .unwrap();
    let approve = toolnexus::NativeTool::of(
        "approve",
        "Asks a person",
        serde_json::json!({"type": "object"}),
        |_, _| async { toolnexus::ToolResult::pending(toolnexus::Request::new("approval", "Go?")) },
    );
    let tk = Toolkit::builder().tool(approve).build().unwrap();
    let halted = client.run("ask me", &tk).await.unwrap();
    let id = inbox.park(&halted).await.unwrap();
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);
    let deliveries = inbox.deliveries(&id).await.unwrap();
    assert_eq!(deliveries.len(), 4);
    // Each failure is told apart, with the HTTP stack's own words and no address.
    let mut why: Vec<_> = deliveries
        .iter()
        .map(|d| d.last_error.clone().unwrap_or_default())
        .collect();
    why.sort();
    let heads: Vec<_> = why
        .iter()
        .map(|w| w.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        heads,
        ["HTTP 404", "could not connect", "failed", "timed out"],
        "{why:?}"
    );
    for d in &deliveries {
        assert_eq!(d.state, toolnexus_inbox::DeliveryState::Failed, "{d:?}");
        emitted.push(format!("{d:?}"));
    }
    for bad in [
        Webhook::new(format!("ftp://127.0.0.1/{HOOK_PATH}")),
        Webhook::new(format!("http://127.0.0.1/{HOOK_PATH}")).secret(format!("{HOOK_SECRET}!")),
        Webhook::new(format!("http://[::1/{HOOK_PATH}")),
    ] {
        emitted.push(format!("{bad:?}"));
        let refused = Inbox::builder("sqlite::memory:").webhook(bad).open().await;
        let err = refused.expect_err("a bad webhook is refused");
        emitted.push(err.to_string());
        emitted.push(format!("{err:?}"));
    }
    emitted
}
