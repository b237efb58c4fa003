//! Settings checked when the client is built, before anything is sent.

use toolnexus::{ClientError, LlmClient};

#[test]
fn other_settings_are_checked_at_build() {
    let no_model = LlmClient::builder().api_key("k").build().unwrap_err();
    assert!(no_model.to_string().contains("model"), "{no_model}");
    let bad_url = LlmClient::builder()
        .api_key("k")
        .model("m")
        .base_url("not a url")
        .build()
        .unwrap_err();
    assert!(matches!(bad_url, ClientError::Config(_)), "{bad_url}");
    let zero = LlmClient::builder()
        .api_key("k")
        .model("m")
        .max_turns(0)
        .build()
        .unwrap_err();
    assert!(zero.to_string().contains("max_turns"), "{zero}");
    let bad_header = LlmClient::builder()
        .api_key("k")
        .model("m")
        .header("x-token", "line\nbreak-secret")
        .build()
        .unwrap_err();
    assert!(
        !bad_header.to_string().contains("break-secret"),
        "{bad_header}"
    );
}
