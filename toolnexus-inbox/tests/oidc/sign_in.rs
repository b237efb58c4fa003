//! "Sign in with your company account" over HTTP, against the real provider and its login
//! form, by a client that keeps its cookies and follows redirects itself, so every step can
//! be looked at and replayed: the cookies the page sets, where a sign-in lands, and the
//! callbacks it refuses (a wrong state, a replayed one, one delivered to another browser, a
//! code issued with another nonce, the provider's error), each refused the same way to the
//! person and for its own reason in the log, which holds no code, token or secret.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, COOKIE, LOCATION, SET_COOKIE};
use reqwest::{StatusCode, Url};
use toolnexus_inbox::web::{InboxPage, OidcSignIn};
use toolnexus_inbox::Inbox;
use toolnexus_test_support::clock::TestClock;
use toolnexus_test_support::oidc::Provider;
use tracing_subscriber::layer::SubscriberExt;

/// The page's client at the test provider.
const CLIENT: &str = "inbox";
const SECRET: &str = "inbox-secret";

/// The inbox page with the provider's sign-in, served on loopback under `/inbox`.
struct Page {
    /// `http://127.0.0.1:PORT/inbox/`: the router's root.
    root: String,
    server: tokio::task::JoinHandle<()>,
}

impl Page {
    /// The list: the mount point as the host wrote it, `/inbox`.
    fn list(&self) -> Url {
        Url::parse(self.root.trim_end_matches('/')).expect("a URL")
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn page(provider: &Provider, page_url: Option<&str>) -> Page {
    page_on(provider, page_url, None).await
}

/// The same page, its inbox reading `clock` when given.
async fn page_on(provider: &Provider, page_url: Option<&str>, clock: Option<&TestClock>) -> Page {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let root = format!(
        "http://{}/inbox/",
        listener.local_addr().expect("its address")
    );
    let sign_in = OidcSignIn::builder(provider.issuer(), CLIENT)
        .client_secret(SECRET)
        .redirect_url(format!("{root}sign-in/callback"))
        .scopes(["email", "profile", "groups"])
        .person_claim("email")
        .groups_claim("groups")
        .build()
        .await
        .unwrap_or_else(|e| panic!("the sign-in builds: {e}"));
    let shown = format!("{sign_in:?}");
    assert!(!shown.contains(SECRET), "Debug shows the secret: {shown}");
    let mut inbox = Inbox::builder("sqlite::memory:");
    if let Some(url) = page_url {
        inbox = inbox.page_url(url);
    }
    if let Some(clock) = clock {
        inbox = inbox.clock(clock.reader());
    }
    let inbox = inbox.open().await.expect("an inbox");
    let app = axum::Router::new().nest(
        "/inbox",
        InboxPage::builder(inbox).sign_in(sign_in).router(),
    );
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("the page serves");
    });
    Page { root, server }
}

/// A browser as far as cookies and redirects go: every cookie set by any port of
/// 127.0.0.1 (cookies are not kept apart by port) sent back everywhere.
struct Visitor {
    http: reqwest::Client,
    cookies: HashMap<String, String>,
}

/// One answer: its status, where it redirects, the cookies it sets (whole `Set-Cookie`
/// lines) and its body.
struct Answer {
    status: StatusCode,
    location: Option<Url>,
    set_cookies: Vec<String>,
    body: String,
}

impl Visitor {
    fn new() -> Visitor {
        Visitor {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("a client"),
            cookies: HashMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder, url: &Url) -> Answer {
        let response = request
            .header(COOKIE, self.cookie_header())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{url} answers: {e}"));
        let status = response.status();
        let headers = response.headers().clone();
        let location = headers
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(|l| url.join(l).expect("a location"));
        let set_cookies = self.keep(&headers);
        let body = response.text().await.unwrap_or_default();
        Answer {
            status,
            location,
            set_cookies,
            body,
        }
    }

    fn keep(&mut self, headers: &HeaderMap) -> Vec<String> {
        let lines: Vec<String> = headers
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect();
        for line in &lines {
            let pair = line.split(';').next().unwrap_or_default();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let dropped = line.to_ascii_lowercase().contains("max-age=0")
                || line
                    .to_ascii_lowercase()
                    .contains("expires=thu, 01 jan 1970");
            if dropped || value.is_empty() {
                self.cookies.remove(name.trim());
            } else {
                self.cookies
                    .insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        lines
    }

    async fn get(&mut self, url: &Url) -> Answer {
        let request = self.http.get(url.clone());
        self.send(request, url).await
    }

    async fn post(&mut self, url: &Url, form: &[(&str, &str)]) -> Answer {
        let request = self.http.post(url.clone()).form(form);
        self.send(request, url).await
    }

    /// Starts a sign-in at the page (landing at `to` once done): the provider's
    /// authorization URL it redirects to.
    async fn start(&mut self, page: &Page, to: &str) -> Url {
        let mut start = Url::parse(&format!("{}sign-in", page.root)).expect("a URL");
        start.query_pairs_mut().append_pair("to", to);
        let answer = self.get(&start).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
        answer.location.expect("a redirect to the provider")
    }

    /// Goes through the provider from `authorization` as `login`: the callback URL the
    /// provider sends the browser to, not yet followed.
    async fn log_in(&mut self, authorization: &Url, login: &str, page: &Page) -> Url {
        let mut at = authorization.clone();
        for _ in 0..10 {
            if at.as_str().starts_with(&page.root) {
                return at;
            }
            let answer = if at.path().starts_with("/interaction/") && self.form_pending(&at).await {
                let password = format!("{login}-password");
                self.post(&at, &[("login", login), ("password", &password)])
                    .await
            } else {
                self.get(&at).await
            };
            at = answer.location.unwrap_or_else(|| {
                panic!(
                    "the provider stopped at {at} ({}): {}",
                    answer.status, answer.body
                )
            });
        }
        panic!("the provider never sent the browser back");
    }

    /// Whether the provider's interaction at `at` shows its login form.
    async fn form_pending(&mut self, at: &Url) -> bool {
        let answer = self.get(at).await;
        answer.status == StatusCode::OK && answer.body.contains("name=\"password\"")
    }
}

/// The log lines of everything the page and the validator say while `run` runs.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn lines(&self) -> Vec<String> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn has(&self, text: &str) -> bool {
        self.lines().iter().any(|l| l.contains(text))
    }
}

struct Recorder(Log);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={value:?} ", field.name()));
            }
        }
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        if let Ok(mut lines) = (self.0).0.lock() {
            lines.push(fields.0);
        }
    }
}

/// The log of this test process, every test's lines together: a subscriber per test
/// (`set_default`) misses events whose callsites another thread registered first, so
/// one records for all, and each test looks for what only it causes.
fn record() -> Log {
    static LOG: std::sync::OnceLock<Log> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        let subscriber = tracing_subscriber::registry().with(Recorder(log.clone()));
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other subscriber is set in this suite");
        log
    })
    .clone()
}

/// The session cookie a sign-in set: its `Set-Cookie` line.
fn session_line(answer: &Answer) -> String {
    answer
        .set_cookies
        .iter()
        .find(|line| {
            line.split('=')
                .next()
                .is_some_and(|name| name.ends_with("_id"))
        })
        .cloned()
        .unwrap_or_else(|| panic!("no session cookie in {:?}", answer.set_cookies))
}

fn assert_refused(answer: &Answer) {
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
    assert!(
        answer.body.contains("Sign-in did not complete"),
        "{}",
        answer.body
    );
    assert!(
        answer.set_cookies.iter().all(|c| !c.contains("_id=")),
        "a refused callback opens no session: {:?}",
        answer.set_cookies
    );
}

#[tokio::test]
async fn alice_signs_in_lands_where_she_was_and_signs_out() {
    let log = record();
    let provider = Provider::start().await;
    let page = page(&provider, None).await;
    let mut alice = Visitor::new();
    let root = Url::parse(&page.root).expect("a URL");
    let list = page.list();

    // Nobody signed in: the page offers the provider's sign-in, back to where she was.
    let asked = alice.get(&root.join("r/abc").expect("a URL")).await;
    assert_eq!(asked.status, StatusCode::UNAUTHORIZED);
    assert!(
        asked.body.contains("Sign in with your company account"),
        "{}",
        asked.body
    );
    assert!(
        asked.body.contains("href=\"../sign-in?to=r%2Fabc\""),
        "{}",
        asked.body
    );

    let authorization = alice.start(&page, "delegate").await;
    assert!(authorization.as_str().starts_with(provider.issuer()));
    let asks: HashMap<String, String> = authorization.query_pairs().into_owned().collect();
    assert_eq!(asks["response_type"], "code");
    assert_eq!(asks["client_id"], CLIENT);
    assert_eq!(asks["code_challenge_method"], "S256");
    assert_eq!(
        asks["redirect_uri"],
        format!("{}sign-in/callback", page.root)
    );
    assert_eq!(asks["scope"], "openid email profile groups");
    assert!(asks["state"].len() >= 43 && asks["nonce"].len() >= 43);

    let callback = alice.log_in(&authorization, "alice", &page).await;
    let code = callback
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code");
    let back = alice.get(&callback).await;
    assert_eq!(back.status, StatusCode::SEE_OTHER, "{}", back.body);
    assert_eq!(
        back.location.as_ref().map(Url::as_str),
        Some(format!("{}delegate", page.root).as_str()),
        "she lands on the page she asked for"
    );
    // The session cookie: the page's own, HttpOnly, Lax, scoped to the mount, not Secure
    // over http, and ending with the page's sessions.
    let line = session_line(&back);
    let attributes: Vec<&str> = line.split("; ").skip(1).collect();
    assert_eq!(
        attributes,
        ["HttpOnly", "SameSite=Lax", "Path=/inbox", "Max-Age=43200"],
        "{line}"
    );
    let session = line
        .split(';')
        .next()
        .and_then(|pair| pair.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .expect("a cookie");

    let listed = alice.get(&list).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert!(
        listed
            .body
            .contains("Signed in as <strong class=\"who\">Alice</strong>"),
        "{}",
        listed.body
    );
    let token = listed
        .body
        .split("name=\"_forgery\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the sign-out form's token")
        .to_owned();

    // A sign-out from elsewhere (no token) ends nothing; the page's own form does.
    let sign_out = root.join("sign-out").expect("a URL");
    let forged = alice.post(&sign_out, &[]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(alice.get(&list).await.status, StatusCode::OK);
    let out = alice.post(&sign_out, &[("_forgery", &token)]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(
        out.set_cookies
            .iter()
            .any(|c| c.starts_with(&format!("{}=;", session.0)) && c.contains("Max-Age=0")),
        "{:?}",
        out.set_cookies
    );
    // The session is over for whoever still holds the cookie, not just this browser.
    let mut thief = Visitor::new();
    thief.cookies.insert(session.0.clone(), session.1.clone());
    let after = thief.get(&list).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    assert!(
        after.body.contains("Your session has ended."),
        "{}",
        after.body
    );

    // Nothing secret reached the log.
    let lines = log.lines().join("\n");
    assert!(log.has("signed in through the OpenID provider"), "{lines}");
    for secret in [SECRET, code.as_str(), session.1.as_str(), token.as_str()] {
        assert!(!lines.contains(secret), "the log holds a secret: {lines}");
    }
}

#[tokio::test]
async fn the_cookie_is_secure_and_scoped_to_the_page_url_behind_https() {
    let provider = Provider::start().await;
    let page = page(&provider, Some("https://agents.example.com/team/inbox/")).await;
    let mut bob = Visitor::new();
    let start = Url::parse(&format!("{}sign-in", page.root)).expect("a URL");
    let started = bob.get(&start).await;
    let binding = started
        .set_cookies
        .iter()
        .find(|c| c.contains("_signin="))
        .expect("the binding cookie");
    assert!(
        binding.ends_with("; HttpOnly; SameSite=Lax; Path=/team/inbox; Max-Age=600; Secure"),
        "{binding}"
    );
    let callback = bob
        .log_in(&started.location.expect("the provider"), "bob", &page)
        .await;
    let back = bob.get(&callback).await;
    let line = session_line(&back);
    assert!(
        line.ends_with("; HttpOnly; SameSite=Lax; Path=/team/inbox; Max-Age=43200; Secure"),
        "{line}"
    );
    // No `to`: the list.
    assert_eq!(
        back.location.as_ref().map(Url::as_str),
        Some(page.root.trim_end_matches('/'))
    );
}

#[tokio::test]
async fn a_return_path_off_the_page_lands_on_the_list() {
    let provider = Provider::start().await;
    let page = page(&provider, None).await;
    for to in [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "r/../../elsewhere",
        "javascript:alert(1)",
    ] {
        let mut visitor = Visitor::new();
        let authorization = visitor.start(&page, to).await;
        let callback = visitor.log_in(&authorization, "bob", &page).await;
        let back = visitor.get(&callback).await;
        assert_eq!(back.status, StatusCode::SEE_OTHER, "{to}: {}", back.body);
        assert_eq!(
            back.location.as_ref().map(Url::as_str),
            Some(page.root.trim_end_matches('/')),
            "{to}"
        );
    }
}

#[tokio::test]
async fn forged_and_replayed_callbacks_sign_nobody_in() {
    let log = record();
    let provider = Provider::start().await;
    let page = page(&provider, None).await;
    let callback_url = Url::parse(&format!("{}sign-in/callback", page.root)).expect("a URL");

    // A state the page never sent.
    let mut mallory = Visitor::new();
    let authorization = mallory.start(&page, "").await;
    let callback = mallory.log_in(&authorization, "mallory", &page).await;
    let mut forged = callback.clone();
    let pairs: Vec<(String, String)> = callback.query_pairs().into_owned().collect();
    forged.query_pairs_mut().clear();
    for (k, v) in &pairs {
        let v = if k == "state" { "forged-state" } else { v };
        forged.query_pairs_mut().append_pair(k, v);
    }
    assert_refused(&mallory.get(&forged).await);
    assert!(
        log.has("state is of no sign-in under way"),
        "{:?}",
        log.lines()
    );

    // Mallory's own callback, sent to Bob (a login CSRF): Bob's browser started no such
    // sign-in, so it signs him in as nobody, and the state is spent for Mallory too.
    let mut bob = Visitor::new();
    assert_refused(&bob.get(&callback).await);
    assert!(log.has("another browser"), "{:?}", log.lines());
    assert_refused(&mallory.get(&callback).await);

    // A callback replayed: the first signs in, the second (same code, same state) does not.
    let authorization = bob.start(&page, "").await;
    let callback = bob.log_in(&authorization, "bob", &page).await;
    assert_eq!(bob.get(&callback).await.status, StatusCode::SEE_OTHER);
    let mut replayer = Visitor::new();
    replayer.cookies = bob.cookies.clone();
    replayer.cookies.retain(|name, _| !name.ends_with("_id"));
    assert_refused(&replayer.get(&callback).await);

    // A code issued with another sign-in's nonce: two sign-ins under way, the second's
    // request sent with the first's nonce. Its PKCE and state are right; its ID token is
    // not this sign-in's.
    let mut alice = Visitor::new();
    let first = alice.start(&page, "").await;
    let second = alice.start(&page, "").await;
    let nonce = |url: &Url| {
        url.query_pairs()
            .find(|(k, _)| k == "nonce")
            .map(|(_, v)| v.into_owned())
            .expect("a nonce")
    };
    assert_ne!(nonce(&first), nonce(&second));
    let mut tampered = second.clone();
    let pairs: Vec<(String, String)> = second.query_pairs().into_owned().collect();
    tampered.query_pairs_mut().clear();
    for (k, v) in &pairs {
        let v = if k == "nonce" {
            nonce(&first)
        } else {
            v.clone()
        };
        tampered.query_pairs_mut().append_pair(k, &v);
    }
    let callback = alice.log_in(&tampered, "alice", &page).await;
    assert_refused(&alice.get(&callback).await);
    assert!(log.has("nonce is not this sign-in's"), "{:?}", log.lines());

    // The provider's error comes back as a refusal too, and so does a bare callback.
    let authorization = alice.start(&page, "").await;
    let state = authorization
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("a state");
    let mut denied = callback_url.clone();
    denied
        .query_pairs_mut()
        .append_pair("error", "access_denied")
        .append_pair("state", &state);
    assert_refused(&alice.get(&denied).await);
    assert!(log.has("access_denied"), "{:?}", log.lines());
    assert_refused(&alice.get(&callback_url).await);

    // Nobody was signed in by any of it, and no secret reached the log.
    assert_eq!(
        alice.get(&page.list()).await.status,
        StatusCode::UNAUTHORIZED
    );
    let lines = log.lines().join("\n");
    assert!(!lines.contains(SECRET), "{lines}");
    for (k, v) in callback.query_pairs() {
        if k == "code" {
            assert!(!lines.contains(v.as_ref()), "the log holds a code: {lines}");
        }
    }
}

#[tokio::test]
async fn a_sign_in_and_a_session_end_by_the_inbox_clock() {
    let log = record();
    let provider = Provider::start().await;
    let clock = TestClock::default();
    let page = page_on(&provider, None, Some(&clock)).await;

    // A sign-in left at the provider longer than ten minutes is over when it comes back.
    let mut bob = Visitor::new();
    let authorization = bob.start(&page, "").await;
    let callback = bob.log_in(&authorization, "bob", &page).await;
    clock.advance(Duration::from_secs(10 * 60 + 1));
    assert_refused(&bob.get(&callback).await);
    assert!(
        log.has("the sign-in took longer than a sign-in may"),
        "{:?}",
        log.lines()
    );

    // A session lasts the page's session lifetime (12 hours), then asks for a sign-in again.
    let authorization = bob.start(&page, "").await;
    let callback = bob.log_in(&authorization, "bob", &page).await;
    assert_eq!(bob.get(&callback).await.status, StatusCode::SEE_OTHER);
    assert_eq!(bob.get(&page.list()).await.status, StatusCode::OK);
    clock.advance(Duration::from_secs(12 * 3600 - 1));
    assert_eq!(bob.get(&page.list()).await.status, StatusCode::OK);
    clock.advance(Duration::from_secs(1));
    let ended = bob.get(&page.list()).await;
    assert_eq!(ended.status, StatusCode::UNAUTHORIZED);
    assert!(
        ended.body.contains("Your session has ended."),
        "{}",
        ended.body
    );
}
