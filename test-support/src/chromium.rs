//! Headless Chromium sessions for the suites that use a page as a person does, through the
//! ChromeDriver the test command starts (`TOOLNEXUS_TEST_WEBDRIVER`), each with a profile
//! of its own under `TOOLNEXUS_TEST_CHROME_PROFILE`: its own cookies and local storage, so
//! two sessions are two people's browsers.

use std::path::PathBuf;

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

use crate::names;

/// A new session whose window is `width` × `height` pixels (what a screenshot shows and
/// where a layout wraps). Panics, saying what to run, when the test command did not start
/// ChromeDriver or the session cannot be made.
pub async fn session(width: u32, height: u32) -> Client {
    let webdriver = required_env("TOOLNEXUS_TEST_WEBDRIVER");
    let profiles = PathBuf::from(required_env("TOOLNEXUS_TEST_CHROME_PROFILE"));
    let profile = profiles.join(names::unique("session"));
    if let Err(e) = std::fs::create_dir_all(&profile) {
        panic!("no profile directory at {}: {e}", profile.display());
    }
    // Chromium's background services reach for hosts a closed network refuses; without
    // these flags every start waits on them.
    let capabilities: fantoccini::wd::Capabilities = serde_json::from_value(json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", format!("--window-size={width},{height}"),
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

fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test.sh (it installs chromium and \
             chromium-driver when missing and starts chromedriver)"
        )
    })
}
