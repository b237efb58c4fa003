//! The API key taken from the environment. Its own test binary: it changes the process
//! environment, which no other test may read concurrently.

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, LlmClient, Style, Toolkit};

const VARS: [&str; 3] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"];

#[tokio::test]
async fn the_key_comes_from_the_variable_for_the_endpoint() {
    for var in VARS {
        std::env::remove_var(var);
    }
    let missing = |builder: toolnexus::LlmClientBuilder| match builder.model("m").build() {
        Err(ClientError::MissingApiKey { var }) => var,
        other => panic!("expected a missing-key error, got {other:?}"),
    };
    assert_eq!(missing(LlmClient::builder()), "OPENAI_API_KEY");
    assert_eq!(
        missing(LlmClient::builder().style(Style::Anthropic)),
        "ANTHROPIC_API_KEY"
    );
    assert_eq!(
        missing(LlmClient::builder().base_url("https://openrouter.ai/api/v1")),
        "OPENROUTER_API_KEY"
    );
    let err = LlmClient::builder().model("m").build().unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    assert!(err.to_string().contains(".api_key("), "{err}");
    let empty = LlmClient::builder().model("m").api_key("").build();
    assert!(matches!(empty, Err(ClientError::MissingApiKey { .. })));

    let mock = MockLlm::start(vec![Reply::text("hi"); 2]).await.unwrap();
    std::env::set_var("OPENAI_API_KEY", "env-key");
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
    std::env::remove_var("OPENAI_API_KEY");
    from_env.run("hi", &Toolkit::empty()).await.unwrap();
    explicit.run("hi", &Toolkit::empty()).await.unwrap();
    let seen = mock.requests();
    assert_eq!(seen[0].header("authorization"), Some("Bearer env-key"));
    assert_eq!(seen[1].header("authorization"), Some("Bearer explicit-key"));
}
