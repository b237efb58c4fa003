//! "Sign in with your company account" in the browser, through the real OpenID provider
//! and its login form: Alice (finance) signs in, lands back on the request she opened,
//! approves it and the run resumes once; she signs out and her session is over; Mallory
//! (in no group) signs in and cannot answer a request for finance; a callback the page
//! never started signs nobody in.

use super::*;
use toolnexus_inbox::web::OidcSignIn;
use toolnexus_inbox::Inbox;
use toolnexus_test_support::oidc::Provider;

/// The page with the provider's sign-in beside its token, on loopback at the root.
async fn sign_in_site(provider: &Provider) -> Site {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let host = format!("http://{}/", listener.local_addr().expect("an address"));
    let sign_in = OidcSignIn::builder(provider.issuer(), "inbox")
        .client_secret("inbox-secret")
        .redirect_url(format!("{host}sign-in/callback"))
        .scopes(["email", "profile", "groups"])
        .person_claim("email")
        .groups_claim("groups")
        .build()
        .await
        .unwrap_or_else(|e| panic!("the sign-in builds: {e}"));
    let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
    Site::serve_on(
        listener,
        inbox,
        |page| page.sign_in(sign_in),
        Mounting::Root,
    )
    .await
}

/// Clicks the page's sign-in and logs in at the provider as `login`.
async fn sign_in_with_provider(browser: &Client, provider: &Provider, login: &str) {
    click_link(browser, "Sign in with your company account").await;
    // The provider's own login form.
    css(browser, "#login").await;
    let here = browser.current_url().await.expect("a URL");
    assert!(
        here.as_str().starts_with(provider.issuer()),
        "the browser is at the provider: {here}"
    );
    type_into(browser, "#login", login).await;
    type_into(browser, "#password", &format!("{login}-password")).await;
    click(browser, "#sign-in").await;
}

/// The session cookie the sign-in set, as the browser keeps it.
async fn session_cookie(browser: &Client) -> fantoccini::cookies::Cookie<'static> {
    browser
        .get_all_cookies()
        .await
        .expect("the cookies")
        .into_iter()
        .find(|c| c.name().starts_with("toolnexus_inbox_") && c.name().ends_with("_id"))
        .expect("a session cookie")
}

#[tokio::test]
async fn alice_signs_in_approves_and_signs_out() {
    let provider = Provider::start().await;
    let site = sign_in_site(&provider).await;
    let id = site.refund(40).await;
    let stop = toolnexus::CancellationToken::new();
    let worker = site.inbox.worker(site.client.clone(), site.tk.clone());
    let worker = tokio::spawn(worker.run(stop.clone().cancelled_owned()));

    // The request she was sent to asks her to sign in, and brings her back to it.
    let browser = browser().await;
    browser
        .goto(&site.request_url(&id))
        .await
        .expect("the request opens");
    wait_for_text(&browser, "Sign in with your company account", false).await;
    screenshot(&browser, WIDE, "inbox-sign-in.png", false).await;
    sign_in_with_provider(&browser, &provider, "alice").await;
    assert_eq!(arrival(&browser, &id).await, site.request_url(&id));
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Alice"
    );
    let cookie = session_cookie(&browser).await;
    assert_eq!(cookie.http_only(), Some(true), "{cookie:?}");
    assert_eq!(
        cookie.same_site().map(|s| format!("{s:?}")).as_deref(),
        Some("Lax"),
        "{cookie:?}"
    );
    assert_eq!(cookie.path(), Some("/"), "{cookie:?}");
    assert_ne!(cookie.secure(), Some(true), "over http: {cookie:?}");

    // In finance, she approves; a worker resumes the run once.
    click(&browser, "form.answer button[value=approve]").await;
    wait_for_text(&browser, "Approved.", false).await;
    wait_for_text(&browser, "finished: refunded 40", true).await;
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some("alice@shop.example"));

    // She signs out from the list; the page asks for a sign-in again, and her old cookie
    // opens nothing anywhere.
    browser.goto(&site.base).await.expect("the list");
    css(&browser, "form.sign-out").await;
    screenshot(&browser, WIDE, "inbox-signed-in.png", false).await;
    click(&browser, "form.sign-out button[type=submit]").await;
    wait_for_text(&browser, "Sign in with your company account", false).await;
    assert!(
        browser.find(Locator::Css(".viewer")).await.is_err(),
        "nobody is signed in"
    );
    let replayed = reqwest::Client::new()
        .get(&site.base)
        .header("cookie", format!("{}={}", cookie.name(), cookie.value()))
        .send()
        .await
        .expect("the page answers");
    assert_eq!(replayed.status(), reqwest::StatusCode::UNAUTHORIZED);
    browser.close().await.expect("the session closes");

    stop.cancel();
    assert_eq!(worker.await.expect("the worker").resumed, 1);
    assert_eq!(site.model.calls(), 2, "resumed once");
}

#[tokio::test]
async fn mallory_signs_in_and_cannot_approve_for_finance() {
    let provider = Provider::start().await;
    let site = sign_in_site(&provider).await;
    let id = site.refund(40).await;
    let browser = browser().await;

    // A callback the browser never started is refused, and signs nobody in.
    browser
        .goto(&format!(
            "{}sign-in/callback?code=stolen&state=forged",
            site.root
        ))
        .await
        .expect("the callback answers");
    wait_for_text(&browser, "Sign-in did not complete", false).await;

    browser.goto(&site.base).await.expect("the inbox opens");
    sign_in_with_provider(&browser, &provider, "mallory").await;
    assert_eq!(arrival(&browser, "/").await, site.base);
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Mallory"
    );
    click(&browser, ".card .prompt a").await;
    wait_for_text(&browser, "you see it read-only", false).await;
    assert!(
        browser.find(Locator::Css("form.answer")).await.is_err(),
        "Mallory has no form"
    );
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    browser.close().await.expect("the session closes");
}
