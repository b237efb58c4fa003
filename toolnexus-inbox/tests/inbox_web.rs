//! The inbox page over real HTTP, without a browser: every status a request can get, the
//! session and security headers, and the answers it records.

mod common;

use std::time::Duration;

use common::page::{self, Example, Mounting, Site, HOST_HOME};
use common::pg;
use reqwest::header::{self, HeaderMap};
use reqwest::{redirect, Response, StatusCode};
use serde_json::json;
use toolnexus::{Answer, Refusal};
use toolnexus_inbox::{web, AuditKind, Inbox, ParkedState};

const CSP: &str = "default-src 'none'; style-src 'self'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// A browser-like client that follows no redirects, so each status is seen as sent.
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

/// Signs in with the link token and returns the session cookie (`name=value`).
async fn session(site: &Site) -> String {
    session_of(site, &site.token).await
}

fn set_cookie(headers: &HeaderMap) -> String {
    headers
        .get(header::SET_COOKIE)
        .expect("a Set-Cookie header")
        .to_str()
        .expect("ASCII")
        .to_owned()
}

/// A signed-in GET, the response whole (headers included).
async fn fetch(cookie: &str, url: &str) -> Response {
    http()
        .get(url)
        .header(header::COOKIE, cookie)
        .send()
        .await
        .expect("the page answers")
}

async fn get(cookie: &str, url: &str) -> (StatusCode, String) {
    body(fetch(cookie, url).await).await
}

/// The anti-forgery token in a request's page.
fn forgery_token(page: &str) -> String {
    let marker = r#"name="_forgery" value=""#;
    let at = page
        .find(marker)
        .unwrap_or_else(|| panic!("no token in:\n{page}"))
        + marker.len();
    page[at..].split('"').next().expect("a value").to_owned()
}

/// Posts an answer the way the page's form does (same origin, with the page's token).
async fn answer(site: &Site, cookie: &str, id: &str, fields: &[(&str, &str)]) -> Response {
    let (_, page) = get(cookie, &site.request_url(id)).await;
    let token = forgery_token(&page);
    let mut form: Vec<(&str, &str)> = vec![("_forgery", token.as_str())];
    form.extend_from_slice(fields);
    post(site, cookie, id)
        .form(&form)
        .send()
        .await
        .expect("the page answers")
}

fn post(site: &Site, cookie: &str, id: &str) -> reqwest::RequestBuilder {
    let host = site
        .base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default();
    http()
        .post(site.request_url(id))
        .header(header::COOKIE, cookie)
        .header(header::ORIGIN, format!("http://{host}"))
        .header("sec-fetch-site", "same-origin")
}

/// Posts `fields` as the page's form would, from the same origin.
async fn post_form(
    site: &Site,
    cookie: &str,
    id: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, String) {
    body(
        post(site, cookie, id)
            .form(fields)
            .send()
            .await
            .expect("the page answers"),
    )
    .await
}

async fn state_of(site: &Site, id: &str) -> ParkedState {
    site.inbox
        .get(id)
        .await
        .expect("the store")
        .expect("the run")
        .state
}

async fn body(response: Response) -> (StatusCode, String) {
    let status = response.status();
    (status, response.text().await.expect("a body"))
}

fn assert_secure_headers(headers: &HeaderMap) {
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    assert_eq!(value("content-security-policy"), CSP);
    assert_eq!(value("x-content-type-options"), "nosniff");
    assert_eq!(value("x-frame-options"), "DENY");
    assert_eq!(value("referrer-policy"), "same-origin");
    assert_eq!(value("cache-control"), "no-store");
}

#[tokio::test]
async fn every_page_needs_the_token() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    for url in [site.base.clone(), site.request_url(&id)] {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{url}");
        assert_secure_headers(response.headers());
        assert!(response.headers().contains_key(header::WWW_AUTHENTICATE));
        let page = response.text().await.unwrap();
        assert!(page.contains("needs its access token"), "{page}");
        assert!(!page.contains("Buy gpu"), "{page}");
    }
    let wrong = http()
        .get(format!("{}?token=not-the-token", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(!wrong.headers().contains_key(header::SET_COOKIE));
    let forged = get("toolnexus_inbox_00000000=abc", &site.base).await;
    assert_eq!(forged.0, StatusCode::UNAUTHORIZED);
    let bad_bearer = http()
        .get(&site.base)
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_bearer.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_link_token_moves_into_an_expiring_http_only_lax_cookie() {
    let site = Site::start().await;
    site.approval("gpu").await;
    let response = http()
        .get(format!("{}?token={}", site.base, site.token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "./");
    assert_secure_headers(response.headers());
    let set = set_cookie(response.headers());
    let lifetime = web::DEFAULT_SESSION_LIFETIME.as_secs();
    let attributes = attributes(&set);
    for attribute in [
        "HttpOnly".to_owned(),
        "SameSite=Lax".to_owned(),
        "Path=/".to_owned(),
        format!("Max-Age={lifetime}"),
    ] {
        assert!(attributes.contains(&attribute), "{set}");
    }
    // Served over plain http on loopback: a Secure cookie would never come back.
    assert!(!attributes.iter().any(|a| a == "Secure"), "{set}");
    assert!(
        !set.contains(&site.token),
        "the cookie must not hold the token itself: {set}"
    );

    let cookie = set.split(';').next().unwrap();
    let (status, page) = get(cookie, &site.base).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("1 request waiting"), "{page}");
    assert!(page.contains("Buy gpu?"), "{page}");

    let bearer = http()
        .get(&site.base)
        .bearer_auth(&site.token)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), StatusCode::OK);
    // A bearer comes with every request: it opens no session.
    assert!(!bearer.headers().contains_key(header::SET_COOKIE));
}

/// The attributes of a `Set-Cookie` value, after its `name=value`.
fn attributes(set: &str) -> Vec<String> {
    set.split(';')
        .skip(1)
        .map(|a| a.trim().to_owned())
        .collect()
}

/// The `Set-Cookie` a sign-in with the link token `token` of `site` answers with.
async fn link_sign_in(site: &Site, token: &str) -> String {
    let response = http()
        .get(format!("{}?token={token}", site.base))
        .send()
        .await
        .expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    set_cookie(response.headers())
}

/// Signs in with the link token `token` of `site`, and returns the session cookie.
async fn session_of(site: &Site, token: &str) -> String {
    let set = link_sign_in(site, token).await;
    set.split(';').next().expect("a cookie pair").to_owned()
}

#[tokio::test]
async fn a_session_ends_with_its_lifetime_by_the_inbox_clock() {
    let hour = Duration::from_secs(3600);
    let site = Site::on_clock(|page| page.session_lifetime(hour)).await;
    let set = link_sign_in(&site, &site.token).await;
    assert!(
        attributes(&set).contains(&"Max-Age=3600".to_owned()),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_owned();

    site.clock.advance(hour - Duration::from_secs(1));
    assert_eq!(get(&cookie, &site.base).await.0, StatusCode::OK);
    site.clock.advance(Duration::from_secs(1));
    let ended = fetch(&cookie, &site.base).await;
    assert_eq!(ended.status(), StatusCode::UNAUTHORIZED);
    let gone = set_cookie(ended.headers());
    assert!(
        gone.starts_with(&format!("{}=;", cookie.split('=').next().unwrap())),
        "{gone}"
    );
    assert!(
        attributes(&gone).contains(&"Max-Age=0".to_owned()),
        "{gone}"
    );
    let page = ended.text().await.unwrap();
    assert!(page.contains("Your session has ended"), "{page}");

    // A session is good for the lifetime from when it was opened, however it is altered.
    let fresh = session(&site).await;
    assert_eq!(get(&fresh, &site.base).await.0, StatusCode::OK);
    let (name, value) = fresh.split_once('=').unwrap();
    let fields: Vec<&str> = value.split('.').collect();
    assert_eq!(fields.len(), 3, "who, until, signature: {value}");
    let until: i64 = fields[1].parse().unwrap();
    let stretched = format!("{name}={}.{}.{}", fields[0], until + 86_400_000, fields[2]);
    let mut signature = fields[2].to_owned();
    let last = if signature.ends_with('0') { "1" } else { "0" };
    signature.replace_range(signature.len() - 1.., last);
    let tampered = format!("{name}={}.{}.{signature}", fields[0], fields[1]);
    for cookie in [stretched, tampered] {
        let (status, page) = get(&cookie, &site.base).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{cookie}");
        assert!(page.contains("not valid for this inbox"), "{page}");
    }
}

#[tokio::test]
async fn the_token_leaves_the_address_bar_and_the_rest_of_the_query_stays() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let cases = [
        (
            format!(
                "{}?agent=shop&token={}&kind=approval",
                site.base, site.token
            ),
            "./?agent=shop&kind=approval".to_owned(),
        ),
        (
            format!("{}?token={}&from=0", site.request_url(&id), site.token),
            format!("{id}?from=0"),
        ),
    ];
    for (link, expected) in cases {
        let response = http().get(&link).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{link}");
        assert_eq!(response.headers()[header::LOCATION], expected.as_str());
        assert!(response.headers().contains_key(header::SET_COOKIE));
    }
    // Nothing but the switch's own form posts to a link: an answer with a token in its
    // address is refused, and signs nobody in.
    let response = http()
        .post(format!("{}?token={}", site.request_url(&id), site.token))
        .header(header::ORIGIN, site.base.trim_end_matches('/'))
        .form(&[("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(!response.headers().contains_key(header::SET_COOKIE));
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn another_persons_link_asks_before_the_session_switches() {
    let (ada_token, bob_token) = (web::new_token().unwrap(), web::new_token().unwrap());
    let (a, b) = (ada_token.clone(), bob_token.clone());
    let site = Site::on_clock(move |page| {
        page.token_for(
            toolnexus_inbox::Person::new("ada@example.com").name("Ada"),
            a,
        )
        .token_for(
            toolnexus_inbox::Person::new("bob@example.com").name("Bob"),
            b,
        )
    })
    .await;
    let ada = session_of(&site, &ada_token).await;
    let signed_in_as = |page: &str, who: &str| {
        page.contains(&format!(
            "Signed in as <strong class=\"who\">{who}</strong>"
        ))
    };

    // Ada's own link again: straight on, no question.
    let again = fetch(&ada, &format!("{}?token={ada_token}", site.base)).await;
    assert_eq!(again.status(), StatusCode::SEE_OTHER);

    // Bob's link in Ada's browser: a question, and nothing changed yet.
    let bobs_link = format!("{}?agent=shop&token={bob_token}", site.base);
    let asked = fetch(&ada, &bobs_link).await;
    assert_eq!(asked.status(), StatusCode::OK);
    assert!(!asked.headers().contains_key(header::SET_COOKIE));
    let prompt = asked.text().await.unwrap();
    assert!(signed_in_as(&prompt, "Ada"), "{prompt}");
    assert!(prompt.contains("Sign in as Bob"), "{prompt}");
    assert!(
        prompt.contains(r#"href="./?agent=shop""#),
        "a way on as Ada: {prompt}"
    );
    let (_, list) = get(&ada, &site.base).await;
    assert!(signed_in_as(&list, "Ada"), "{list}");

    let host = site
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let confirm = |cookie: &str, origin: &str, fields: Vec<(&'static str, String)>| {
        http()
            .post(&bobs_link)
            .header(header::COOKIE, cookie)
            .header(header::ORIGIN, origin)
            .form(&fields)
            .send()
    };
    let token = forgery_token(&prompt);
    let own = format!("http://{host}");
    // Without the form's token, from another site, or from a browser the form was not made
    // for: refused, and no session changes hands.
    for (cookie, origin, fields) in [
        (ada.as_str(), own.as_str(), vec![]),
        (
            ada.as_str(),
            "http://evil.example",
            vec![("_forgery", token.clone())],
        ),
        ("", own.as_str(), vec![("_forgery", token.clone())]),
    ] {
        let refused = confirm(cookie, origin, fields).await.unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{cookie} {origin}");
        assert!(!refused.headers().contains_key(header::SET_COOKIE));
    }

    // Confirmed from the question's own form: Bob now, on the page the link named.
    let switched = confirm(&ada, &own, vec![("_forgery", token)])
        .await
        .unwrap();
    assert_eq!(switched.status(), StatusCode::SEE_OTHER);
    assert_eq!(switched.headers()[header::LOCATION], "./?agent=shop");
    let set = set_cookie(switched.headers());
    let bob = set.split(';').next().unwrap();
    assert_eq!(
        bob.split('=').next(),
        ada.split('=').next(),
        "one session per browser"
    );
    let (_, list) = get(bob, &site.base).await;
    assert!(signed_in_as(&list, "Bob"), "{list}");
}

#[tokio::test]
async fn the_cookie_is_secure_and_scoped_where_the_page_is_served_over_https() {
    let inbox = Inbox::builder("sqlite::memory:")
        .page_url("https://inbox.example.com/team/inbox/")
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page).await;
    let set = link_sign_in(&site, &site.token).await;
    let attributes = attributes(&set);
    assert!(attributes.contains(&"Secure".to_owned()), "{set}");
    assert!(attributes.contains(&"Path=/team/inbox".to_owned()), "{set}");

    // Behind a proxy that terminates TLS, its word counts only when trusted by name.
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    for (trusted, secure) in [(vec![], false), (vec![web::ProxyHeader::Proto], true)] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let site = Site::serve(inbox, |page| {
            page.trusted_proxy([loopback]).trust_proxy_headers(trusted)
        })
        .await;
        let response = http()
            .get(format!("{}?token={}", site.base, site.token))
            .header("x-forwarded-proto", "https")
            .send()
            .await
            .unwrap();
        let set = set_cookie(response.headers());
        assert_eq!(set.contains("; Secure"), secure, "{set}");
    }
}

#[tokio::test]
async fn the_stylesheet_is_public_and_nothing_else_is() {
    let site = Site::start().await;
    let css = http()
        .get(format!("{}style.css", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(css.status(), StatusCode::OK);
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );
    assert_secure_headers(css.headers());
    let cookie = session(&site).await;
    let (status, _) = get(&cookie, &format!("{}nowhere", site.base)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let put = http()
        .put(site.request_url("x"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn an_approval_is_answered_once_and_its_outcome_shown() {
    let site = Site::start_as("tester").await;
    let id = site.approval("gpu").await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"value="approve""#) && page.contains(r#"value="decline""#),
        "{page}"
    );
    assert!(
        page.contains("buy({&quot;item&quot;:&quot;gpu&quot;})"),
        "{page}"
    );
    let token = forgery_token(&page);

    let response = post(&site, &cookie, &id)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], id.as_str());
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answer, Some(Answer::ok(&id)));
    assert_eq!(parked.answered_by.as_deref(), Some("tester"));

    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains(r#"<p class="banner">Approved."#), "{page}");
    assert!(page.contains("Waiting for a worker"), "{page}");
    assert!(page.contains(r#"http-equiv="refresh""#), "{page}");
    assert!(!page.contains("<form"), "{page}");

    // The first answer won: a second one, from the page loaded before, is a conflict.
    let (status, page) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "decline")],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(page.contains("Already answered"), "{page}");
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answer, Some(Answer::ok(&id)));

    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("finished: bought gpu"), "{page}");
    assert!(!page.contains(r#"http-equiv="refresh""#), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("Nothing waiting"), "{list}");
    assert!(list.contains("Recently answered"), "{list}");
    assert!(list.contains("finished: bought gpu"), "{list}");
    assert!(list.contains("approved by tester"), "{list}");
}

#[tokio::test]
async fn answers_not_from_the_page_are_refused() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let other = site.approval("cpu").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    let (_, other_page) = get(&cookie, &site.request_url(&other)).await;
    let other_token = forgery_token(&other_page);
    let approve = |t: &str| {
        vec![
            ("_forgery".to_owned(), t.to_owned()),
            ("_action".to_owned(), "approve".to_owned()),
        ]
    };

    // No session: the page never sees it.
    let anonymous = http()
        .post(site.request_url(&id))
        .form(&approve(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    // Another origin, told by either header.
    for (name, value) in [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let response = http()
            .post(site.request_url(&id))
            .header(header::COOKIE, &cookie)
            .header(name, value)
            .form(&approve(&token))
            .send()
            .await
            .unwrap();
        let (status, page) = body(response).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {value}");
        assert!(page.contains("came from another site"), "{page}");
    }

    // No token, a wrong one, another request's.
    for fields in [
        vec![("_action".to_owned(), "approve".to_owned())],
        approve("00ff"),
        approve(&other_token),
    ] {
        let (status, page) = body(
            post(&site, &cookie, &id)
                .form(&fields)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{fields:?}");
        assert!(page.contains("anti-forgery token"), "{page}");
    }

    // A button this request does not have, and a body that is no form.
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "signed-in")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, page) = body(
        post(&site, &cookie, &id)
            .header(header::CONTENT_TYPE, "application/json")
            .body(r#"{"_action":"approve"}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("Unreadable answer"), "{page}");

    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn unknown_and_expired_requests_say_so() {
    let site = Site::start().await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url("no-such-id")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("No such request"), "{page}");
    let (status, _) = post_form(
        &site,
        &cookie,
        "no-such-id",
        &[("_forgery", "00"), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let id = site.stale(Duration::ZERO).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("This request expired"), "{page}");
    assert!(!page.contains("<form"), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("expired"), "{list}");

    // A page loaded before the deadline, answered after it: too late.
    let id = site.stale(Duration::from_secs(60)).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    site.clock.advance(Duration::from_secs(61));
    let (status, page) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("Request expired"), "{page}");
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn a_form_is_rendered_from_its_schema_and_checked_on_the_server() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    for needle in [
        r#"name="f.guest""#,
        r#"<p class="help" id="field-guest-help">Who the room is for</p>"#,
        r#"inputmode="numeric""#,
        r#"type="checkbox""#,
        r#"<option value="double">double</option>"#,
        r#"inputmode="decimal""#,
        "novalidate",
    ] {
        assert!(page.contains(needle), "`{needle}` missing in:\n{page}");
    }
    // guest, nights and room are marked required; budget is not, and neither is the
    // breakfast checkbox, since leaving it unchecked answers `false`.
    assert_eq!(page.matches(r#"title="required""#).count(), 3, "{page}");

    // Typed values that do not parse are caught before the store, all at once.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada <Lovelace>"),
                ("f.nights", "two"),
                ("f.room", "double"),
                ("f.budget", "cheap"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("Enter a whole number"), "{page}");
    assert!(page.contains("Enter a number"), "{page}");
    assert!(
        page.contains(r#"value="Ada &lt;Lovelace&gt;""#),
        "the value typed is kept: {page}"
    );
    assert!(
        page.contains(r#"<option value="double" selected>"#),
        "{page}"
    );

    // Values that parse but do not fit the schema are the store's to refuse.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada"),
                ("f.nights", "30"),
                ("f.room", "double"),
                ("f.breakfast", "true"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let error_at = page
        .find(r#"id="field-nights-error""#)
        .expect("an error on nights");
    assert!(
        page[error_at..].starts_with(r#"id="field-nights-error" role="alert">Must be at most 14"#),
        "{page}"
    );
    assert!(
        page.contains(r#"name="f.breakfast" value="true" checked"#),
        "{page}"
    );
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);

    let response = answer(
        &site,
        &cookie,
        &id,
        &[
            ("_action", "submit"),
            ("f.guest", "Ada"),
            ("f.nights", "3"),
            ("f.room", "single"),
            ("f.budget", ""),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        parked.answer.unwrap().data,
        Some(json!({"guest": "Ada", "nights": 3, "breakfast": false, "room": "single"}))
    );
    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("finished: booked 3 nights in Lyon for Ada"),
        "{page}"
    );
}

#[tokio::test]
async fn a_form_shows_every_field_problem_in_one_round() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    // `nights` reads as a number but is out of the form's range; `budget` does not read at
    // all: both are shown at once, each at its field.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada"),
                ("f.nights", "30"),
                ("f.room", "double"),
                ("f.budget", "cheap"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    for field in ["nights", "budget"] {
        assert!(
            page.contains(&format!(r#"id="field-{field}-error" role="alert""#)),
            "no error at `{field}`: {page}"
        );
    }
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn declining_a_form_skips_its_checks_and_keeps_the_reason() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    let response = answer(
        &site,
        &cookie,
        &id,
        &[
            ("_action", "decline"),
            ("_reason", "no trip after all"),
            ("f.nights", "many"),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        parked.answer,
        Some(Answer::refuse(&id, Refusal::Declined).with_note("no trip after all"))
    );
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("declined: “no trip after all”"), "{page}");
}

#[tokio::test]
async fn a_sign_in_links_its_address_and_can_be_cancelled() {
    let site = Site::start().await;
    let id = site.sign_in().await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains(r#"<a href="https://login.example.com/authorize?app=inbox-tests" target="_blank" rel="noopener noreferrer">"#),
        "{page}"
    );
    assert!(page.contains("I have signed in"), "{page}");
    let response = answer(
        &site,
        &cookie,
        &id,
        &[("_action", "cancel"), ("_reason", "wrong account")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    // The button's code and the person's words, apart: whoever reads the code (an MCP
    // server waiting on this sign-in) sees a cancel, whatever was typed.
    assert_eq!(
        parked.answer,
        Some(Answer::refuse(&id, Refusal::Cancelled).with_note("wrong account"))
    );
    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains(r#"<p class="banner refused">Sign-in cancelled."#),
        "{page}"
    );
    assert!(!page.contains("Answered."), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("cancelled: “wrong account”"), "{list}");
    assert!(list.contains("finished: declined/expired: "), "{list}");
}

#[tokio::test]
async fn model_made_text_and_addresses_stay_inert() {
    let site = Site::start().await;
    let id = site
        .lure(
            "<script>alert('x')</script><img src=x onerror=alert(1)> Sign in",
            "javascript:alert(document.cookie)",
        )
        .await;
    let spaced = site.lure("Spaced", " javascript:alert(1)").await;
    let cookie = session(&site).await;
    for url in [
        site.base.clone(),
        site.request_url(&id),
        site.request_url(&spaced),
    ] {
        let (status, page) = get(&cookie, &url).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("href=\"javascript"), "{page}");
        assert!(!page.contains("href=\" javascript"), "{page}");
    }
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("is not a web address"), "{page}");
    assert!(
        page.contains("<code>javascript:alert(document.cookie)</code>"),
        "{page}"
    );
}

#[tokio::test]
async fn ids_that_need_escaping_round_trip() {
    let site = Site::start().await;
    let cookie = session(&site).await;
    let id = site.named("a/b?c d").await;
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains(r#"href="r/a%2Fb%3Fc%20d""#), "{list}");
    let (status, page) = get(&cookie, &format!("{}r/a%2Fb%3Fc%20d", site.base)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains(r#"action="a%2Fb%3Fc%20d""#), "{page}");
    let token = forgery_token(&page);
    let response = http()
        .post(format!("{}r/a%2Fb%3Fc%20d", site.base))
        .header(header::COOKIE, &cookie)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "a%2Fb%3Fc%20d");
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().answer,
        Some(Answer::ok(&id))
    );
}

/// The page's link and a session cookie for it, from the example's first line.
async fn example_session(first: &str) -> (String, String) {
    let url = first
        .strip_prefix("inbox: ")
        .unwrap_or_else(|| panic!("the first line is not the link: {first:?}"));
    let (base, _) = url.split_once("?token=").expect("a token in the link");
    let response = http().get(url).send().await.expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = set_cookie(response.headers());
    (
        base.to_owned(),
        cookie.split(';').next().unwrap().to_owned(),
    )
}

/// Answers request `id` of the page at `base` with `fields`, as its form would.
async fn answer_at(base: &str, cookie: &str, id: &str, fields: &[(&str, &str)]) -> StatusCode {
    let url = format!("{base}r/{id}");
    let (_, page) = get(cookie, &url).await;
    let token = forgery_token(&page);
    let mut form = vec![("_forgery", token.as_str())];
    form.extend_from_slice(fields);
    http()
        .post(&url)
        .header(header::COOKIE, cookie)
        .form(&form)
        .send()
        .await
        .expect("the page answers")
        .status()
}

#[tokio::test]
async fn the_example_prints_each_outcome_and_exits_when_done() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("inbox.db").display());
    let example = Example::start(&db, &["--exit-when-done"]);
    let limit = Duration::from_secs(30);
    let first = example.line(limit);
    let (base, cookie) = example_session(&first).await;
    let mut ids = Vec::new();
    while ids.len() < 3 {
        if let Some(rest) = example.line(limit).strip_prefix("parked ") {
            ids.push(rest.split(':').next().unwrap().to_owned());
        }
    }
    let answers: [&[(&str, &str)]; 3] = [
        &[("_action", "approve")],
        &[
            ("_action", "submit"),
            ("f.city", "Paris"),
            ("f.zip", "75001"),
            ("f.carrier", "post"),
        ],
        &[("_action", "cancel")],
    ];
    for (id, fields) in ids.iter().zip(answers) {
        assert_eq!(
            answer_at(&base, &cookie, id, fields).await,
            StatusCode::SEE_OTHER
        );
    }
    let mut done = Vec::new();
    while done.len() < 3 {
        let line = example.line(limit);
        if line.starts_with("done ") {
            done.push(line);
        }
    }
    let mut example = example;
    let status = example.child.wait().unwrap();
    assert!(status.success(), "{status}");
    for (id, text) in ids.iter().zip([
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboards to 75001 Paris in 1 parcel(s), standard, by Post.",
        "Without a sign-in I cannot read your calendar.",
    ]) {
        let line = format!("done {id}: {text}");
        assert!(done.contains(&line), "`{line}` missing from {done:#?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_examples_two_people_sign_in_with_their_own_links() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-people-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("inbox.db").display());
    let example = Example::start(&db, &[]);
    let limit = Duration::from_secs(30);
    let (base, ada) = example_session(&example.line(limit)).await;
    let second = example.line(limit);
    let bobs_link = second
        .strip_prefix("inbox as bob@example.com: ")
        .unwrap_or_else(|| panic!("the second line is Bob's link: {second:?}"));
    let (_, bob) = example_session(&format!("inbox: {bobs_link}")).await;
    assert_ne!(ada, bob);
    let mut purchase = None;
    while purchase.is_none() {
        let line = example.line(limit);
        if let Some(rest) = line.strip_prefix("parked ") {
            if rest.ends_with("Buy a gpu for the lab.") {
                purchase = rest.split(':').next().map(str::to_owned);
            }
        }
    }
    let purchase = purchase.unwrap();

    let (_, list) = get(&bob, &base).await;
    assert!(
        list.contains("Signed in as <strong class=\"who\">Bob</strong>"),
        "{list}"
    );
    // Purchases are finance's: Bob sees this one, read-only, and his answer is refused.
    let (status, page) = get(&bob, &format!("{base}r/{purchase}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("you see it read-only"), "{page}");
    assert!(!page.contains("_forgery"), "no form for Bob:\n{page}");
    let (_, adas_page) = get(&ada, &format!("{base}r/{purchase}")).await;
    assert!(
        adas_page.contains("Signed in as <strong class=\"who\">Ada</strong>"),
        "{adas_page}"
    );
    let refused = http()
        .post(format!("{base}r/{purchase}"))
        .header(header::COOKIE, &bob)
        .form(&[
            ("_forgery", forgery_token(&adas_page).as_str()),
            ("_action", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        answer_at(&base, &ada, &purchase, &[("_action", "approve")]).await,
        StatusCode::SEE_OTHER
    );
    let done = format!("done {purchase}: The gpu purchase is approved and on its way.");
    while example.line(limit) != done {}
    drop(example);
    let inbox = toolnexus_inbox::Inbox::open(&db).await.unwrap();
    let row = inbox.get(&purchase).await.unwrap().unwrap();
    assert_eq!(row.answered_by.as_deref(), Some("ada@example.com"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_example_refuses_unknown_options() {
    let mut example = Example::start("sqlite::memory:", &["--colour"]);
    let status = example.child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
}

#[tokio::test]
async fn a_form_the_page_cannot_show_can_only_be_declined() {
    let site = Site::start().await;
    let id = site.nested().await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("cannot be shown here"), "{page}");
    assert!(page.contains("field `to`"), "{page}");
    assert!(!page.contains(r#"value="submit""#), "{page}");
    let token = forgery_token(&page);
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "submit")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "decline")],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(state_of(&site, &id).await, ParkedState::Answered);
}

/// The `href` of the first link whose text starts with `text`.
fn link_to(page: &str, text: &str) -> Option<String> {
    let at = page.find(&format!("\">{text}"))?;
    let start = page[..at].rfind("href=\"")? + "href=\"".len();
    Some(page[start..at].replace("&amp;", "&"))
}

#[tokio::test]
async fn a_long_queue_is_listed_a_page_at_a_time() {
    let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
    let site = Site::serve(inbox, |page| page.page_size(2)).await;
    let mut ids = Vec::new();
    for item in ["anvil", "bell", "chisel", "drill", "easel"] {
        ids.push(site.approval(item).await);
    }
    site.inbox
        .answer(Answer::ok(&ids[0]))
        .await
        .expect("answered");
    site.resume_all().await;
    let cookie = session(&site).await;

    let (status, first) = get(&cookie, &site.base).await;
    assert_eq!(status, StatusCode::OK);
    assert!(first.contains("4 requests waiting"), "{first}");
    assert!(first.contains("Showing 1–2 of 4"), "{first}");
    assert!(first.contains("Buy bell?") && first.contains("Buy chisel?"));
    assert!(!first.contains("Buy drill?") && !first.contains("Buy easel?"));
    // The decided run shows below the first page only.
    assert!(first.contains("Recently answered") && first.contains("Buy anvil?"));
    assert_eq!(link_to(&first, "First page"), None);
    let more = link_to(&first, "More: 3–4 of 4").unwrap_or_else(|| panic!("{first}"));

    let (status, second) = get(&cookie, &format!("{}{more}", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(second.contains("4 requests waiting"), "{second}");
    assert!(second.contains("Showing 3–4 of 4"), "{second}");
    assert!(second.contains("Buy drill?") && second.contains("Buy easel?"));
    assert!(!second.contains("Buy bell?") && !second.contains("Recently answered"));
    assert_eq!(link_to(&second, "More"), None, "{second}");
    assert_eq!(link_to(&second, "First page").as_deref(), Some("./"));

    let (status, beyond) = get(&cookie, &format!("{}?from=40", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(beyond.contains("No more waiting requests."), "{beyond}");
    assert!(link_to(&beyond, "First page").is_some(), "{beyond}");

    let (status, nonsense) = get(&cookie, &format!("{}?from=ten", site.base)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(nonsense.contains("No such page"), "{nonsense}");
}

#[tokio::test]
async fn a_short_queue_has_no_paging() {
    let site = Site::start().await;
    site.approval("anvil").await;
    let cookie = session(&site).await;
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("1 request waiting"), "{list}");
    assert!(
        !list.contains("Showing") && link_to(&list, "More").is_none(),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_gone_away_is_a_503_page_not_a_crash() {
    let name = format!(
        "toolnexus_inbox_web_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let url = pg::create_database(&name).await;
    let inbox = Inbox::builder(url)
        .connect_timeout(Duration::from_secs(1))
        .open()
        .await
        .expect("the inbox opens");
    let site = Site::serve(inbox, |page| page).await;
    let id = site.approval("anvil").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);

    pg::drop_database(&name).await;

    for url in [site.base.clone(), site.request_url(&id)] {
        let response = fetch(&cookie, &url).await;
        assert_secure_headers(response.headers());
        let (status, text) = body(response).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{url}: {text}");
        assert!(text.contains("cannot be reached right now"), "{text}");
    }
    let (status, text) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", &token), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
}

/// The part of a run's page that shows its `n`-th request (1-based).
fn request_section(page: &str, n: usize) -> &str {
    let start = page
        .find(&format!(r#"id="request-{n}""#))
        .unwrap_or_else(|| panic!("no request {n} in:\n{page}"));
    let rest = &page[start..];
    let end = rest[1..]
        .find(r#"id="request-"#)
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[tokio::test]
async fn a_runs_requests_are_answered_together_on_one_page() {
    let site = Site::start().await;
    let ids = site.purge("tmp").await;
    let id = &ids[0];
    let cookie = session(&site).await;

    // Any of the run's requests opens the run's page, with all three.
    let (status, page) = get(&cookie, &site.request_url(&ids[1])).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("3 requests of one run"), "{page}");
    for n in 1..=3 {
        let section = request_section(&page, n);
        assert!(section.contains(r#"value="approve""#), "{section}");
        assert!(section.contains(r#"value="edit""#), "{section}");
        assert!(
            section.contains(&format!(r#"id="reason-r{n}-decline""#)),
            "{section}"
        );
    }
    let second = request_section(&page, 2);
    assert!(
        second.contains(r#"id="field-r2-path" name="f.path" value="tmp/b""#),
        "the edit form is filled with the proposed arguments: {second}"
    );
    assert!(second.contains(r#"id="field-r2-keep_days""#), "{second}");
    let tokens: Vec<String> = (1..=3)
        .map(|n| forgery_token(request_section(&page, n)))
        .collect();
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("3 requests waiting"), "{list}");
    assert!(list.contains("one of 3 requests of its run"), "{list}");

    // A request's token answers that request only.
    let (status, _) = post_form(
        &site,
        &cookie,
        &ids[0],
        &[("_forgery", tokens[1].as_str()), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // An edit that does not fit the tool's schema: the page again, the field named.
    let (status, page) = post_form(
        &site,
        &cookie,
        &ids[1],
        &[
            ("_forgery", tokens[1].as_str()),
            ("_action", "edit"),
            ("f.path", "tmp/b2"),
            ("f.keep_days", "-1"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let second = request_section(&page, 2);
    assert!(
        second.contains(r#"id="field-r2-keep_days-error""#),
        "{second}"
    );
    assert!(second.contains("at least 0"), "{second}");
    assert!(
        second.contains(r#"value="tmp/b2""#),
        "what was typed stays: {second}"
    );
    assert_eq!(state_of(&site, &ids[1]).await, ParkedState::Waiting);

    for (n, fields) in [
        (0, vec![("_action", "approve")]),
        (
            1,
            vec![
                ("_action", "edit"),
                ("f.path", "tmp/b2"),
                ("f.keep_days", "3"),
            ],
        ),
        (2, vec![("_action", "decline"), ("_reason", "keep it")]),
    ] {
        let mut form = vec![("_forgery", tokens[n].as_str())];
        form.extend(fields);
        let response = post(&site, &cookie, &ids[n])
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            response.headers()[header::LOCATION],
            id.as_str(),
            "back to the run"
        );
    }
    let edited = site.inbox.get(&ids[1]).await.unwrap().unwrap().answer;
    assert_eq!(
        edited,
        Some(Answer::ok(&ids[1]).with_args(json!({"path": "tmp/b2", "keep_days": 3})))
    );
    let (_, page) = get(&cookie, &site.request_url(id)).await;
    assert!(page.contains("Approved with edited arguments."), "{page}");
    assert!(page.contains("keep_days</span> 3"), "{page}");
    assert!(page.contains("declined: “keep it”"), "{page}");
    assert!(page.contains("Waiting for a worker"), "{page}");

    site.resume_all().await;
    assert_eq!(
        site.model.calls(),
        2,
        "one call to halt, one after the three answers"
    );
    let (_, page) = get(&cookie, &site.request_url(&ids[2])).await;
    assert!(
        page.contains("finished: deleted tmp/a | deleted tmp/b2, a copy kept 3 days"),
        "{page}"
    );
    assert!(!page.contains(r#"http-equiv="refresh""#), "{page}");
}

/// The test's sign-in cookie for `who` (see `page::people`).
fn as_person(who: &str) -> String {
    format!("{}={who}", page::PERSON_COOKIE)
}

#[tokio::test]
async fn a_person_not_allowed_sees_the_request_read_only_and_is_refused() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let (bob, ada) = (as_person("bob"), as_person("ada"));

    let (status, page) = get(&bob, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Signed in as <strong class=\"who\">Bob</strong>"),
        "{page}"
    );
    assert!(page.contains("you see it read-only"), "{page}");
    assert!(!page.contains("_forgery"), "no form for Bob:\n{page}");

    // Even with Ada's form token, Bob's answer is refused and changes nothing.
    let (_, adas_page) = get(&ada, &site.request_url(&id)).await;
    let token = forgery_token(&adas_page);
    let (status, page) = post_form(
        &site,
        &bob,
        &id,
        &[("_forgery", &token), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("Not yours to answer"), "{page}");
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
    assert_eq!(
        site.inbox.audit(&id).await.unwrap().len(),
        1,
        "only the parking"
    );

    // Ada may: her answer is recorded as hers, and the history says so.
    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(page.contains("History"), "{page}");
    assert!(page.contains("answered</strong>"), "{page}");
    assert!(page.contains("by ada@example.com"), "{page}");
}

#[tokio::test]
async fn a_forwarded_identity_counts_only_from_the_trusted_proxy() {
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    let elsewhere = std::net::IpAddr::from([10, 9, 9, 9]);
    for (proxy, trusted) in [(loopback, true), (elsewhere, false)] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let site = Site::serve(inbox, |page| {
            page.trusted_proxy([proxy])
                .trust_proxy_headers([web::ProxyHeader::Email, web::ProxyHeader::User])
        })
        .await;
        let id = site.approval("lamp").await;
        let forwarded = || {
            http()
                .get(&site.base)
                .header("x-forwarded-email", "ada@example.com")
                .header("x-forwarded-user", "ada")
        };
        let (status, page) = body(forwarded().send().await.unwrap()).await;
        if trusted {
            assert_eq!(status, StatusCode::OK, "{page}");
            assert!(
                page.contains("Signed in as <strong class=\"who\">ada</strong>"),
                "{page}"
            );
            let page = body(
                http()
                    .get(site.request_url(&id))
                    .header("x-forwarded-email", "ada@example.com")
                    .send()
                    .await
                    .unwrap(),
            )
            .await
            .1;
            let token = forgery_token(&page);
            let response = post(&site, "", &id)
                .header("x-forwarded-email", "ada@example.com")
                .form(&[("_forgery", token.as_str()), ("_action", "approve")])
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::SEE_OTHER);
            let parked = site.inbox.get(&id).await.unwrap().unwrap();
            assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
        } else {
            // Not from the proxy: the headers are anyone's, so nobody is signed in.
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{page}");
            assert!(!page.contains("ada"), "{page}");
            assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
        }
    }
}

#[tokio::test]
async fn forwarded_headers_are_read_only_when_trusted_by_name() {
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    use web::ProxyHeader::{Email, Groups};
    // Bob is in sales; his groups header says finance, which may answer the refund.
    let as_finance = |url: &str| {
        http()
            .get(url)
            .header("x-forwarded-email", "bob@example.com")
            .header("x-forwarded-groups", "finance")
            .send()
    };
    for (headers, may_answer) in [
        (vec![], None),
        (vec![Email], Some(false)),
        (vec![Email, Groups], Some(true)),
    ] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let trusted = headers.clone();
        let site = Site::serve(inbox, move |page| {
            page.trusted_proxy([loopback]).trust_proxy_headers(trusted)
        })
        .await;
        let id = site.refund(40).await;
        let (status, page) = body(as_finance(&site.request_url(&id)).await.unwrap()).await;
        match may_answer {
            // The proxy's address alone trusts nothing it forwards.
            None => {
                assert_eq!(status, StatusCode::UNAUTHORIZED, "{headers:?}: {page}");
                assert!(!page.contains("bob"), "{page}");
            }
            Some(may) => {
                assert_eq!(status, StatusCode::OK, "{headers:?}: {page}");
                assert!(page.contains("bob@example.com"), "{page}");
                assert_eq!(page.contains("_forgery"), may, "{headers:?}: {page}");
                assert_eq!(!page.contains("you see it read-only"), may, "{page}");
            }
        }
    }
}

#[tokio::test]
async fn receipts_are_shown_only_to_who_may_answer_or_answered() {
    let key = toolnexus_inbox::receipt::ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = Inbox::builder("sqlite::memory:")
        .receipt_key(key)
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let (ada, bob, carol) = (as_person("ada"), as_person("bob"), as_person("carol"));
    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    let receipt = parked.votes[0]
        .receipt
        .clone()
        .expect("the inbox signed the vote");

    // Ada answered it and Carol, in finance, may: both see the receipt.
    for who in [&ada, &carol] {
        let (_, page) = get(who, &site.request_url(&id)).await;
        assert!(page.contains(&receipt.signature), "{who}: {page}");
    }
    // Bob may not answer it: he sees that it was approved, and by whom, not the receipt
    // nor what the vote said, nor the call.
    let call = r#"refund({&quot;amount&quot;:40})"#;
    let (_, page) = get(&carol, &site.request_url(&id)).await;
    assert!(page.contains(call), "{page}");
    let (_, list) = get(&carol, &site.base).await;
    assert!(list.contains(call), "{list}");
    let (_, list) = get(&bob, &site.base).await;
    assert!(list.contains("Refund 40 euros?"), "{list}");
    assert!(!list.contains(call), "{list}");
    let (status, page) = get(&bob, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Approved."), "{page}");
    assert!(page.contains("answered</strong>"), "{page}");
    assert!(page.contains("by ada@example.com"), "{page}");
    assert!(!page.contains(&receipt.signature), "{page}");
    assert!(!page.contains(&receipt.key), "{page}");
    assert!(!page.contains("receipts"), "{page}");
    assert!(!page.contains("refund("), "{page}");

    // A quorum's first approval: its receipt is Ada's and finance's to see, not Bob's.
    let payment = site.payment(900).await;
    let response = answer(&site, &ada, &payment, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&payment).await.unwrap().unwrap();
    assert_eq!(parked.state, ParkedState::Waiting);
    let first = parked.votes[0].receipt.clone().expect("the vote's receipt");
    for (who, sees) in [(&ada, true), (&carol, true), (&bob, false)] {
        let (_, page) = get(who, &site.request_url(&payment)).await;
        assert!(page.contains("1 of 2 approvals"), "{who}: {page}");
        assert_eq!(page.contains(&first.signature), sees, "{who}: {page}");
    }
}

#[tokio::test]
async fn a_webhook_tells_of_an_answer_with_the_inboxs_receipts_never_its_callers() {
    let key = toolnexus_inbox::receipt::ReceiptKey::ephemeral_for_tests().unwrap();
    let hook = toolnexus_inbox::Webhook::new("http://127.0.0.1:9/never")
        .name("ops")
        .events([toolnexus_inbox::Event::Answered]);
    let inbox = Inbox::builder("sqlite::memory:")
        .receipt_key(key)
        .webhook(hook)
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let (first, second) = (site.refund(40).await, site.refund(50).await);
    let ada = toolnexus_inbox::Person::new("ada@example.com");
    site.inbox
        .answer_as(Answer::ok(&first), ada.clone())
        .await
        .unwrap();
    let signed = site.inbox.get(&first).await.unwrap().unwrap().votes[0]
        .receipt
        .clone()
        .expect("the inbox signed the vote");

    // A caller hands in a receipt of its own (another request's, its signature altered):
    // the answer is taken, and the webhook never repeats the receipt.
    let mut attached = signed.clone();
    attached.signature = format!("{}-attached-by-the-caller", signed.signature);
    let mut answer = Answer::ok(&second);
    answer.receipts = vec![attached.clone(), signed.clone()];
    site.inbox.answer_as(answer, ada).await.unwrap();
    let told = site.inbox.deliveries(&second).await.unwrap();
    let body = &told
        .iter()
        .find(|d| d.request.as_deref() == Some(second.as_str()))
        .expect("the answer is told")
        .body;
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["data"]["answer"]["ok"], true, "{body}");
    assert!(!body.contains(&attached.signature), "{body}");
    assert!(!body.contains(&signed.signature), "{body}");
    // The one receipt it carries is the inbox's, for this answer.
    let receipts: Vec<toolnexus::Receipt> =
        serde_json::from_value(json["data"]["answer"]["receipts"].clone()).unwrap();
    assert_eq!(receipts.len(), 1, "{body}");
    assert_eq!(receipts[0].statement.request, second);
    let public = site.inbox.receipt_public_key().unwrap();
    toolnexus_inbox::receipt::verify(&receipts[0], &public).unwrap();
}

#[tokio::test]
async fn the_list_filters_by_agent_kind_and_who_may_answer() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let refund = site.refund(40).await;
    let lamp = site.approval("lamp").await;
    let booking = site.booking().await;
    let shown = |page: &str, id: &str| page.contains(&format!("r/{id}\""));
    let (bob, ada) = (as_person("bob"), as_person("ada"));

    let (status, page) = get(&bob, &format!("{}?mine=1", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Signed in as"), "{page}");
    assert!(
        !shown(&page, &refund) && shown(&page, &lamp) && shown(&page, &booking),
        "{page}"
    );
    assert!(page.contains(r#"name="mine" value="1" checked"#), "{page}");

    let (_, page) = get(&ada, &format!("{}?mine=1", site.base)).await;
    assert!(shown(&page, &refund) && shown(&page, &lamp), "{page}");

    let (_, page) = get(&ada, &format!("{}?kind=input", site.base)).await;
    assert!(shown(&page, &booking) && !shown(&page, &lamp), "{page}");
    assert!(
        page.contains(r#"<option value="input" selected>"#),
        "{page}"
    );

    let (_, page) = get(&ada, &format!("{}?agent=default&kind=approval", site.base)).await;
    assert!(
        shown(&page, &refund) && shown(&page, &lamp) && !shown(&page, &booking),
        "{page}"
    );
    let (_, page) = get(&ada, &format!("{}?agent=elsewhere", site.base)).await;
    assert!(page.contains("Nothing waiting"), "{page}");
}

#[tokio::test]
async fn a_runs_page_shows_who_was_told_and_how_delivery_went() {
    // One webhook takes every notification; the other is down.
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_url = format!("http://{}/hook", up.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { StatusCode::NO_CONTENT }),
    );
    tokio::spawn(async move { axum::serve(up, app).await });
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down_url = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let inbox = Inbox::builder("sqlite::memory:")
        .webhook(toolnexus_inbox::Webhook::new(&up_url).name("team chat"))
        .webhook(
            toolnexus_inbox::Webhook::new(&down_url)
                .name("pager")
                .retries(1, Duration::from_secs(1)),
        )
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page).await;
    let cookie = session(&site).await;
    let id = site.approval("lamp").await;

    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("<h2>Notifications</h2>"), "{page}");
    assert!(
        page.contains("run.parked</strong> to team chat: waiting to be sent"),
        "{page}"
    );
    assert_eq!(site.inbox.deliver_due().await.unwrap(), 1);
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("run.parked</strong> to team chat: delivered"),
        "{page}"
    );
    assert!(
        page.contains("run.parked</strong> to pager: given up (1 attempt)"),
        "{page}"
    );
    assert!(page.contains("could not connect"), "{page}");
    assert!(
        page.contains("notification failed</strong>"),
        "the trail says so: {page}"
    );
}

#[tokio::test]
async fn an_unnamed_token_holder_is_recorded_as_such() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    let response = post(&site, &cookie, &id)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some(web::TOKEN_HOLDER));
    let trail = site.inbox.audit(&id).await.unwrap();
    let answered = trail
        .iter()
        .find(|e| e.kind == AuditKind::Answered)
        .unwrap();
    assert_eq!(answered.actor.as_deref(), Some(web::TOKEN_HOLDER));
    let (_, list) = get(&cookie, &site.base).await;
    assert!(
        list.contains(&format!("approved by {}", web::TOKEN_HOLDER)),
        "{list}"
    );
}

/// Where `reference` (a link, a form's action, a redirect's Location) leads from `page`.
fn resolve(page: &str, reference: &str) -> String {
    reqwest::Url::parse(page)
        .and_then(|url| url.join(reference))
        .unwrap_or_else(|e| panic!("{reference:?} from {page}: {e}"))
        .to_string()
}

/// Every address a page links to or posts to (`href` and `action`), as written.
fn references(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in [" href=\"", " action=\""] {
        let mut rest = page;
        while let Some(at) = rest.find(attribute) {
            rest = &rest[at + attribute.len()..];
            let end = rest.find('"').expect("a closed attribute");
            found.push(rest[..end].replace("&amp;", "&"));
            rest = &rest[end..];
        }
    }
    found
}

/// Asserts every link and form of `page` (served at `url`) stays under the mount: the list
/// is at `site.base`, everything else below `site.root`.
fn assert_links_stay_under(site: &Site, url: &str, page: &str) {
    let links = references(page);
    assert!(!links.is_empty(), "no links in {url}:\n{page}");
    for link in links {
        let to = resolve(url, &link);
        let to = to.split('?').next().unwrap_or_default();
        assert!(
            to == site.base || to.starts_with(&site.root),
            "{link:?} on {url} leads to {to}, outside {}",
            site.base
        );
    }
}

/// The `Location` a response redirects to, resolved against `from`.
fn location(from: &str, response: &Response) -> String {
    let location = response.headers()[header::LOCATION]
        .to_str()
        .expect("an ASCII Location");
    resolve(from, location)
}

/// Lists, opens and answers a request on the page as `site` mounts it, checking every
/// redirect and link stays under the mount point.
async fn list_open_and_answer_under_the_mount(site: &Site) {
    let id = site.approval("lamp").await;
    let host = resolve(&site.base, "/");

    // Signing in from the printed link lands back on the list, still under the prefix.
    let link = format!("{}?token={}", site.base, site.token);
    let response = http().get(&link).send().await.expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{link}");
    assert_eq!(location(&link, &response), site.base);
    let set = set_cookie(response.headers());
    // The session is scoped to the page's mount: the host's other pages never get it.
    let mount = resolve(&site.root, "./");
    let mount = mount.trim_start_matches(&host).trim_end_matches('/');
    let path = format!("Path=/{mount}");
    assert!(attributes(&set).contains(&path), "{set}: not {path}");
    let cookie = set.split(';').next().expect("a cookie pair").to_owned();

    // The list: its cards open the request's page, its stylesheet is the page's own.
    let (status, list) = get(&cookie, &site.base).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert!(list.contains("1 request waiting"), "{list}");
    assert_links_stay_under(site, &site.base, &list);
    let card = link_to(&list, "Buy lamp?").expect("a card for the request");
    assert_eq!(resolve(&site.base, &card), site.request_url(&id));
    let style = resolve(&site.base, &references(&list)[0]);
    assert_eq!(style, format!("{}style.css", site.root));
    let css = http().get(&style).send().await.expect("the stylesheet");
    assert_eq!(css.status(), StatusCode::OK);
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );

    // The request's page: its form posts to itself, its links lead back to the list.
    let url = site.request_url(&id);
    let (status, page) = get(&cookie, &url).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_links_stay_under(site, &url, &page);
    let home = link_to(&page, "toolnexus inbox").expect("a link to the list");
    assert_eq!(resolve(&url, &home), site.base);
    let (status, back) = get(&cookie, &resolve(&url, &home)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(back.contains("1 request waiting"), "{back}");

    // A link straight to a request keeps the request's page once the token is moved out.
    let link = format!("{url}?token={}", site.token);
    let response = http().get(&link).send().await.expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&link, &response), url);

    // Signed out, the refusal's own links stay under the prefix too.
    let (status, refusal) = body(http().get(&url).send().await.expect("the page answers")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_links_stay_under(site, &url, &refusal);
    let back = link_to(&refusal, "Back to the inbox").expect("a way back");
    assert_eq!(resolve(&url, &back), site.base);

    // The answer, then back to the run's page under the prefix.
    let response = answer(site, &cookie, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&url, &response), url);
    let parked = site
        .inbox
        .get(&id)
        .await
        .expect("the store")
        .expect("the run");
    assert_eq!(parked.answer, Some(Answer::ok(&id)));
    site.resume_all().await;
    let (_, page) = get(&cookie, &url).await;
    assert!(page.contains("finished: bought lamp"), "{page}");
    assert_links_stay_under(site, &url, &page);
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("Nothing waiting"), "{list}");
    assert!(list.contains("finished: bought lamp"), "{list}");
    assert_links_stay_under(site, &site.base, &list);

    // The host's own pages, when it has any, are untouched by the inbox's.
    if site.base != host {
        let (status, home) = get(&cookie, &host).await;
        assert_eq!((status, home.as_str()), (StatusCode::OK, HOST_HOME));
    }
}

#[tokio::test]
async fn the_page_works_nested_under_a_prefix() {
    let site = Site::mounted(Mounting::Nest).await;
    list_open_and_answer_under_the_mount(&site).await;
}

#[tokio::test]
async fn the_page_works_as_a_nested_service_under_a_prefix() {
    let site = Site::mounted(Mounting::NestService).await;
    list_open_and_answer_under_the_mount(&site).await;

    // `nest_service` also routes the prefix with its slash: the sign-in keeps it, and the
    // list's links from there lead to the same pages.
    let id = site.approval("desk").await;
    let link = format!("{}?token={}", site.root, site.token);
    let response = http().get(&link).send().await.expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&link, &response), site.root);
    let cookie = set_cookie(response.headers());
    let cookie = cookie.split(';').next().expect("a cookie pair");
    let (status, list) = get(cookie, &site.root).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_links_stay_under(&site, &site.root, &list);
    let card = link_to(&list, "Buy desk?").expect("a card for the request");
    assert_eq!(resolve(&site.root, &card), site.request_url(&id));
}

#[tokio::test]
async fn the_page_works_nested_under_a_prefix_written_with_its_slash() {
    let site = Site::mounted(Mounting::NestSlash).await;
    list_open_and_answer_under_the_mount(&site).await;
}

#[tokio::test]
async fn at_the_root_the_links_and_redirects_are_the_same_as_ever() {
    let site = Site::mounted(Mounting::Root).await;
    list_open_and_answer_under_the_mount(&site).await;
}

#[tokio::test]
async fn a_quorum_counts_each_person_once_and_a_delegate_answers_for_the_giver() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.payment(900).await;
    let (ada, bob, carol) = (as_person("ada"), as_person("bob"), as_person("carol"));

    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(
        page.contains("1 of 2 approvals (ada@example.com)"),
        "{page}"
    );
    assert!(
        page.contains("You count toward this request already"),
        "{page}"
    );
    assert!(
        !page.contains("_forgery"),
        "no second form for Ada:\n{page}"
    );
    let (_, page) = get(&bob, &site.request_url(&id)).await;
    assert!(page.contains("you see it read-only"), "{page}");

    // Carol hands her rights to Bob on her delegation page.
    let delegate_url = format!("{}delegate", site.root);
    let (status, form) = get(&carol, &delegate_url).await;
    assert_eq!(status, StatusCode::OK, "{form}");
    let token = forgery_token(&form);
    // A week from today: within the 30 days a delegation may last.
    let day = time::OffsetDateTime::now_utc().date() + time::Duration::days(7);
    let until = day.to_string();
    let until = until.as_str();
    let ends = format!("until {}T00:00:00", day.next_day().unwrap());
    let host = site
        .root
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let given = http()
        .post(&delegate_url)
        .header(header::COOKIE, &carol)
        .header(header::ORIGIN, format!("http://{host}"))
        .form(&[
            ("_forgery", token.as_str()),
            ("to", "bob@example.com"),
            ("until", until),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(given.status(), StatusCode::SEE_OTHER);
    let (_, held) = get(&bob, &delegate_url).await;
    assert!(
        held.contains(&format!("Carol (carol@example.com) {ends}")),
        "{held}"
    );
    // A form with another person's token changes nothing.
    let forged = http()
        .post(&delegate_url)
        .header(header::COOKIE, &bob)
        .header(header::ORIGIN, format!("http://{host}"))
        .form(&[
            ("_forgery", token.as_str()),
            ("to", "dave@example.com"),
            ("until", until),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);

    // Bob now answers for Carol: the second approval, recorded as his for her.
    let response = answer(&site, &bob, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.state, ParkedState::Answered);
    assert_eq!(
        parked.answered_by.as_deref(),
        Some("bob@example.com for carol@example.com")
    );
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(
        page.contains("by bob@example.com for carol@example.com"),
        "{page}"
    );
}
