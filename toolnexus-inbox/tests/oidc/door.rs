//! The provider's tokens at a door: the inbox page with the validator as its sign-in.

use reqwest::StatusCode;
use toolnexus_inbox::web::InboxPage;
use toolnexus_inbox::Inbox;
use toolnexus_test_support::oidc::Provider;

use super::{validator, AUDIENCE, OTHER};

#[tokio::test]
async fn the_inbox_page_lets_in_a_provider_token_for_it_and_nobody_else() {
    let provider = Provider::start().await;
    let tokens = validator(&provider, |b| b).await;
    let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
    let app = InboxPage::builder(inbox).identity(tokens).build().router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/", listener.local_addr().expect("its address"));
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();
    let get = |token: Option<String>| {
        let mut request = http.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };

    let alice = provider.token("alice", AUDIENCE, None).await;
    let page = get(Some(alice)).await.expect("the page answers");
    assert_eq!(page.status(), StatusCode::OK);
    let body = page.text().await.expect("a page");
    assert!(
        body.contains("alice@shop.example"),
        "the page greets alice: {body}"
    );

    let nobody = get(None).await.expect("the page answers");
    assert_eq!(nobody.status(), StatusCode::UNAUTHORIZED);
    let elsewhere = provider.token("alice", OTHER, None).await;
    let refused = get(Some(elsewhere.clone()))
        .await
        .expect("the page answers");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let body = refused.text().await.expect("a page");
    assert!(
        !body.contains(&elsewhere),
        "the refusal echoes nothing sent"
    );

    serving.abort();
}
