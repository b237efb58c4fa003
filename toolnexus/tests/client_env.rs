//! The API key taken from the environment, and none at all for local servers. Its own test
//! binary: it changes the process environment, which no other test may read concurrently.

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, LlmClient, Style, Toolkit};

const VARS: [&str; 5] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
];

/// The tests of this binary take turns: each sets and clears variables the others read.
static ENV: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn clear_keys() -> tokio::sync::MutexGuard<'static, ()> {
    let turn = ENV.lock().await;
    for var in VARS {
        // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
        unsafe { std::env::remove_var(var) };
    }
    turn
}

#[tokio::test]
async fn the_key_comes_from_the_variable_for_the_endpoint() {
    let _turn = clear_keys().await;
    let mock = MockLlm::start(vec![Reply::text("hi"); 2]).await.unwrap();
    // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("OPENAI_API_KEY", "env-key") };
    let from_env = LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .build()
        .unwrap();
    let explicit = LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("explicit-key")
        .build()
        .unwrap();
    // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
    unsafe { std::env::remove_var("OPENAI_API_KEY") };
    from_env.run("hi", &Toolkit::empty()).await.unwrap();
    explicit.run("hi", &Toolkit::empty()).await.unwrap();
    let seen = mock.requests();
    assert_eq!(seen[0].header("authorization"), Some("Bearer env-key"));
    assert_eq!(seen[1].header("authorization"), Some("Bearer explicit-key"));

    // Gemini's key: GEMINI_API_KEY, else GOOGLE_API_KEY, in Google's own header.
    let gemini = MockLlm::start(vec![Reply::error(401, "checked below"); 2])
        .await
        .unwrap();
    let client = |key_var: &str| {
        // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
        unsafe { std::env::set_var(key_var, format!("{key_var}-value")) };
        let client = LlmClient::builder()
            .style(Style::Gemini)
            .base_url(gemini.base_url())
            .model("gemini-x")
            .retries(0)
            .build()
            .unwrap();
        // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
        unsafe { std::env::remove_var(key_var) };
        client
    };
    let (first, second) = (client("GEMINI_API_KEY"), client("GOOGLE_API_KEY"));
    let _ = first.run("hi", &Toolkit::empty()).await;
    let _ = second.run("hi", &Toolkit::empty()).await;
    let seen = gemini.requests();
    assert_eq!(
        seen[0].header("x-goog-api-key"),
        Some("GEMINI_API_KEY-value")
    );
    assert_eq!(
        seen[1].header("x-goog-api-key"),
        Some("GOOGLE_API_KEY-value")
    );
    assert_eq!(seen[0].header("authorization"), None);
}

/// Ollama, vLLM, llama.cpp's server and LM Studio need no key: a client builds without one
/// and sends no credentials at all.
#[tokio::test]
async fn a_local_server_needs_no_key() {
    let _turn = clear_keys().await;
    let mock = MockLlm::start([Reply::text("hi from llama"), Reply::text("again")])
        .await
        .unwrap();
    for key in [None, Some("")] {
        let mut builder = LlmClient::builder()
            .base_url(mock.base_url())
            .model("llama3");
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        let client = builder.build().expect("no key is needed to build");
        client.run("hi", &Toolkit::empty()).await.unwrap();
    }
    for seen in mock.requests() {
        assert_eq!(seen.header("authorization"), None);
    }
}

/// A hosted provider that wants a key answers 401; the error then names the variable to set.
#[tokio::test]
async fn a_provider_refusing_a_request_without_a_key_names_the_variable() {
    let _turn = clear_keys().await;
    let cases = [
        (Style::OpenAi, "OPENAI_API_KEY"),
        (Style::Anthropic, "ANTHROPIC_API_KEY"),
        (Style::Responses, "OPENAI_API_KEY"),
        (Style::Gemini, "GEMINI_API_KEY"),
    ];
    for (style, var) in cases {
        let mock = MockLlm::start([Reply::error(401, "Incorrect API key provided")])
            .await
            .unwrap();
        let client = LlmClient::builder()
            .style(style)
            .base_url(mock.base_url())
            .model("m")
            .build()
            .unwrap();
        let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
        assert_eq!(
            err,
            ClientError::MissingApiKey { var, status: 401 },
            "{style:?}"
        );
        let text = err.to_string();
        assert!(text.contains(var) && text.contains(".api_key("), "{text}");
        assert_eq!(mock.calls(), 1, "a refused key is not retried");
    }
    // With a key, a 401 is the provider's own words.
    let mock = MockLlm::start([Reply::error(401, "Incorrect API key provided")])
        .await
        .unwrap();
    let client = LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("wrong")
        .build()
        .unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { status: 401, excerpt } if excerpt.contains("Incorrect API key")),
        "{err:?}"
    );
}

/// Gateways keep their keys under their own variable.
#[tokio::test]
async fn openrouter_takes_its_own_variable() {
    let _turn = clear_keys().await;
    // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("OPENROUTER_API_KEY", "or-key") };
    let client = LlmClient::builder()
        .base_url("https://openrouter.ai/api/v1")
        .model("m")
        .build()
        .unwrap();
    // SAFETY: the tests of this binary take turns (`ENV`): no other thread reads the environment meanwhile.
    unsafe { std::env::remove_var("OPENROUTER_API_KEY") };
    assert!(!format!("{client:?}").contains("or-key"));
}
