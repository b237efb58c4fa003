//! The HTTP endpoint as an OAuth protected resource, with a real OpenID provider
//! (`TOOLNEXUS_TEST_OIDC`): a client that knows nothing but the endpoint's URL follows the
//! 401 to the resource metadata, from there to the provider, gets a token for this
//! resource and is served; a token for another resource is refused. The official Python
//! SDK's OAuth client does it by itself, by client credentials and for a person by the
//! authorization code flow with PKCE.

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolnexus_inbox::OidcTokens;
use toolnexus_mcp::{McpError, McpServer, ProtectedResource};
use toolnexus_test_support::oidc::Provider;

use crate::tasks::{builder, signed};

/// A resource of the same provider's that is not this server.
const OTHER_RESOURCE: &str = "https://other.toolnexus.test";

/// The `resource_metadata` a challenge names, if it names one.
fn metadata_url(challenge: &str) -> Option<&str> {
    let (_, after) = challenge.split_once("resource_metadata=\"")?;
    after.split_once('"').map(|(url, _)| url)
}

#[tokio::test]
async fn a_client_follows_the_401_to_the_provider_and_back_with_a_token_for_this_server() {
    let provider = Provider::start().await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("its address"));
    let resource = ProtectedResource::new(&url)
        .authorization_server(provider.issuer())
        .scopes(["agent:call"]);
    let tokens = OidcTokens::builder(provider.issuer())
        .audience(resource.resource())
        .person_claim("email")
        .build()
        .await
        .unwrap_or_else(|e| panic!("the validator builds: {e}"));
    let server = builder(Default::default(), std::time::Duration::from_millis(20))
        .identify(tokens)
        .protected_resource(resource.clone())
        .build()
        .expect("the server builds");
    let app = axum::Router::new()
        .nest_service("/mcp", server.http_service())
        .route_service(&resource.metadata_path(), resource.metadata_service());
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bare", "version": "1"}}});
    let post = |token: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };

    // Without a token: 401, naming where to learn how to get one.
    let refused = post(None).await.expect("the server answers");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    let at = metadata_url(&challenge).unwrap_or_else(|| panic!("no metadata in {challenge}"));
    assert_eq!(at, resource.metadata_url());
    assert!(!challenge.contains("invalid_token"), "{challenge}");
    // And which scopes to ask for (MCP 2025-11-25: the client takes these first).
    assert!(challenge.contains("scope=\"agent:call\""), "{challenge}");

    // The metadata names this resource and the provider; the provider its token endpoint.
    let metadata: Value = http
        .get(at)
        .send()
        .await
        .expect("served")
        .json()
        .await
        .expect("JSON");
    assert_eq!(metadata["resource"], url.as_str());
    assert_eq!(metadata["scopes_supported"], json!(["agent:call"]));
    let issuer = metadata["authorization_servers"][0]
        .as_str()
        .expect("an issuer");
    assert_eq!(issuer, provider.issuer());
    let discovery: Value = http
        .get(format!("{issuer}/.well-known/openid-configuration"))
        .send()
        .await
        .expect("the provider answers")
        .json()
        .await
        .expect("JSON");
    assert!(discovery["token_endpoint"].is_string(), "{discovery}");

    // A token for this resource (RFC 8707) is served, by rmcp's own client too.
    let token = provider.token("alice", &url, Some("agent:call")).await;
    let served = post(Some(&token)).await.expect("the server answers");
    assert_eq!(served.status(), StatusCode::OK);
    let client = signed(&url, &token).await;
    let tools = client.list_all_tools().await.expect("the tools are listed");
    assert!(tools.iter().any(|t| t.name == "delete_file"), "{tools:?}");

    // A token the same provider issued for another resource is not one for this server.
    let elsewhere = provider
        .token("alice", "https://other.toolnexus.test", None)
        .await;
    let refused = post(Some(&elsewhere)).await.expect("the server answers");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert_eq!(
        metadata_url(challenge),
        Some(resource.metadata_url().as_str())
    );
    serving.abort();
}

#[test]
fn a_resource_a_client_cannot_be_sent_to_is_refused_at_build() {
    let build = |resource: ProtectedResource| {
        McpServer::builder(toolnexus::Toolkit::builder().build().expect("a toolkit"))
            .protected_resource(resource)
            .build()
    };
    let issuer = "https://login.example.com";
    for (resource, why) in [
        (
            ProtectedResource::new("http://tools.example.com/mcp"),
            "https",
        ),
        (ProtectedResource::new("/mcp"), "absolute"),
        (
            ProtectedResource::new("https://tools.example.com/mcp?x=1"),
            "query",
        ),
    ] {
        match build(resource.authorization_server(issuer)) {
            Err(McpError::InvalidResource { reason, .. }) => {
                assert!(reason.contains(why), "{reason}");
            }
            other => panic!("built: {other:?}"),
        }
    }
    let alone = build(ProtectedResource::new("https://tools.example.com/mcp"));
    assert!(
        matches!(&alone, Err(McpError::InvalidResource { reason, .. }) if reason.contains("authorization server")),
        "{alone:?}"
    );
    let root = ProtectedResource::new("https://tools.example.com").authorization_server(issuer);
    assert_eq!(
        root.metadata_path(),
        "/.well-known/oauth-protected-resource"
    );
    assert!(build(root).is_ok());
}

#[tokio::test]
async fn the_example_server_takes_the_providers_tokens_and_finance_alone_approves() {
    let provider = Provider::start().await;
    let args = [
        "--http",
        "127.0.0.1:0",
        "--oidc",
        provider.issuer(),
        "--person-claim",
        "email",
        "--groups-claim",
        "groups",
        "--approvers",
        "finance",
    ];
    let server = crate::example_bin::Serving::start("mcp_server", &args, "listening on ");
    let url = server.url.as_str();

    // The 401 names the metadata; the metadata names this endpoint and the provider.
    let refused = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII");
    let at = metadata_url(challenge).unwrap_or_else(|| panic!("no metadata in {challenge}"));
    let metadata: Value = reqwest::get(at)
        .await
        .expect("served")
        .json()
        .await
        .expect("JSON");
    assert_eq!(metadata["resource"], url);
    assert_eq!(
        metadata["authorization_servers"],
        json!([provider.issuer()])
    );

    // The official SDK's client, with a token the provider issued for this endpoint.
    let gpu = || json!({"item": "gpu"});
    let partner = provider.token("partner", url, None).await;
    let asked = crate::python::asked_by(url, &partner, "approve_purchase", gpu()).await;
    assert_eq!(asked["error"], true, "{asked}");
    let text = asked["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("group:finance") && text.contains("not taken"),
        "{text}"
    );
    let alice = provider.token("alice", url, None).await;
    let approved = crate::python::asked_by(url, &alice, "approve_purchase", gpu()).await;
    assert_eq!(approved["error"], false, "{approved}");
    assert_eq!(approved["text"], "approved: gpu", "{approved}");
    // Alice's token for another resource is no token for this one.
    let elsewhere = provider.token("alice", OTHER_RESOURCE, None).await;
    let refused = crate::python::asked_by(url, &elsewhere, "approve_purchase", gpu()).await;
    assert!(refused["refused"].is_string(), "{refused}");
}

/// What `oauth.py` reports of the official SDK's OAuth client, as `client` at the
/// provider, calling `approve_purchase` for a gpu at `url`; `held` is a token (and its
/// scope) the SDK holds from before.
async fn sdk_oauth(url: &str, issuer: &str, client: &str, held: Option<(&str, &str)>) -> Value {
    let args = json!({"item": "gpu"}).to_string();
    let mut argv = vec![url, issuer, client, "approve_purchase", args.as_str()];
    if let Some((token, scope)) = held {
        argv.extend([token, scope]);
    }
    let out = crate::support::run_script("oauth.py", &argv).await;
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("one JSON line ({e}): {out}"))
}

/// The exchanges of `report` with `to` (the MCP endpoint), in order.
fn exchanges<'v>(report: &'v Value, to: &str) -> Vec<&'v Value> {
    let all = report["exchanges"].as_array().expect("the exchanges");
    all.iter()
        .filter(|x| x["url"].as_str() == Some(to))
        .collect()
}

#[tokio::test]
async fn the_official_sdk_signs_in_by_itself_from_the_401_and_steps_up_on_a_403() {
    let provider = Provider::start().await;
    let issuer = provider.issuer();
    let args = [
        "--http",
        "127.0.0.1:0",
        "--oidc",
        issuer,
        "--person-claim",
        "email",
        "--groups-claim",
        "groups",
        "--scope",
        "agent:call",
        "--approvers",
        "finance",
    ];
    let server = crate::example_bin::Serving::start("mcp_server", &args, "listening on ");
    let url = server.url.as_str();
    let token_endpoint = format!("{issuer}/token");

    // Alice's client knows the endpoint and its own credentials: the 401 leads it to the
    // metadata, the metadata to the provider, which issues a token for this resource with
    // the scope the metadata names; finance's acceptance approves the purchase.
    let alice = sdk_oauth(url, issuer, "alice", None).await;
    assert_eq!(alice["error"], false, "{alice}");
    assert_eq!(alice["text"], "approved: gpu", "{alice}");
    let calls = exchanges(&alice, url);
    assert_eq!(calls[0]["status"], 401, "{alice}");
    let challenge = calls[0]["challenge"].as_str().unwrap_or_default();
    let metadata = metadata_url(challenge).unwrap_or_else(|| panic!("{challenge}"));
    assert_eq!(read_in(&alice, metadata)["status"], 200, "{alice}");
    let token = read_in(&alice, &token_endpoint);
    assert_eq!(token["status"], 200, "{alice}");
    assert_eq!(
        token["resource"], url,
        "RFC 8707: the token is asked for this resource"
    );
    assert_eq!(token["scope"], "agent:call");
    assert_eq!(alice["scope"], "agent:call");
    assert!(calls[1..].iter().all(|x| x["status"] != 401), "{alice}");

    // The partner signs in the same way and is served, but cannot approve for finance.
    let partner = sdk_oauth(url, issuer, "partner", None).await;
    assert_eq!(partner["error"], true, "{partner}");
    let text = partner["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("group:finance") && text.contains("not taken"),
        "{text}"
    );

    // A token bob holds from before, without the scope: 403 insufficient_scope naming it,
    // and the SDK steps up to a token that holds both.
    let narrow = provider.token("bob", url, Some("inbox:read")).await;
    let bob = sdk_oauth(url, issuer, "bob", Some((&narrow, "inbox:read"))).await;
    assert_eq!(bob["text"], "approved: gpu", "{bob}");
    let calls = exchanges(&bob, url);
    assert_eq!(calls[0]["status"], 403, "{bob}");
    let challenge = calls[0]["challenge"].as_str().unwrap_or_default();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"agent:call\"")
            && metadata_url(challenge) == Some(metadata),
        "{challenge}"
    );
    let stepped = read_in(&bob, &token_endpoint);
    let asked = stepped["scope"].as_str().unwrap_or_default();
    let mut asked: Vec<&str> = asked.split_whitespace().collect();
    asked.sort_unstable();
    assert_eq!(asked, ["agent:call", "inbox:read"], "{bob}");
    assert_eq!(stepped["resource"], url);

    // A token bob holds for another resource is refused as no token for this one; the SDK
    // then signs in afresh for this resource.
    let elsewhere = provider
        .token("bob", OTHER_RESOURCE, Some("agent:call"))
        .await;
    let bob = sdk_oauth(url, issuer, "bob", Some((&elsewhere, "agent:call"))).await;
    assert_eq!(bob["text"], "approved: gpu", "{bob}");
    let calls = exchanges(&bob, url);
    assert_eq!(calls[0]["status"], 401, "{bob}");
    let challenge = calls[0]["challenge"].as_str().unwrap_or_default();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert_eq!(read_in(&bob, &token_endpoint)["resource"], url);
}

/// The exchange of `report` with `at`: there is one.
fn read_in<'v>(report: &'v Value, at: &str) -> &'v Value {
    let all = report["exchanges"].as_array().expect("the exchanges");
    let found = all.iter().find(|x| x["url"].as_str() == Some(at));
    found.unwrap_or_else(|| panic!("nothing went to {at}: {report}"))
}

/// What `oauth_code.py` reports of the official SDK's OAuth client acting for `login`
/// (the provider's public `tools` client, authorization code with PKCE), calling
/// `approve_purchase` for a gpu at `url`.
async fn sdk_for_person(url: &str, login: &str) -> Value {
    let args = json!({"item": "gpu"}).to_string();
    let password = format!("{login}-password");
    // The SDK never listens on it: the headless browser reads the code off the redirect.
    let redirect = "http://127.0.0.1:9/callback";
    let argv = [
        url,
        "tools",
        redirect,
        login,
        password.as_str(),
        "approve_purchase",
        args.as_str(),
    ];
    let out = crate::support::run_script("oauth_code.py", &argv).await;
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("one JSON line ({e}): {out}"))
}

#[tokio::test]
async fn the_official_sdk_signs_a_person_in_by_authorization_code_with_pkce() {
    let provider = Provider::start().await;
    let args = [
        "--http",
        "127.0.0.1:0",
        "--oidc",
        provider.issuer(),
        "--person-claim",
        "email",
        "--groups-claim",
        "groups",
        "--scope",
        "agent:call",
        "--approvers",
        "finance",
    ];
    let server = crate::example_bin::Serving::start("mcp_server", &args, "listening on ");
    let url = server.url.as_str();

    // Alice signs in on the provider's form; the SDK asked for a token for this resource,
    // with the scope the 401 named, by PKCE; her token names her, of finance.
    let alice = sdk_for_person(url, "alice").await;
    assert_eq!(alice["text"], "approved: gpu", "{alice}");
    assert_eq!(
        alice["authorization"],
        json!({"resource": url, "scope": "agent:call", "code_challenge_method": "S256"})
    );
    assert_eq!(alice["scope"], "agent:call", "{alice}");

    // Mallory signs in just as well, and her acceptance is not finance's.
    let mallory = sdk_for_person(url, "mallory").await;
    assert_eq!(mallory["error"], true, "{mallory}");
    let text = mallory["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("group:finance") && text.contains("not taken"),
        "{text}"
    );
}
