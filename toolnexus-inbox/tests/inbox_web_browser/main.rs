//! The inbox page in a real headless Chromium, driven over WebDriver: the example's three
//! runs answered by clicking, hostile request content rendered inert, and forged answers
//! from other origins refused, what a person reads at a glance (what to click, which
//! fields must be filled in, an approval apart from a refusal), and a run waiting on three
//! gated calls answered on one page: approved, edited, declined; a browser signed in as one
//! person asked before another person's link switches it; the page mounted under a prefix
//! of a host's app, with `nest` and with `nest_service`; and people signing in with their
//! company account through a real OpenID provider (feature `oidc`). The first test also
//! takes the README's screenshots, 1280 and 390 pixels wide (`docs/inbox.png` and
//! `docs/inbox-narrow.png`, replaced when `TOOLNEXUS_UPDATE_SCREENSHOT=1` is set).
//!
//! Needs chromedriver: `scripts/test.sh` installs Debian's `chromium` and `chromium-driver`
//! when missing, starts the driver and exports `TOOLNEXUS_TEST_WEBDRIVER` and
//! `TOOLNEXUS_TEST_CHROME_PROFILE`.

#[path = "../common/mod.rs"]
mod common;

mod agents;
mod hostile;
mod mount;
mod people;
mod reading;
#[cfg(feature = "oidc")]
mod sign_in;

use std::path::PathBuf;
use std::time::Duration;

use common::page::{self, Example, Mounting, Site};
use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use serde_json::json;
use toolnexus_inbox::web;
use toolnexus_inbox::{ParkedState, Person};
use toolnexus_test_support::{chromium, wait};

/// The URL the browser is at once it ends with `end`, or where it still is after
/// [`PAGE_PATIENCE`]: a click starts a navigation that the click itself does not wait for.
async fn arrival(browser: &Client, end: &str) -> String {
    let here = || async { browser.current_url().await.expect("a URL").to_string() };
    let arrived = wait::within(PAGE_PATIENCE, || async {
        Some(here().await).filter(|url| url.ends_with(end))
    })
    .await;
    match arrived {
        Some(url) => url,
        None => here().await,
    }
}

/// How long a page may take to show what the test waits for (worker resumes included).
const PATIENCE: Duration = Duration::from_secs(30);

/// A headless Chromium session with a profile directory of its own.
async fn browser() -> Client {
    chromium::session(1280, 900).await
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
    let looked = std::cell::Cell::new(false);
    let shown = wait::within(PATIENCE, || async {
        // Only after a first look: a reload right after a click would cancel the
        // navigation the click started.
        if reload && looked.replace(true) {
            browser.refresh().await.expect("a reload");
        }
        source(browser).await.contains(text).then_some(())
    })
    .await;
    if shown.is_none() {
        let page = source(browser).await;
        panic!("timed out waiting for `{text}` on the page:\n{page}");
    }
}

async fn link(browser: &Client, text: &str) -> Element {
    browser
        .wait()
        .at_most(PAGE_PATIENCE)
        .for_element(Locator::LinkText(text))
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

/// Replaces what the field `selector` holds with `text`.
async fn retype(browser: &Client, selector: &str, text: &str) {
    let field = css(browser, selector).await;
    field.clear().await.expect("clear");
    field
        .send_keys(text)
        .await
        .unwrap_or_else(|e| panic!("typing into `{selector}`: {e}"));
}

async fn type_into(browser: &Client, selector: &str, text: &str) {
    css(browser, selector)
        .await
        .send_keys(text)
        .await
        .unwrap_or_else(|e| panic!("typing into `{selector}`: {e}"));
}

/// The element `selector` names, waited for: after a click the next page may still be on
/// its way, and a busy machine can take seconds to serve it.
async fn css(browser: &Client, selector: &str) -> Element {
    browser
        .wait()
        .at_most(PAGE_PATIENCE)
        .for_element(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("nothing matches `{selector}`: {e}"))
}

/// How long a page may take to show what a test looks for.
const PAGE_PATIENCE: Duration = Duration::from_secs(20);

async fn value(browser: &Client, selector: &str) -> String {
    css(browser, selector)
        .await
        .prop("value")
        .await
        .expect("a value")
        .unwrap_or_default()
}

/// The widths the page is looked at: a laptop's window and a phone's.
const WIDE: (u32, u32) = (1280, 900);
const NARROW: (u32, u32) = (390, 1000);

/// A screenshot of the page at `size`, kept under `target/screenshots/` as `name`; with
/// `TOOLNEXUS_UPDATE_SCREENSHOT=1` and `docs`, it also replaces the README's
/// `docs/<name>` (opt-in, so a test run leaves the tree clean).
async fn screenshot(browser: &Client, size: (u32, u32), name: &str, docs: bool) {
    browser
        .set_window_size(size.0, size.1)
        .await
        .expect("the window resizes");
    let png = browser.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_path_buf();
    let target = root.join("target").join("screenshots");
    std::fs::create_dir_all(&target).expect("target/screenshots/");
    std::fs::write(target.join(name), &png).expect("the screenshot is written");
    if docs && std::env::var_os("TOOLNEXUS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(root.join("docs").join(name), &png).expect("the docs screenshot");
    }
    browser
        .set_window_size(WIDE.0, WIDE.1)
        .await
        .expect("the window resizes back");
}

/// Where an element is drawn: `(x, y, width, height)`.
async fn rect(browser: &Client, selector: &str) -> (f64, f64, f64, f64) {
    css(browser, selector)
        .await
        .rectangle()
        .await
        .unwrap_or_else(|e| panic!("no box for `{selector}`: {e}"))
}

async fn style(browser: &Client, selector: &str, property: &str) -> String {
    css(browser, selector)
        .await
        .css_value(property)
        .await
        .unwrap_or_else(|e| panic!("no `{property}` for `{selector}`: {e}"))
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

/// Signs the browser in as `who` through the test's own host sign-in (a cookie the host's
/// `Identify` reads), replacing whoever was signed in.
async fn sign_in_as(browser: &Client, who: &str) {
    // Set from the page (WebDriver's own cookie call sends fields Chromium refuses).
    let set = format!("document.cookie = '{}={who}; path=/'", page::PERSON_COOKIE);
    browser
        .execute(&set, vec![])
        .await
        .expect("the cookie is set");
}

/// Signs in, lists, opens and answers a request by clicking, with the page mounted as
/// `mounting` says: the browser never leaves the mount point, and the stylesheet loads.
async fn clicked_through_under(mounting: Mounting) {
    let site = Site::mounted(mounting).await;
    let id = site.approval("lamp").await;
    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");
    // The token leaves the address bar; the list is still the inbox's.
    let here = arrival(&browser, "inbox").await;
    assert_eq!(here, site.base, "{mounting:?}");
    wait_for_text(&browser, "1 request waiting", false).await;
    assert!(
        style(&browser, "header.top", "background-color")
            .await
            .contains("29, 36, 48"),
        "the stylesheet did not load under {mounting:?}"
    );

    // The filter form is a GET back to the list, under the prefix.
    click(&browser, "form.filters button[type=submit]").await;
    let here = arrival(&browser, "kind=").await;
    let listed = browser.current_url().await.expect("a URL");
    assert_eq!(
        format!(
            "{}://{}{}",
            listed.scheme(),
            listed.authority(),
            listed.path()
        ),
        site.base,
        "the filter left the inbox: {here}"
    );
    wait_for_text(&browser, "Buy lamp?", false).await;

    // The card opens the request's page; approving it stays there.
    click(&browser, ".card a.action").await;
    let here = arrival(&browser, &id).await;
    assert_eq!(here, site.request_url(&id), "{mounting:?}");
    click(&browser, "button[value=approve]").await;
    let banner = css(&browser, "p.banner").await;
    assert_eq!(banner.text().await.expect("text"), "Approved.");
    assert_eq!(
        browser.current_url().await.expect("a URL").as_str(),
        site.request_url(&id)
    );
    let parked = site
        .inbox
        .get(&id)
        .await
        .expect("the store")
        .expect("the run");
    assert_eq!(parked.state, ParkedState::Answered);

    // Back to the list by its link, then to the outcome once a worker resumed the run.
    click_link(&browser, "toolnexus inbox").await;
    let here = arrival(&browser, "inbox").await;
    assert_eq!(here, site.base, "{mounting:?}");
    wait_for_text(&browser, "Nothing waiting", false).await;
    site.resume_all().await;
    click_link(&browser, "Buy lamp?").await;
    let here = arrival(&browser, &id).await;
    assert_eq!(here, site.request_url(&id), "{mounting:?}");
    wait_for_text(&browser, "finished: bought lamp", true).await;
    browser.close().await.expect("the session closes");
}
