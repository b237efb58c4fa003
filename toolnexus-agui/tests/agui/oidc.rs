//! Callers signed in with a real OpenID provider's access tokens (`OidcTokens` as the
//! endpoint's hook): a partner's client-credentials token starts a run and cannot approve
//! what finance must; a finance member's token approves it; a request without a token, or
//! with one for another service, is refused with 401 before any stream, and one lacking the
//! scope the endpoint requires with 403.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolnexus_inbox::OidcTokens;
use toolnexus_test_support::oidc::Provider;

use crate::identity::{post, say};
use crate::support::*;

/// The audience the endpoint's tokens are for.
const AUDIENCE: &str = "https://agui.toolnexus.test";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn provider_tokens_sign_callers_in_and_the_partners_cannot_approve() {
    let provider = Provider::start().await;
    let tokens = OidcTokens::builder(provider.issuer())
        .audience(AUDIENCE)
        .person_claim("email")
        .groups_claim("groups")
        .build()
        .await
        .unwrap_or_else(|e| panic!("the validator builds: {e}"));
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve_with(
        &db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        |inbox| inbox.responders("approval", ["group:finance"]),
        |server| server.identify(tokens),
    )
    .await;

    let elsewhere = provider
        .token("alice", "https://other.toolnexus.test", None)
        .await;
    for (token, challenge) in [
        (None, "Bearer"),
        (Some(elsewhere.as_str()), "Bearer error=\"invalid_token\""),
    ] {
        let (status, sent, body) = post(&agent.url, token, say("t", "buy a gpu")).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(sent.as_deref(), Some(challenge));
        assert!(!body.contains(&elsewhere), "nothing sent is echoed: {body}");
    }

    let partner = provider.token("partner", AUDIENCE, None).await;
    let (status, _, body) = post(&agent.url, Some(&partner), say("t", "buy a gpu")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Approve purchase of gpu?"), "{body}");
    let waiting = agent.inbox.waiting().await.expect("the inbox reads");
    let id = waiting[0].request.id.clone();
    let resume = json!({"threadId": "t", "runId": "r2", "messages": [],
        "resume": [{"interruptId": id, "status": "resolved", "payload": {"approved": true}}]});
    let (status, _, body) = post(&agent.url, Some(&partner), resume.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("not_allowed"), "{body}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);

    let alice = provider.token("alice", AUDIENCE, None).await;
    let (status, _, body) = post(&agent.url, Some(&alice), resume).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("RUN_FINISHED"), "{body}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    let answered = agent.inbox.get(&id).await.expect("reads").expect("kept");
    assert_eq!(answered.answered_by.as_deref(), Some("alice@shop.example"));
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_token_lacking_the_required_scope_is_forbidden_naming_the_scope() {
    let provider = Provider::start().await;
    let tokens = OidcTokens::builder(provider.issuer())
        .audience(AUDIENCE)
        .person_claim("email")
        .require_scopes(["agent:call"])
        .build()
        .await
        .unwrap_or_else(|e| panic!("the validator builds: {e}"));
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve_with(
        &db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        |inbox| inbox,
        |server| server.identify(tokens),
    )
    .await;

    let narrow = provider.token("alice", AUDIENCE, Some("inbox:read")).await;
    let (status, sent, body) = post(&agent.url, Some(&narrow), say("t", "buy a gpu")).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        sent.as_deref(),
        Some("Bearer error=\"insufficient_scope\", scope=\"agent:call\"")
    );
    assert!(body.contains("insufficient_scope"), "{body}");
    assert!(
        !body.contains("alice"),
        "who the token names is not told: {body}"
    );
    let waiting = agent.inbox.waiting().await.expect("the inbox reads");
    assert!(waiting.is_empty(), "no run started: {waiting:?}");

    let scoped = provider.token("alice", AUDIENCE, Some("agent:call")).await;
    let (status, _, body) = post(&agent.url, Some(&scoped), say("t", "buy a gpu")).await;
    assert_eq!(status, 200, "{body}");
    agent.stop().await;
}
