//! Hostile request content rendered inert, and forged answers posted from other origins refused.

use super::*;

#[tokio::test]
async fn hostile_requests_render_inert() {
    let site = Site::start().await;
    let id = site
        .lure(
            "<script>alert('x')</script> Sign in",
            "javascript:alert(document.cookie)",
        )
        .await;
    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");
    let prompt = css(&browser, ".card .prompt a")
        .await
        .text()
        .await
        .expect("text");
    assert_eq!(prompt, "<script>alert('x')</script> Sign in");
    click(&browser, ".card .prompt a").await;
    let title = css(&browser, "h1").await.text().await.expect("text");
    assert_eq!(title, "<script>alert('x')</script> Sign in");
    assert!(browser.get_alert_text().await.is_err(), "an alert opened");
    let scripts = browser
        .execute("return document.querySelectorAll('script').length", vec![])
        .await
        .expect("a count");
    assert_eq!(scripts, json!(0));
    for a in browser.find_all(Locator::Css("a")).await.expect("links") {
        let href = a.attr("href").await.expect("an href").unwrap_or_default();
        assert!(!href.to_ascii_lowercase().contains("javascript"), "{href}");
    }
    let shown = css(&browser, "p.unsafe code")
        .await
        .text()
        .await
        .expect("text");
    assert_eq!(shown, "javascript:alert(document.cookie)");
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    browser.close().await.expect("the session closes");
}

#[tokio::test]
async fn forged_answers_from_other_origins_are_refused() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");
    browser.goto(&site.request_url(&id)).await.expect("open");
    let token = css(&browser, "input[name=_forgery]")
        .await
        .attr("value")
        .await
        .expect("a token")
        .expect("a value");
    let (port, server) = forger(&site.request_url(&id), &token).await;

    // Same site, other port: the session cookie goes along, the Origin gives it away.
    browser
        .goto(&format!("http://127.0.0.1:{port}/"))
        .await
        .expect("the forger's page");
    click(&browser, "#go").await;
    wait_for_text(&browser, "came from another site", false).await;

    // Another site: the SameSite=Lax cookie stays home on a cross-site POST, so the page
    // sees no session.
    browser
        .goto(&format!("http://localhost:{port}/"))
        .await
        .expect("the forger's page");
    click(&browser, "#go").await;
    wait_for_text(&browser, "needs its access token", false).await;

    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );
    server.abort();
    browser.close().await.expect("the session closes");
}
