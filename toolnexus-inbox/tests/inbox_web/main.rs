//! The inbox page over real HTTP, without a browser: every status a request can get, the
//! session and security headers, and the answers it records.

#[path = "../common/mod.rs"]
mod common;

mod answering;
mod example;
mod mount;
mod people;
mod queue;
mod quorum;
mod session;

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

/// The `href` of the first link whose text starts with `text`.
fn link_to(page: &str, text: &str) -> Option<String> {
    let at = page.find(&format!("\">{text}"))?;
    let start = page[..at].rfind("href=\"")? + "href=\"".len();
    Some(page[start..at].replace("&amp;", "&"))
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

/// The test's sign-in cookie for `who` (see `page::people`).
fn as_person(who: &str) -> String {
    format!("{}={who}", page::PERSON_COOKIE)
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
