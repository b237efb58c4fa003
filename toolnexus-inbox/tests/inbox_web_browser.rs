//! The inbox page in a real headless Chromium, driven over WebDriver: the example's three
//! runs answered by clicking, hostile request content rendered inert, and forged answers
//! from other origins refused, what a person reads at a glance (what to click, which
//! fields must be filled in, an approval apart from a refusal), and a run waiting on three
//! gated calls answered on one page: approved, edited, declined; a browser signed in as one
//! person asked before another person's link switches it; and the page mounted
//! under a prefix of a host's app, with `nest` and with `nest_service`. The first test also takes
//! the README's screenshots, 1280 and 390 pixels wide (`docs/inbox.png` and
//! `docs/inbox-narrow.png`, replaced when `TOOLNEXUS_UPDATE_SCREENSHOT=1` is set).
//!
//! Needs chromedriver: `scripts/test.sh` installs Debian's `chromium` and `chromium-driver`
//! when missing, starts the driver and exports `TOOLNEXUS_TEST_WEBDRIVER` and
//! `TOOLNEXUS_TEST_CHROME_PROFILE`.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::page::{self, Example, Mounting, Site};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;
use toolnexus_inbox::web;
use toolnexus_inbox::{ParkedState, Person};
use toolnexus_test_support::wait;

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
                "--disable-sync", "--no-first-run", "--window-size=1280,900",
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
    click_link(&browser, "Where should the 2 keyboards go?").await;
    assert_eq!(
        value(&browser, "#field-parcels").await,
        "1",
        "the default is filled in"
    );
    type_into(&browser, "#field-city", "Lyon").await;
    type_into(&browser, "#field-zip", "690").await;
    retype(&browser, "#field-parcels", "2").await;
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
    retype(&browser, "#field-zip", "69001").await;
    click(&browser, "button[value=submit]").await;
    wait_for_text(&browser, "Done: ordered 2 keyboards to 69001 Lyon", false).await;

    // The README's screenshot: the sign-in waiting, the two answered runs with their outcomes.
    click_link(&browser, "toolnexus inbox").await;
    wait_for_text(&browser, "Done: ordered 2 keyboards", true).await;
    screenshot(&browser, WIDE, "inbox.png", true).await;
    screenshot(&browser, NARROW, "inbox-narrow.png", true).await;

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
        "Done: ordered 2 keyboards",
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
        "Done: ordered 2 keyboards to 69001 Lyon in 2 parcel(s), express, by Courier.",
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

#[tokio::test]
async fn the_page_says_what_to_click_what_to_fill_and_how_it_ended() {
    let site = Site::start().await;
    let approval = site.approval("gpu").await;
    let booking = site.booking().await;
    let sign_in = site.sign_in().await;
    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");

    // Every waiting card has a visible "Answer" action, at both widths.
    for size in [NARROW, WIDE] {
        browser
            .set_window_size(size.0, size.1)
            .await
            .expect("resize");
        let actions = browser
            .find_all(Locator::Css(".card a.action"))
            .await
            .expect("the actions");
        assert_eq!(actions.len(), 3, "one action per waiting request");
        for action in &actions {
            assert!(action.is_displayed().await.expect("displayed"));
            assert_eq!(action.text().await.expect("text"), "Answer");
            let (_, _, width, height) = action.rectangle().await.expect("a box");
            assert!(
                width > 30.0 && height > 15.0,
                "{width}×{height} is hard to hit"
            );
        }
    }
    // Clicking the action opens that request; so does a click anywhere else on the card.
    let card = format!(".card:has(a[href$=\"{approval}\"])");
    click(&browser, &format!("{card} a.action")).await;
    let here = arrival(&browser, &approval).await;
    assert!(here.ends_with(&approval), "{here}");
    browser.back().await.expect("back");
    click(&browser, &card).await;
    let here = arrival(&browser, &approval).await;
    assert!(here.ends_with(&approval), "the card is not a link: {here}");

    // A checkbox is never required: unchecked is an answer.
    browser
        .goto(&site.request_url(&booking))
        .await
        .expect("the form");
    let breakfast = css(&browser, "#field-breakfast").await;
    assert_eq!(
        breakfast.attr("type").await.expect("type").as_deref(),
        Some("checkbox")
    );
    assert_eq!(breakfast.attr("required").await.expect("attr"), None);
    let label = css(&browser, "label[for=field-breakfast]").await;
    assert!(
        label.find(Locator::Css(".req")).await.is_err(),
        "the checkbox is marked required"
    );
    screenshot(&browser, WIDE, "form.png", false).await;

    // The reason's label sits above its input, not against it.
    browser
        .goto(&site.request_url(&sign_in))
        .await
        .expect("the sign-in");
    let label = rect(&browser, "label[for=reason-cancel]").await;
    let input = rect(&browser, "#reason-cancel").await;
    assert!(
        label.1 + label.3 <= input.1,
        "the label {label:?} runs into its input {input:?}"
    );
    type_into(&browser, "#reason-cancel", "not now").await;
    click(&browser, "button[value=cancel]").await;
    let refused = css(&browser, "p.banner").await;
    assert_eq!(refused.text().await.expect("text"), "Sign-in cancelled.");
    assert_eq!(
        refused.attr("class").await.expect("class").as_deref(),
        Some("banner refused")
    );
    let refused_colours = (
        style(&browser, "p.banner", "background-color").await,
        style(&browser, "p.banner", "color").await,
    );
    screenshot(&browser, WIDE, "refused.png", false).await;
    screenshot(&browser, NARROW, "refused-narrow.png", false).await;

    // An approval's banner reads and looks otherwise.
    browser
        .goto(&site.request_url(&approval))
        .await
        .expect("the approval");
    click(&browser, "button[value=approve]").await;
    let approved = css(&browser, "p.banner").await;
    assert_eq!(approved.text().await.expect("text"), "Approved.");
    let approved_colours = (
        style(&browser, "p.banner", "background-color").await,
        style(&browser, "p.banner", "color").await,
    );
    assert_ne!(
        refused_colours.0, approved_colours.0,
        "a refusal and an approval share one background"
    );
    assert_ne!(refused_colours.1, approved_colours.1, "and one colour");
    browser.close().await.expect("the session closes");
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

#[tokio::test]
async fn a_runs_three_requests_are_approved_edited_and_declined_on_one_page() {
    let site = Site::start().await;
    let ids = site.purge("tmp").await;
    // A worker resumes the run once every request is answered.
    let stop = toolnexus::CancellationToken::new();
    let worker = site.inbox.worker(site.client.clone(), site.tk.clone());
    let worker = tokio::spawn(worker.run(stop.clone().cancelled_owned()));

    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");
    wait_for_text(&browser, "3 requests waiting", false).await;
    browser
        .goto(&site.request_url(&ids[1]))
        .await
        .expect("the run's page opens");
    wait_for_text(&browser, "3 requests of one run", false).await;
    assert_eq!(
        value(&browser, "#field-r2-path").await,
        "tmp/b",
        "the proposed path"
    );

    click(&browser, "#request-1 button[value=approve]").await;
    wait_for_text(&browser, "Approved.", false).await;

    // An edit that does not fit the tool's schema first: the field is named, nothing kept.
    retype(&browser, "#field-r2-path", "tmp/b-old").await;
    type_into(&browser, "#field-r2-keep_days", "-1").await;
    click(&browser, "#request-2 button[value=edit]").await;
    let error = css(&browser, "#field-r2-keep_days-error")
        .await
        .text()
        .await
        .expect("a message");
    assert!(error.contains("at least 0"), "{error}");
    assert_eq!(value(&browser, "#field-r2-path").await, "tmp/b-old");
    assert_eq!(
        site.inbox.get(&ids[1]).await.unwrap().unwrap().state,
        ParkedState::Waiting,
        "a misfit answers nothing"
    );
    retype(&browser, "#field-r2-keep_days", "3").await;
    click(&browser, "#request-2 button[value=edit]").await;
    wait_for_text(&browser, "Approved with edited arguments.", false).await;

    type_into(&browser, "#reason-r3-decline", "keep it").await;
    click(&browser, "#request-3 button[value=decline]").await;
    // The answer's own page first: reloading before it arrives would cancel the post.
    wait_for_text(&browser, "declined: “keep it”", false).await;
    wait_for_text(
        &browser,
        "finished: deleted tmp/a | deleted tmp/b-old, a copy kept 3 days",
        true,
    )
    .await;
    browser.close().await.expect("the session closes");

    stop.cancel();
    assert_eq!(worker.await.expect("the worker").resumed, 1);
    assert_eq!(
        site.model.calls(),
        2,
        "resumed once, with the three answers"
    );
    let resumed = site
        .model
        .requests()
        .last()
        .cloned()
        .expect("the resume's call");
    let results: Vec<String> = resumed
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0], "deleted tmp/a");
    assert!(
        results[1].starts_with("deleted tmp/b-old, a copy kept 3 days"),
        "the edited call ran with the edited arguments: {results:?}"
    );
    assert!(
        results[2].contains("declined") && results[2].contains("keep it"),
        "{results:?}"
    );
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

#[tokio::test]
async fn only_a_named_responder_answers_in_the_browser() {
    let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:")
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let browser = browser().await;
    // The cookie needs a page of the site first: the sign-in page, as nobody is signed in.
    browser.goto(&site.base).await.expect("the site");

    sign_in_as(&browser, "bob").await;
    browser.goto(&site.base).await.expect("the inbox opens");
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Bob"
    );
    click(&browser, ".card .prompt a").await;
    wait_for_text(&browser, "you see it read-only", false).await;
    assert!(
        browser.find(Locator::Css("form.answer")).await.is_err(),
        "Bob has no form"
    );

    // Ada opens it and gets the form; Bob, at the same browser, presses its button.
    sign_in_as(&browser, "ada").await;
    browser.refresh().await.expect("a reload");
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Ada"
    );
    sign_in_as(&browser, "bob").await;
    click(&browser, "form.answer button[value=approve]").await;
    wait_for_text(&browser, "Not yours to answer", false).await;
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );

    // Ada herself approves, and the history names her.
    sign_in_as(&browser, "ada").await;
    browser
        .goto(&site.request_url(&id))
        .await
        .expect("the request");
    click(&browser, "form.answer button[value=approve]").await;
    wait_for_text(&browser, "by ada@example.com", false).await;
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
    browser.close().await.expect("the session closes");
}

#[tokio::test]
async fn another_persons_link_asks_before_the_browser_switches() {
    let (ada, bob) = (
        web::new_token().expect("a token"),
        web::new_token().expect("a token"),
    );
    let (a, b) = (ada.clone(), bob.clone());
    let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:")
        .await
        .unwrap();
    let people = move |page: web::InboxPageBuilder| {
        page.token_for(Person::new("ada@example.com").name("Ada"), a)
            .token_for(Person::new("bob@example.com").name("Bob"), b)
    };
    // Under a prefix, so the cookie's path is the mount's, not the host's root.
    let site = Site::serve_at(inbox, people, Mounting::Nest).await;
    site.approval("lamp").await;
    let browser = browser().await;
    let signed_in_as = |who: &str| format!("Signed in as <strong class=\"who\">{who}</strong>");
    browser
        .goto(&format!("{}?token={ada}", site.base))
        .await
        .expect("the inbox opens");
    assert_eq!(arrival(&browser, "inbox").await, site.base);
    wait_for_text(&browser, &signed_in_as("Ada"), false).await;

    // Bob's link in Ada's browser: a question, and Ada stays Ada if she says so.
    let bobs = format!("{}?kind=approval&token={bob}", site.base);
    browser.goto(&bobs).await.expect("Bob's link opens");
    wait_for_text(&browser, "Sign in as Bob?", false).await;
    click_link(&browser, "Stay signed in as Ada").await;
    let listed = format!("{}?kind=approval", site.base);
    assert_eq!(arrival(&browser, "kind=approval").await, listed);
    wait_for_text(&browser, &signed_in_as("Ada"), false).await;

    // Asked again, and the button switches: Bob now, the token out of the address bar.
    browser.goto(&bobs).await.expect("Bob's link opens");
    click(&browser, "section.switch button[type=submit]").await;
    assert_eq!(arrival(&browser, "kind=approval").await, listed);
    wait_for_text(&browser, &signed_in_as("Bob"), false).await;
    browser.close().await.expect("the session closes");
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

#[tokio::test]
async fn the_page_nested_under_a_prefix_is_clicked_through() {
    clicked_through_under(Mounting::Nest).await;
}

#[tokio::test]
async fn the_page_as_a_nested_service_under_a_prefix_is_clicked_through() {
    clicked_through_under(Mounting::NestService).await;
}
