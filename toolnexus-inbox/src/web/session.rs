//! The page's session: the cookie a link's token is traded for.
//!
//! Its value says who is signed in and until when (`<who, hex>.<until, ms>.<signature>`),
//! signed with the access token that person signed in with, so it holds no token, cannot
//! be stretched or handed to someone else, and ends when that token is taken away. The
//! end is read from the inbox's clock; the cookie's `Max-Age` only tells the browser to
//! drop it then too.
//!
//! The cookie is `HttpOnly` (no script reads it), `SameSite=Lax` and scoped to the page's
//! mount (`Path`). Lax rather than Strict: a link from a notification, a chat or a mail is
//! a cross-site navigation, on which a Strict cookie stays home, so the page would ask for
//! the token again and could not tell who the browser is already signed in as. Lax sends it
//! on such a top-level GET, which changes nothing, and never on a cross-site POST, so an
//! answer still has to come from the page itself (the anti-forgery token and the origin
//! check stand behind that too). It is `Secure` whenever the page is served over https (see
//! [`Jar`]).

use std::time::Duration;

use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::html;

use super::forgery::TOKEN_FIELD;
use super::mount::Mount;
use super::page::layout;
use super::secret::{hex, unhex, Secret};
use crate::policy::people::Person;

/// How long a session lasts unless the page says otherwise
/// ([`InboxPageBuilder::session_lifetime`](super::InboxPageBuilder::session_lifetime)):
/// a working day, so a person signs in once a day and a lost laptop's session does not
/// outlive it by much.
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// What a request's session cookie amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Session {
    /// No cookie.
    None,
    /// A session of the holder of key `0` (an index into the page's keys), still running.
    Valid(usize),
    /// A genuine session that has ended.
    Ended,
    /// Not a session this page signed, or one longer than the page grants.
    Invalid,
}

/// The cookie value of a session of `who`, signed with `secret`, until `until_ms`.
pub(crate) fn value(secret: &Secret, who: &str, until_ms: i64) -> Option<String> {
    let signature = secret.sign_session(who, until_ms)?;
    Some(format!("{}.{until_ms}.{signature}", hex(who.as_bytes())))
}

/// Reads cookie `value` against the page's `keys`, at `now_ms`, for sessions that last at
/// most `lifetime_ms`.
pub(crate) fn check(
    keys: &[(std::sync::Arc<Secret>, Person)],
    value: Option<&str>,
    now_ms: i64,
    lifetime_ms: i64,
) -> Session {
    let Some(value) = value else {
        return Session::None;
    };
    let mut parts = value.split('.');
    let (Some(who), Some(until), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Session::Invalid;
    };
    let who = unhex(who).and_then(|bytes| String::from_utf8(bytes).ok());
    let (Some(who), Ok(until)) = (who, until.parse::<i64>()) else {
        return Session::Invalid;
    };
    let key = keys
        .iter()
        .position(|(secret, person)| person.id == who && secret.is_session(&who, until, signature));
    match key {
        None => Session::Invalid,
        Some(_) if until <= now_ms => Session::Ended,
        // Signed for longer than the page grants now (its lifetime was shortened since).
        Some(_) if until > now_ms.saturating_add(lifetime_ms) => Session::Invalid,
        Some(key) => Session::Valid(key),
    }
}

/// Where and how the session cookie is set: its name, the path of the page's mount, and
/// whether it is `Secure`: when the inbox's page URL
/// ([`InboxBuilder::page_url`](crate::InboxBuilder::page_url)) is `https`, when the request
/// address says `https` (HTTP/2 sends its scheme; HTTP/1.1 does not), or when a trusted proxy says so in `X-Forwarded-Proto`
/// ([`ProxyHeader::Proto`](super::ProxyHeader::Proto)). Over plain http a `Secure`
/// cookie would never come back, so the page served on loopback keeps working.
pub(crate) struct Jar<'a> {
    pub(crate) name: &'a str,
    pub(crate) path: String,
    pub(crate) secure: bool,
    pub(crate) lifetime: Duration,
}

impl Jar<'_> {
    /// The `Set-Cookie` of a session with `value`.
    pub(crate) fn set(&self, value: &str) -> Option<HeaderValue> {
        self.header(value, self.lifetime.as_secs())
    }

    /// The `Set-Cookie` that drops the session.
    pub(crate) fn clear(&self) -> Option<HeaderValue> {
        self.header("", 0)
    }

    fn header(&self, value: &str, max_age: u64) -> Option<HeaderValue> {
        let secure = if self.secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}={value}; HttpOnly; SameSite=Lax; Path={}; Max-Age={max_age}{secure}",
            self.name, self.path
        ))
        .ok()
    }
}

/// The cookie's `Path`: the path of the page's URL when the inbox knows it (a proxy in
/// front may serve the page under a prefix the router never sees), else the prefix the
/// router is mounted at; `/` at the root, or when the path would not make a plain
/// attribute.
pub(crate) fn path(page_url: Option<&reqwest::Url>, mount: &Mount) -> String {
    let path = page_url.map_or(mount.prefix(), |url| url.path());
    let path = path.trim_end_matches('/');
    let plain = path.starts_with('/')
        && path
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b';' && b != b',');
    if plain {
        path.to_owned()
    } else {
        "/".to_owned()
    }
}

/// The page that asks a browser signed in as `current` whether to become `next`, whose
/// link it followed: a button that posts back to the link (with `forgery`, bound to the
/// session it replaces), or a way on as `current` to `stay`.
pub(crate) fn prompt(
    mount: &Mount,
    current: &Person,
    next: &Person,
    forgery: &str,
    stay: &str,
) -> Response {
    let title = format!("Sign in as {}?", next.display_name());
    let body = html! {
        section.notice.switch {
            h1 { (title) }
            p {
                "This browser is signed in to the inbox as " strong { (current.display_name()) }
                ". The link you opened signs in as " strong { (next.display_name()) } "."
            }
            p { "Answers are recorded as the person signed in, so the inbox asks before it changes who that is." }
            form.answer method="post" {
                input type="hidden" name=(TOKEN_FIELD) value=(forgery);
                div.buttons {
                    button.primary type="submit" { "Sign in as " (next.display_name()) }
                }
            }
            p { a href=(stay) { "Stay signed in as " (current.display_name()) } }
        }
    };
    (
        StatusCode::OK,
        layout(mount, &title, None, Some(current), body),
    )
        .into_response()
}

/// What the anti-forgery token of a switch to `next` is bound to: the session cookie the
/// browser holds now (`current`, empty without one), so a form made for another browser,
/// or for a session since replaced, does not switch this one.
pub(crate) fn switch_subject(current: &str, next: &str) -> String {
    format!("session:{}:{current}{next}", current.len())
}

/// The value of cookie `name`, from any `Cookie` header.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn keys() -> Vec<(Arc<Secret>, Person)> {
        vec![
            (
                Arc::new(Secret::new("t-ada")),
                Person::new("ada@example.com"),
            ),
            (
                Arc::new(Secret::new("t-bob")),
                Person::new("bob@example.com"),
            ),
        ]
    }

    #[test]
    fn a_session_names_its_holder_until_it_ends() {
        let keys = keys();
        let bob = value(&keys[1].0, "bob@example.com", 5_000).unwrap();
        assert_eq!(check(&keys, Some(&bob), 1_000, 10_000), Session::Valid(1));
        assert_eq!(check(&keys, Some(&bob), 5_000, 10_000), Session::Ended);
        // Signed for longer than the page grants now.
        assert_eq!(check(&keys, Some(&bob), 1_000, 1_000), Session::Invalid);
        assert_eq!(check(&keys, None, 1_000, 10_000), Session::None);
    }

    #[test]
    fn a_session_cannot_be_stretched_or_handed_over() {
        let keys = keys();
        let bob = value(&keys[1].0, "bob@example.com", 5_000).unwrap();
        let stretched = bob.replace(".5000.", ".9000.");
        assert_eq!(
            check(&keys, Some(&stretched), 1_000, 10_000),
            Session::Invalid
        );
        let (_, rest) = bob.split_once('.').unwrap();
        let as_ada = format!("{}.{rest}", hex(b"ada@example.com"));
        assert_eq!(check(&keys, Some(&as_ada), 1_000, 10_000), Session::Invalid);
        // Bob's own signature under Ada's key is no session either.
        let signed_by_ada = value(&keys[0].0, "bob@example.com", 5_000).unwrap();
        assert_eq!(
            check(&keys, Some(&signed_by_ada), 1_000, 10_000),
            Session::Invalid
        );
        for junk in ["", "x", "a.b.c", "zz.1.00", "6164.1.00.00"] {
            assert_eq!(
                check(&keys, Some(junk), 1_000, 10_000),
                Session::Invalid,
                "{junk}"
            );
        }
    }

    #[test]
    fn the_cookie_says_how_it_is_kept() {
        let jar = Jar {
            name: "toolnexus_inbox_ab",
            path: "/inbox".to_owned(),
            secure: true,
            lifetime: Duration::from_secs(60),
        };
        let set = jar.set("v").unwrap();
        assert_eq!(
            set,
            "toolnexus_inbox_ab=v; HttpOnly; SameSite=Lax; Path=/inbox; Max-Age=60; Secure"
        );
        let cleared = jar.clear().unwrap();
        assert!(
            cleared.to_str().unwrap().contains("Max-Age=0"),
            "{cleared:?}"
        );
    }

    #[test]
    fn the_path_is_the_mount_or_the_page_url() {
        assert_eq!(path(None, &Mount::at("/r/x")), "/");
        assert_eq!(path(None, &Mount::of("/inbox/r/x", "/r/x")), "/inbox");
        let url = reqwest::Url::parse("https://example.com/team/inbox/").unwrap();
        assert_eq!(path(Some(&url), &Mount::at("/")), "/team/inbox");
        let odd = reqwest::Url::parse("https://example.com/a;b/").unwrap();
        assert_eq!(path(Some(&odd), &Mount::at("/")), "/");
    }
}
