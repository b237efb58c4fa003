//! The provider's keys as the validator keeps them: a rotation followed without a restart
//! and without a refusal, and a floor between the reads strangers can cause.

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use toolnexus_inbox::TokenRefused;
use toolnexus_test_support::clock::TestClock;
use toolnexus_test_support::oidc::Provider;

use super::{kid, refusal, segment, validator, who, AUDIENCE};

#[tokio::test]
async fn a_key_rotation_is_followed_without_refusing_a_token_of_the_new_key() {
    let provider = Provider::start().await;
    let clock = TestClock::default();
    let tokens = validator(&provider, |b| b.clock(clock.reader())).await;
    let before = provider.token("alice", AUDIENCE, None).await;
    assert!(who(&tokens, &before).await.is_some());
    let reads = provider.jwks_reads().await;

    let new_kid = provider.rotate().await;
    let after = provider.token("alice", AUDIENCE, None).await;
    assert_eq!(kid(&after), new_kid, "the provider signs with its new key");
    assert_ne!(kid(&before), new_kid);
    let person = who(&tokens, &after)
        .await
        .expect("the new key's token is taken at once");
    assert_eq!(person.id, "alice@shop.example");
    assert_eq!(
        provider.jwks_reads().await,
        reads + 1,
        "one read found the new key"
    );

    // The old key is still published, so its tokens still verify; nothing is read again.
    assert!(who(&tokens, &before).await.is_some());
    assert!(who(&tokens, &after).await.is_some());
    assert_eq!(provider.jwks_reads().await, reads + 1);

    // A second rotation once the floor has passed is followed too.
    clock.advance(Duration::from_secs(31));
    provider.rotate().await;
    let third = provider.token("bob", AUDIENCE, None).await;
    assert!(who(&tokens, &third).await.is_some());
    assert_eq!(provider.jwks_reads().await, reads + 2);
}

#[tokio::test]
async fn requests_meeting_the_same_new_key_together_share_one_read() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let reads = provider.jwks_reads().await;
    provider.rotate().await;
    let token = provider.token("bob", AUDIENCE, None).await;

    let checks = (0..16).map(|_| {
        let (tokens, token) = (tokens.clone(), token.clone());
        tokio::spawn(async move { who(&tokens, &token).await })
    });
    for check in futures::future::join_all(checks).await {
        let person = check
            .expect("the check ran")
            .expect("every request is taken");
        assert_eq!(person.id, "bob@shop.example");
    }
    assert_eq!(provider.jwks_reads().await, reads + 1);
}

#[tokio::test]
async fn a_flood_of_unknown_key_ids_reads_the_keys_at_most_once_per_floor() {
    let provider = Provider::start().await;
    let clock = TestClock::default();
    let floor = Duration::from_secs(30);
    let tokens = validator(&provider, |b| b.clock(clock.reader()).refresh_floor(floor)).await;
    let genuine = provider.token("partner", AUDIENCE, None).await;
    let claims = segment(&genuine, 1);
    let reads = provider.jwks_reads().await;

    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .expect("a P-256 key");
    let key = EncodingKey::from_ec_der(pkcs8.as_ref());
    let forged = |n: usize| {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(format!("made-up-{n}"));
        jsonwebtoken::encode(&header, &claims, &key).expect("signed")
    };

    let flood = (0..100).map(|n| {
        let (tokens, token) = (tokens.clone(), forged(n));
        tokio::spawn(async move { who(&tokens, &token).await })
    });
    for check in futures::future::join_all(flood).await {
        assert_eq!(check.expect("the check ran"), None);
    }
    // The first unknown key id read the keys; every other one was held back.
    assert_eq!(
        provider.jwks_reads().await,
        reads + 1,
        "one read for the whole flood"
    );

    // Within the floor, another unknown key id is not read for.
    clock.advance(floor - Duration::from_secs(1));
    let refused = refusal(&tokens, &forged(1_000)).await;
    assert_eq!(
        refused,
        TokenRefused::UnknownKeyFloor("\"made-up-1000\"".into())
    );
    assert_eq!(provider.jwks_reads().await, reads + 1);

    // Once it has passed, the next unknown key id is read for, once.
    clock.advance(Duration::from_secs(1));
    let refused = refusal(&tokens, &forged(2_000)).await;
    assert_eq!(refused, TokenRefused::UnknownKey("\"made-up-2000\"".into()));
    for n in 2_001..2_010 {
        let refused = refusal(&tokens, &forged(n)).await;
        assert!(
            matches!(refused, TokenRefused::UnknownKeyFloor(_)),
            "{refused}"
        );
    }
    assert_eq!(provider.jwks_reads().await, reads + 2);

    // Known keys are never held back by the floor.
    assert!(who(&tokens, &genuine).await.is_some());
}

#[tokio::test]
async fn a_key_the_provider_withdrew_stops_verifying_once_the_keys_are_past_their_age() {
    let provider = Provider::start().await;
    let clock = TestClock::default();
    // Shorter than the tokens live, so the clock moved past it leaves them current.
    let max_age = Duration::from_secs(120);
    let tokens = validator(&provider, |b| b.clock(clock.reader()).keys_max_age(max_age)).await;
    let old = provider.token("alice", AUDIENCE, None).await;
    assert!(who(&tokens, &old).await.is_some());

    let new_kid = provider.rotate_retiring().await;
    let new = provider.token("alice", AUDIENCE, None).await;
    assert_eq!(kid(&new), new_kid);
    // Within their age the keys held stand: the withdrawn one still verifies, and the
    // new one is read for.
    assert!(who(&tokens, &old).await.is_some());
    assert!(who(&tokens, &new).await.is_some());
    let reads = provider.jwks_reads().await;

    // Past their age, they are read again before use: the withdrawn key is gone.
    clock.advance(max_age);
    let refused = refusal(&tokens, &old).await;
    assert_eq!(
        refused,
        TokenRefused::UnknownKey(format!("{:?}", kid(&old)))
    );
    assert!(who(&tokens, &new).await.is_some());
    assert_eq!(provider.jwks_reads().await, reads + 1, "one read, for both");
}

#[tokio::test]
async fn while_the_provider_is_down_the_keys_held_go_on_verifying() {
    let provider = Provider::start().await;
    let clock = TestClock::default();
    let max_age = Duration::from_secs(120);
    let tokens = validator(&provider, |b| b.clock(clock.reader()).keys_max_age(max_age)).await;
    let token = provider.token("bob", AUDIENCE, None).await;
    assert!(who(&tokens, &token).await.is_some());
    let stranger = provider.token("bob", AUDIENCE, None).await;
    drop(provider);

    // Past their age, the keys cannot be read again: those held still verify.
    clock.advance(max_age);
    assert!(who(&tokens, &token).await.is_some());
    // A key not held cannot be had, and a token naming it is refused for that.
    let mut header = segment(&stranger, 0);
    header.insert("kid".into(), "rotated-while-down".into());
    let header = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        serde_json::to_vec(&header).expect("JSON"),
    );
    let (_, rest) = stranger.split_once('.').expect("a JWT");
    clock.advance(Duration::from_secs(31));
    let refused = refusal(&tokens, &format!("{header}.{rest}")).await;
    assert_eq!(refused, TokenRefused::KeysUnreachable);
}
