//! The inbox page in a real headless Chromium, driven over WebDriver: the example's three
//! runs answered by clicking, hostile request content rendered inert, and forged answers
//! from other origins refused. The first test also takes the README's screenshot
//! (`docs/inbox.png`, replaced when `TOOLNEXUS_UPDATE_SCREENSHOT=1` is set).
//!
//! Needs chromedriver: `scripts/test.sh` installs Debian's `chromium` and `chromium-driver`
//! when missing, starts the driver and exports `TOOLNEXUS_TEST_WEBDRIVER` and
//! `TOOLNEXUS_TEST_CHROME_PROFILE`.

mod example_bin;
mod inbox_web_support;

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use inbox_web_support::{Example, Site};
use serde_json::json;
use toolnexus_inbox::ParkedState;

/// How long a page may take to show what the test waits for (worker resumes included).
const PATIENCE: Duration = Duration::from_secs(30);

fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test.sh (it installs chromium and \
             chromium-driver when missing and starts chromedriver)"
        )
    })
}

/// A headless Chromium session with a profile directory of its own.
async fn browser() -> Client {
    let webdriver = required_env("TOOLNEXUS_TEST_WEBDRIVER");
    let profiles = PathBuf::from(required_env("TOOLNEXUS_TEST_CHROME_PROFILE"));
    let profile = profiles.join(format!("session-{}", uuid_like()));
    std::fs::create_dir_all(&profile).expect("a profile directory");
    let capabilities: fantoccini::wd::Capabilities = serde_json::from_value(json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1100,900",
                format!("--user-data-dir={}", profile.display()),
            ]
        }
    }))
    .expect("capabilities are a JSON object");
    ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&webdriver)
        .await
        .unwrap_or_else(|e| panic!("no WebDriver session at {webdriver}: {e}"))
}

/// A name unique to this process and moment, for profile directories.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{nanos}", std::process::id())
}

async fn source(browser: &Client) -> String {
    browser.source().await.expect("the page source")
}

/// Waits until the page (reloaded by its own meta refresh, or by `reload`) contains `text`.
async fn wait_for_text(browser: &Client, text: &str, reload: bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if reload {
            browser.refresh().await.expect("a reload");
        }
        let page = source(browser).await;
        if page.contains(text) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for `{text}` on the page:\n{page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn link(browser: &Client, text: &str) -> Element {
    browser
        .find(Locator::LinkText(text))
        .await
        .unwrap_or_else(|e| panic!("no link `{text}`: {e}"))
}

async fn click_link(browser: &Client, text: &str) {
    link(browser, text)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking `{text}`: {e}"));
}

async fn click(browser: &Client, selector: &str) {
    css(browser, selector)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking `{selector}`: {e}"));
}

async fn type_into(browser: &Client, selector: &str, text: &str) {
    css(browser, selector)
        .await
        .send_keys(text)
        .await
        .unwrap_or_else(|e| panic!("typing into `{selector}`: {e}"));
}

async fn css(browser: &Client, selector: &str) -> Element {
    browser
        .find(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("nothing matches `{selector}`: {e}"))
}

async fn value(browser: &Client, selector: &str) -> String {
    css(browser, selector)
        .await
        .prop("value")
        .await
        .expect("a value")
        .unwrap_or_default()
}

/// Keeps the screenshot under `target/`; with `TOOLNEXUS_UPDATE_SCREENSHOT=1` it also
/// replaces the README's `docs/inbox.png` (opt-in, so a test run leaves the tree clean).
fn save_screenshot(png: &[u8]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target");
    std::fs::create_dir_all(&target).expect("target/");
    std::fs::write(target.join("inbox-page.png"), png).expect("the screenshot is written");
    if std::env::var_os("TOOLNEXUS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(root.join("docs").join("inbox.png"), png).expect("docs/inbox.png written");
    }
}

#[tokio::test]
async fn the_example_is_answered_in_a_browser() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-web-{}", uuid_like()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    // Served as a person would run it (no --exit-when-done), so the page stays up after the
    // last outcome.
    let example = Example::start(&format!("sqlite://{}", dir.join("inbox.db").display()), &[]);
    let first = example.line(PATIENCE);
    let url = first
        .strip_prefix("inbox: ")
        .unwrap_or_else(|| panic!("the first line is not the link: {first:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let mut parked = Vec::new();
    while parked.len() < 3 {
        let line = example.line(PATIENCE);
        if let Some(rest) = line.strip_prefix("parked ") {
            parked.push(rest.to_owned());
        }
    }

    let browser = browser().await;
    browser.goto(&url).await.expect("the inbox opens");
    let address = browser.current_url().await.expect("a URL").to_string();
    assert!(
        !address.contains("token"),
        "the token stays in the address bar: {address}"
    );
    wait_for_text(&browser, "3 requests waiting", true).await;

    // The approval: one click.
    click_link(&browser, "Approve purchase of gpu?").await;
    click(&browser, "button[value=approve]").await;
    wait_for_text(
        &browser,
        "The gpu purchase is approved and on its way.",
        false,
    )
    .await;

    // The form: a wrong value first, then the fix.
    click_link(&browser, "toolnexus inbox").await;
    click_link(&browser, "Where should the 2 keyboard go?").await;
    assert_eq!(
        value(&browser, "#field-parcels").await,
        "1",
        "the default is filled in"
    );
    type_into(&browser, "#field-city", "Lyon").await;
    type_into(&browser, "#field-zip", "690").await;
    let parcels = css(&browser, "#field-parcels").await;
    parcels.clear().await.expect("clear");
    parcels.send_keys("2").await.expect("type");
    click(&browser, "#field-express").await;
    css(&browser, "#field-carrier")
        .await
        .select_by_value("courier")
        .await
        .expect("pick");
    click(&browser, "button[value=submit]").await;
    let error = css(&browser, "#field-zip-error")
        .await
        .text()
        .await
        .expect("a message");
    assert!(error.contains("at least 5"), "{error}");
    assert_eq!(value(&browser, "#field-city").await, "Lyon");
    assert_eq!(value(&browser, "#field-parcels").await, "2");
    assert!(css(&browser, "#field-express")
        .await
        .is_selected()
        .await
        .expect("checked"));
    assert_eq!(value(&browser, "#field-carrier").await, "courier");
    let zip = css(&browser, "#field-zip").await;
    zip.clear().await.expect("clear");
    zip.send_keys("69001").await.expect("type");
    click(&browser, "button[value=submit]").await;
    wait_for_text(&browser, "Done: ordered 2 keyboard to 69001 Lyon", false).await;

    // The README's screenshot: the sign-in waiting, the two answered runs with their outcomes.
    click_link(&browser, "toolnexus inbox").await;
    wait_for_text(&browser, "Done: ordered 2 keyboard", true).await;
    let png = browser.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    save_screenshot(&png);

    // The sign-in: its link is there; declined with a reason.
    click_link(
        &browser,
        "Sign in to your calendar so I can read today's meetings",
    )
    .await;
    let href = css(&browser, "p.signin a")
        .await
        .attr("href")
        .await
        .expect("an href");
    assert_eq!(
        href.as_deref(),
        Some("https://accounts.example.com/authorize?client_id=toolnexus-inbox-demo")
    );
    type_into(&browser, "#reason-cancel", "not now").await;
    click(&browser, "button[value=cancel]").await;
    wait_for_text(
        &browser,
        "Without a sign-in I cannot read your calendar.",
        false,
    )
    .await;

    // Every outcome on the list; the example saw them all and exits.
    click_link(&browser, "toolnexus inbox").await;
    let list = source(&browser).await;
    for outcome in [
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboard",
        "Without a sign-in I cannot read your calendar.",
        "cancelled: “not now”",
        "Nothing waiting",
    ] {
        assert!(
            list.contains(outcome),
            "`{outcome}` missing from the list:\n{list}"
        );
    }
    browser.close().await.expect("the session closes");

    let mut done = Vec::new();
    while done.len() < 3 {
        let line = example.line(PATIENCE);
        if line.starts_with("done ") {
            done.push(line);
        }
    }
    let done = done.join("\n");
    for (id_and_prompt, text) in parked.iter().zip([
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboard to 69001 Lyon in 2 parcel(s), express, by Courier.",
        "Without a sign-in I cannot read your calendar.",
    ]) {
        let id = id_and_prompt.split(':').next().expect("an id");
        assert!(
            done.contains(&format!("done {id}: {text}")),
            "{id}: {text} in\n{done}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

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

/// A page on another origin with a form that answers the inbox's request, as a forger
/// would write it (with a token copied from the real page, the strongest case).
async fn forger(action: &str, token: &str) -> (u16, tokio::task::JoinHandle<()>) {
    let page = format!(
        r#"<!DOCTYPE html><html><body><form method="post" action="{action}">
           <input type="hidden" name="_forgery" value="{token}">
           <button id="go" type="submit" name="_action" value="approve">Win a prize</button>
           </form></body></html>"#
    );
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let page = page.clone();
            async move { axum::response::Html(page) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("the forger serves");
    });
    (port, server)
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

    // Another site: the SameSite=Strict cookie stays home, so the page sees no session.
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
