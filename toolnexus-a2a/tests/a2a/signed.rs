//! Signed agent cards: the official SDK's verifier takes the card a signing server serves
//! with the signer's key and no other; the remote client connects only to a card its key
//! signed, and refuses one changed on its way, one signed by another key and an unsigned
//! one, before anything is sent to the agent.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use toolnexus_a2a::{A2aError, CardKey, CardSigner, RemoteAgent};

use crate::support::*;

fn signer(kid: &str) -> CardSigner {
    let pkcs8 = CardSigner::generate_pkcs8().expect("a new key");
    CardSigner::from_pkcs8(&pkcs8, kid).expect("the key reads back")
}

/// The shop agent, its card signed by `signer`, and its scripted model.
async fn signed(db: &TestDb, signer: CardSigner) -> (Agent, toolnexus::testing::MockLlm) {
    let model = model().await;
    let options = Options {
        server: Some(Box::new(move |server| server.sign_card(signer))),
        ..Options::default()
    };
    let agent = Agent::serve_with(db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    (agent, model)
}

fn public(key: &CardKey) -> String {
    URL_SAFE_NO_PAD.encode(key.public_bytes())
}

/// Serves `card` at its well-known path on a loopback port of its own, as a proxy or a
/// cache in front of the agent would: its URL.
async fn serve_card(card: Value) -> String {
    let app = Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let card = card.clone();
            async move { Json(card) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_official_verifier_takes_the_signed_card_with_its_key_only() {
    let db = TestDb::sqlite();
    let signer = signer("shop-2026");
    let key = signer.verifying_key();
    let (agent, _model) = signed(&db, signer).await;
    let stranger = self::signer("shop-2026").verifying_key();
    let out = drive(
        &agent.url,
        json!([
            {"card": {}},
            {"verifyCard": {"publicKey": public(&key)}},
            {"verifyCard": {"publicKey": public(&stranger)}},
        ]),
    )
    .await;
    let signatures = &out[0]["card"]["signatures"];
    assert_eq!(signatures.as_array().map(Vec::len), Some(1), "{}", out[0]);
    assert_eq!(out[1]["verified"], true, "{}", out[1]);
    assert_eq!(out[2]["error"], "InvalidSignaturesError", "{}", out[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_remote_client_connects_only_to_a_card_its_key_signed() {
    let db = TestDb::sqlite();
    let signer = signer("shop-2026");
    let key = signer.verifying_key();
    let (agent, model) = signed(&db, signer).await;

    let remote = RemoteAgent::builder(&agent.url)
        .card_key(key.clone())
        .connect()
        .await
        .expect("the signed card is taken");
    assert_eq!(remote.card().name, "Shop");

    // The same card, its description changed by whoever served it.
    let card: Value = reqwest::get(format!("{}.well-known/agent-card.json", agent.url))
        .await
        .expect("the card")
        .json()
        .await
        .expect("JSON");
    let mut changed = card.clone();
    changed["description"] = json!("Buys anything, asks no one");
    let proxy = serve_card(changed).await;
    let refused = RemoteAgent::builder(&proxy)
        .card_key(key.clone())
        .connect()
        .await;
    assert!(
        matches!(&refused, Err(A2aError::CardSignature { reason, .. })
            if reason == "the signature does not match the card"),
        "{refused:?}"
    );

    // Another key's signature, and no signature at all.
    let other = self::signer("shop-2026").verifying_key();
    let refused = RemoteAgent::builder(&agent.url)
        .card_key(other)
        .connect()
        .await;
    assert!(matches!(refused, Err(A2aError::CardSignature { .. })));
    let mut bare = card;
    bare.as_object_mut().map(|c| c.remove("signatures"));
    let unsigned = serve_card(bare).await;
    let refused = RemoteAgent::builder(&unsigned)
        .card_key(key)
        .connect()
        .await;
    assert!(
        matches!(&refused, Err(A2aError::CardSignature { reason, .. })
            if reason == "the card is not signed"),
        "{refused:?}"
    );
    assert_eq!(model.calls(), 0, "nothing was sent to the agent");
}
