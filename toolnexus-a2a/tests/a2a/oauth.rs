//! Callers with a real OpenID provider's access tokens (`OidcTokens` as the hook), where
//! the card declares an OAuth 2.0 client-credentials flow: a partner's service reads the
//! token endpoint and the scope from the card the official `a2a-sdk` client fetched, gets
//! a token there for this agent, and is served; a token without the scope gets 403 naming
//! it, and the card without a hook is refused at build.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus_a2a::{A2aError, A2aServer, CardSecurity};
use toolnexus_inbox::{Inbox, OidcTokens};
use toolnexus_test_support::oidc::Provider;

use crate::support::*;

/// The resource the agent's tokens are for.
const AUDIENCE: &str = "https://shop.toolnexus.test/";

/// A token from `token_url` by the client credentials of `client`, for [`AUDIENCE`] with
/// `scope`, as a partner's service asks for one.
async fn token(token_url: &str, client: &str, scope: &str) -> String {
    let secret = format!("{client}-secret");
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client),
        ("client_secret", secret.as_str()),
        ("resource", AUDIENCE),
        ("scope", scope),
    ];
    let answer: Value = reqwest::Client::new()
        .post(token_url)
        .form(&form)
        .send()
        .await
        .expect("the token endpoint answers")
        .json()
        .await
        .expect("JSON");
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_card_names_the_token_endpoint_and_its_scope_and_a_token_without_it_is_forbidden() {
    let provider = Provider::start().await;
    let issuer = provider.issuer().to_owned();
    let tokens = OidcTokens::builder(&issuer)
        .audience(AUDIENCE)
        .person_claim("email")
        .groups_claim("groups")
        .require_scopes(["agent:call"])
        .build()
        .await
        .unwrap_or_else(|e| panic!("the validator builds: {e}"));
    let security = CardSecurity::client_credentials(format!("{issuer}/token"))
        .metadata_url(format!("{issuer}/.well-known/openid-configuration"))
        .scope("agent:call", "Call the shop agent")
        .description("Client credentials of the shop's provider");
    let db = TestDb::sqlite();
    let model = model().await;
    let options = Options {
        approvers: Some(vec!["group:finance"]),
        server: Some(Box::new(move |server| {
            server.identify(tokens).card_security(security)
        })),
        ..Options::default()
    };
    let agent = Agent::serve_with(&db, &model, Arc::new(AtomicUsize::new(0)), options).await;

    let out = drive(&agent.url, json!([{"card": {}}])).await;
    let card = &out[0]["card"];
    let scheme = &card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"];
    let flow = &scheme["flows"]["clientCredentials"];
    assert_eq!(
        flow["scopes"],
        json!({"agent:call": "Call the shop agent"}),
        "{card}"
    );
    assert_eq!(
        scheme["oauth2MetadataUrl"],
        format!("{issuer}/.well-known/openid-configuration")
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"oauth2": {"list": ["agent:call"]}}}]),
        "{card}"
    );
    assert!(card["securitySchemes"].get("bearer").is_none(), "{card}");

    // The partner's service follows the card: its token endpoint, its scope.
    let token_url = flow["tokenUrl"].as_str().expect("a token URL");
    let partner = token(token_url, "partner", "agent:call").await;
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "buy a gpu", "token": partner}}]),
    )
    .await;
    assert_eq!(
        state(task_of(&out[0])),
        "TASK_STATE_INPUT_REQUIRED",
        "{}",
        out[0]
    );

    // A token of the same provider without the scope: 403 naming it, nothing started.
    let unscoped = token(token_url, "partner", "inbox:read").await;
    let refused = reqwest::Client::new()
        .post(&agent.url)
        .bearer_auth(&unscoped)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .expect("the agent answers");
    assert_eq!(refused.status(), 403);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert_eq!(
        challenge,
        "Bearer realm=\"Shop\", error=\"insufficient_scope\", scope=\"agent:call\""
    );
    let body: Value = refused.json().await.expect("a JSON body");
    assert_eq!(body["error"]["status"], "PERMISSION_DENIED", "{body}");
    assert!(!body.to_string().contains("partner"), "{body}");
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "buy a cpu", "token": unscoped}}]),
    )
    .await;
    assert!(out[0].get("error").is_some(), "{}", out[0]);
    agent.stop().await;
}

#[tokio::test]
async fn a_card_security_without_a_hook_is_refused_at_build() {
    let client = toolnexus::LlmClient::builder()
        .model("m")
        .api_key("k")
        .build()
        .expect("a client");
    let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
    let built = A2aServer::builder(client, toolnexus::Toolkit::empty(), inbox)
        .card_security(CardSecurity::open_id_connect("https://login.example.com"))
        .build();
    match built {
        Err(A2aError::CardSecurity(why)) => assert!(why.contains("identify"), "{why}"),
        other => panic!("built: {other:?}"),
    }
}
