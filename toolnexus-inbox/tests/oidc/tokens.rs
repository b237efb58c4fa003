//! Tokens the provider issued: who they name, and when they name no one.

use std::time::Duration;

use toolnexus_inbox::{InboxError, OidcTokens, Refused, TokenRefused};
use toolnexus_test_support::clock::TestClock;
use toolnexus_test_support::oidc::Provider;

use super::{refusal, segment, validator, verdict, who, AUDIENCE, OTHER, TOKEN_LIFETIME};

#[tokio::test]
async fn a_client_credentials_token_names_the_person_and_groups_of_its_claims() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;

    let alice = provider.token("alice", AUDIENCE, Some("agent:call")).await;
    let person = who(&tokens, &alice).await.expect("alice's token is taken");
    let claims = segment(&alice, 1);
    assert_eq!(Some(person.id.as_str()), claims["email"].as_str());
    assert_eq!(person.id, "alice@shop.example");
    assert_eq!(person.groups, ["finance"]);
    assert!(person.is_identified());

    let partner = provider.token("partner", AUDIENCE, None).await;
    let person = who(&tokens, &partner)
        .await
        .expect("the partner's token is taken");
    assert_eq!(person.id, "partner@agents.example");
    assert!(person.groups.is_empty(), "{:?}", person.groups);

    // By default the subject names the person; here, the client's id.
    let by_sub = OidcTokens::builder(provider.issuer())
        .audience(AUDIENCE)
        .build()
        .await
        .expect("builds");
    let person = who(&by_sub, &alice).await.expect("taken");
    assert_eq!(Some(person.id.as_str()), claims["sub"].as_str());
    assert!(person.groups.is_empty(), "no groups claim was named");

    // The scopes granted can be the groups.
    let by_scope = validator(&provider, |b| b.groups_claim("scope")).await;
    let person = who(&by_scope, &alice).await.expect("taken");
    assert_eq!(person.groups, ["agent:call"]);
}

#[tokio::test]
async fn a_token_without_a_required_scope_or_for_another_audience_is_refused() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b.require_scopes(["agent:call"])).await;

    let scoped = provider
        .token("bob", AUDIENCE, Some("agent:call inbox:read"))
        .await;
    assert_eq!(
        who(&tokens, &scoped).await.map(|p| p.id).as_deref(),
        Some("bob@shop.example")
    );
    let unscoped = provider.token("bob", AUDIENCE, Some("inbox:read")).await;
    let refused = refusal(&tokens, &unscoped).await;
    assert_eq!(refused, TokenRefused::Scope("agent:call".into()));
    // A door learns that the token is good but for the scope, and which scopes to ask for.
    assert_eq!(
        verdict(&tokens, Some(&unscoped)).await,
        Err(Refused::insufficient_scope(["agent:call"]))
    );
    assert_eq!(tokens.required_scopes(), ["agent:call"]);

    let elsewhere = provider.token("bob", OTHER, Some("agent:call")).await;
    assert_eq!(segment(&elsewhere, 1)["aud"], OTHER);
    assert_eq!(refusal(&tokens, &elsewhere).await, TokenRefused::Audience);
    // A token for another audience, or none, names no one: nothing more is told.
    for token in [Some(elsewhere.as_str()), Some("not-a-jwt"), None] {
        let refused = verdict(&tokens, token).await.expect_err("refused");
        assert_eq!(refused.status(), 401, "{token:?}");
        assert!(matches!(refused, Refused::Unidentified(_)), "{refused:?}");
    }

    // A validator for both resources takes either.
    let both = validator(&provider, |b| b.audience(OTHER)).await;
    assert!(who(&both, &elsewhere).await.is_some());
}

#[tokio::test]
async fn an_expired_token_is_refused_once_the_leeway_has_passed_too() {
    let provider = Provider::start().await;
    let clock = TestClock::default();
    let tokens = validator(&provider, |b| b.clock(clock.reader())).await;
    let token = provider.token("alice", AUDIENCE, None).await;
    assert!(who(&tokens, &token).await.is_some());

    // Past its expiry, but within the default minute of leeway: still taken.
    clock.advance(TOKEN_LIFETIME + Duration::from_secs(30));
    assert!(who(&tokens, &token).await.is_some());
    // Past the leeway too.
    clock.advance(Duration::from_secs(31));
    assert_eq!(refusal(&tokens, &token).await, TokenRefused::Expired);

    // Without leeway, the expiry is the expiry.
    let strict_clock = TestClock::default();
    let strict = validator(&provider, |b| {
        b.clock(strict_clock.reader()).leeway(Duration::ZERO)
    })
    .await;
    strict_clock.advance(TOKEN_LIFETIME + Duration::from_secs(2));
    assert_eq!(refusal(&strict, &token).await, TokenRefused::Expired);
}

#[tokio::test]
async fn a_token_from_before_its_issue_time_by_the_validators_clock_is_still_judged_by_exp() {
    // A validator whose clock runs behind the provider's takes a token it sees as
    // issued in its future: `iat` is not a validity bound (RFC 7519 §4.1.6), `nbf` is.
    let provider = Provider::start().await;
    let token = provider.token("alice", AUDIENCE, None).await;
    let behind = std::time::SystemTime::now() - Duration::from_secs(120);
    let tokens = validator(&provider, move |b| b.clock(move || behind)).await;
    assert!(who(&tokens, &token).await.is_some());
}

#[tokio::test]
async fn the_builder_refuses_a_provider_it_cannot_trust() {
    let provider = Provider::start().await;
    let settle = |result: Result<OidcTokens, InboxError>| match result {
        Ok(tokens) => panic!("built {tokens:?}"),
        Err(e) => e.to_string(),
    };

    // The discovery document names the issuer as 127.0.0.1; asked as localhost, the
    // provider is not the one configured.
    let port = provider.issuer().rsplit(':').next().expect("a port");
    let other_name = format!("http://localhost:{port}");
    let said = OidcTokens::builder(&other_name)
        .audience(AUDIENCE)
        .build()
        .await;
    let said = settle(said);
    assert!(said.contains("names the issuer"), "{said}");

    let no_audience = settle(OidcTokens::builder(provider.issuer()).build().await);
    assert!(no_audience.contains("no audience"), "{no_audience}");

    let in_clear = OidcTokens::builder("http://login.example.com").audience(AUDIENCE);
    let in_clear = settle(in_clear.build().await);
    assert!(
        in_clear.contains("neither https nor http to this host"),
        "{in_clear}"
    );

    let nothing = OidcTokens::builder(provider.issuer())
        .audience(AUDIENCE)
        .algorithms([]);
    let nothing = settle(nothing.build().await);
    assert!(nothing.contains("algorithms is empty"), "{nothing}");
}

#[tokio::test]
async fn debug_shows_the_provider_and_never_a_token() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let token = provider.token("alice", AUDIENCE, None).await;
    assert!(who(&tokens, &token).await.is_some());
    let shown = format!("{tokens:?}");
    assert!(shown.contains(provider.issuer()), "{shown}");
    let signature = token.rsplit('.').next().expect("a signature");
    assert!(!shown.contains(signature), "{shown}");
}
