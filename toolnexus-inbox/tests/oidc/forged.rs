//! Tokens the provider never issued, each made the way an attacker would make it, each
//! carrying claims a real token of the provider's carries (issuer, audience, a current
//! expiry), so only the forgery can be what refuses them.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Map, Value};
use toolnexus_inbox::TokenRefused;
use toolnexus_test_support::oidc::Provider;

use super::{kid, refusal, segment, validator, who, AUDIENCE};

/// A real token's claims with `email` (the person claim) changed to the attacker's pick.
async fn genuine_claims(provider: &Provider) -> (String, Map<String, Value>) {
    let token = provider.token("partner", AUDIENCE, None).await;
    let mut claims = segment(&token, 1);
    claims.insert("email".into(), json!("alice@shop.example"));
    claims.insert("groups".into(), json!(["finance"]));
    (token, claims)
}

fn signed(alg: Algorithm, kid: &str, claims: &Map<String, Value>, key: &EncodingKey) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, key).expect("the forgery is signed")
}

fn ec_key() -> EncodingKey {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .expect("a P-256 key");
    EncodingKey::from_ec_der(pkcs8.as_ref())
}

fn ed_key() -> EncodingKey {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).expect("an Ed25519 key");
    EncodingKey::from_ed_der(pkcs8.as_ref())
}

#[tokio::test]
async fn a_token_signed_by_a_key_not_the_providers_is_refused() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let (genuine, claims) = genuine_claims(&provider).await;
    assert!(
        who(&tokens, &genuine).await.is_some(),
        "the genuine token is taken"
    );

    // Under a key id of its own, the key is not the provider's.
    let stranger = signed(Algorithm::ES256, "attacker-key", &claims, &ec_key());
    let refused = refusal(&tokens, &stranger).await;
    assert_eq!(refused, TokenRefused::UnknownKey("\"attacker-key\"".into()));
    // Under the provider's key id, the key does not fit (an RSA key, an ES256 or EdDSA
    // signature), and would not verify if it did.
    let provider_kid = kid(&genuine);
    for forged in [
        signed(Algorithm::ES256, &provider_kid, &claims, &ec_key()),
        signed(Algorithm::EdDSA, &provider_kid, &claims, &ed_key()),
    ] {
        let refused = refusal(&tokens, &forged).await;
        assert!(matches!(refused, TokenRefused::Algorithm(_)), "{refused}");
    }
    // The provider's own signature over other claims does not verify.
    let mut parts = genuine.split('.');
    let (header, _, signature) = (parts.next(), parts.next(), parts.next());
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).expect("JSON"));
    let spliced = format!(
        "{}.{payload}.{}",
        header.expect("a header"),
        signature.expect("a signature")
    );
    assert_eq!(refusal(&tokens, &spliced).await, TokenRefused::Signature);
}

#[tokio::test]
async fn an_unsigned_token_is_refused() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let (genuine, claims) = genuine_claims(&provider).await;
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).expect("JSON"));
    for alg in ["none", "None", "NONE"] {
        let header = json!({ "alg": alg, "typ": "at+jwt", "kid": kid(&genuine) });
        let header = URL_SAFE_NO_PAD.encode(header.to_string());
        for signature in ["", "e30"] {
            let forged = format!("{header}.{payload}.{signature}");
            let refused = refusal(&tokens, &forged).await;
            assert_eq!(refused, TokenRefused::Algorithm(format!("{alg:?}")));
        }
    }
}

#[tokio::test]
async fn an_hs256_token_keyed_with_the_providers_public_key_is_refused() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let (genuine, claims) = genuine_claims(&provider).await;
    let pem = provider.public_key_pem().await;
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{pem}");
    // The classic key confusion: a verifier that takes the header's word for the
    // algorithm would check this HMAC with the public key it holds, and pass it.
    for secret in [pem.as_bytes(), pem.trim_end().as_bytes()] {
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let forged = signed(
                alg,
                &kid(&genuine),
                &claims,
                &EncodingKey::from_secret(secret),
            );
            let refused = refusal(&tokens, &forged).await;
            assert!(
                matches!(refused, TokenRefused::Algorithm(_)),
                "{alg:?}: {refused}"
            );
        }
    }
}

#[tokio::test]
async fn garbage_in_the_authorization_header_is_nobody() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let oversized = format!("{}.e30.e30", "a".repeat(20_000));
    for token in [
        "",
        "x",
        "a.b",
        "a.b.c",
        "a.b.c.d",
        "e30.e30.e30",
        oversized.as_str(),
    ] {
        let refused = refusal(&tokens, token).await;
        assert!(
            matches!(refused, TokenRefused::Malformed(_)),
            "{token:.40}: {refused}"
        );
    }
}
