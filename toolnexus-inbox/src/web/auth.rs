//! Who may see the inbox: a person the host or a trusted proxy signs in, or else the holder
//! of an access token (the inbox's own, or a person's own), given once in the link
//! (`?token=`) or on every request as `Authorization: Bearer`. A link's token is traded for
//! a session cookie (see [`session`](super::session)).
//!
//! The trade is a redirect to the same page without `token`, the rest of the query kept,
//! so the token does not stay in the address bar, the history or a bookmark. The redirect
//! is relative to the page, so it stays under whatever prefix the router is mounted at.
//!
//! A browser signed in as one person that opens another person's link is asked before its
//! session changes hands: a page with a button that posts back to the link, bound to the
//! session it replaces by an anti-forgery token. Someone else's link, sent to a person
//! signed in already, never silently makes them answer as someone else.

use std::sync::Arc;

use axum::extract::{FromRequest, Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;

use super::forgery::{self, TOKEN_FIELD};
use super::gate::Gate;
use super::mount::Mount;
use super::page;
use super::session::{self, cookie, Jar, Session};
#[cfg(feature = "oidc")]
use super::sign_in::{flow, Found};
use crate::policy::identify::bearer;
use crate::policy::people::Person;

/// The largest sign-in form read: it holds one anti-forgery token.
const FORM_LIMIT: usize = 4 * 1024;

/// The person signed in on a request, put in its extensions for the handlers.
#[derive(Debug, Clone)]
pub(crate) struct Viewer(pub(crate) Person);

/// The anti-forgery token of the sign-out form, for a person signed in through the
/// provider: put in the request's extensions beside the [`Viewer`].
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "oidc"), allow(dead_code))]
pub(crate) struct SignOut(pub(crate) String);

/// Lets a request through as the person the host or a trusted proxy names, else when it
/// carries a token or a running session (as that token's holder); a link's token is traded
/// for a session first. Answers 401 otherwise.
pub(crate) async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let by_host = match &gate.identify {
        Some(host) => host.identify(&parts).await,
        None => None,
    };
    let signed_in = by_host.or_else(|| gate.proxy.person(&parts));
    if let Some(person) = signed_in {
        parts.extensions.insert(Viewer(person));
        return next.run(Request::from_parts(parts, body)).await;
    }
    // A session opened through the provider, unless a link's token asks for another.
    #[cfg(feature = "oidc")]
    let mut gone = false;
    #[cfg(feature = "oidc")]
    if let Some(sign_in) = &gate.sign_in {
        match flow::signed_in(&gate, sign_in, &parts.headers) {
            Found::Valid { person, key } if link_token(&parts.uri).is_none() => {
                let token = flow::sign_out_token(&gate, &key);
                parts.extensions.insert(Viewer(person));
                parts.extensions.insert(SignOut(token));
                return next.run(Request::from_parts(parts, body)).await;
            }
            Found::Gone => gone = true,
            Found::Valid { .. } | Found::None => {}
        }
    }
    // `mount::locate` runs first and always says; the router's own view is the fallback.
    let mount = parts
        .extensions
        .get::<Mount>()
        .cloned()
        .unwrap_or_else(|| Mount::at(parts.uri.path()));
    let jar = gate.jar(&parts, &mount);
    let held = cookie(&parts.headers, &gate.cookie).map(str::to_owned);
    let session = session::check(
        &gate.keys,
        held.as_deref(),
        gate.inbox.now(),
        gate.lifetime_ms(),
    );
    if let Some(token) = link_token(&parts.uri) {
        let Some(key) = gate.find(&token) else {
            return refused("The token in this link is not this inbox's token.", &mount);
        };
        let link = Link {
            key,
            session,
            held: held.as_deref().unwrap_or_default(),
            target: without_token(&mount, parts.uri.query()),
        };
        return sign_in(&gate, Request::from_parts(parts, body), link, &jar, &mount).await;
    }
    let person = match (bearer(&parts.headers), session) {
        (Some(token), _) => match gate.find(token) {
            Some(key) => gate.keys[key].1.clone(),
            None => return refused("The bearer token is not this inbox's token.", &mount),
        },
        (None, Session::Valid(key)) => gate.keys[key].1.clone(),
        // Nobody signed in, where the page offers the provider's sign-in: it does.
        #[cfg(feature = "oidc")]
        (None, session) if gate.sign_in.is_some() => {
            let ended = gone || session == Session::Ended;
            let why = ended.then_some("Your session has ended.");
            let mut response = flow::prompt(&gate, &parts, &mount, why, gone);
            if matches!(session, Session::Ended | Session::Invalid)
                && let Some(dropped) = jar.clear()
            {
                response.headers_mut().append(header::SET_COOKIE, dropped);
            }
            return response;
        }
        (None, Session::None) => return refused("This inbox needs its access token.", &mount),
        (None, Session::Ended) => {
            return dropped("Your session has ended.", &mount, &jar);
        }
        (None, Session::Invalid) => {
            return dropped(
                "Your session is not valid for this inbox any more.",
                &mount,
                &jar,
            );
        }
    };
    parts.extensions.insert(Viewer(person));
    next.run(Request::from_parts(parts, body)).await
}

/// A link's token, checked: whose it is, the session the browser holds (and its cookie as
/// sent), and the page to land on without the token.
struct Link<'a> {
    key: usize,
    session: Session,
    held: &'a str,
    target: String,
}

/// Trades a link's token for a session: at once when nobody is signed in in this browser
/// (or the link's holder is), else after the person confirms the switch.
async fn sign_in(
    gate: &Gate,
    request: Request,
    link: Link<'_>,
    jar: &Jar<'_>,
    mount: &Mount,
) -> Response {
    let next = &gate.keys[link.key].1;
    let current = match link.session {
        Session::Valid(key) => gate.keys.get(key).map(|(_, p)| p),
        _ => None,
    };
    let switching = current.filter(|p| p.id != next.id);
    let subject = session::switch_subject(link.held, &next.id);
    match *request.method() {
        Method::GET | Method::HEAD => match switching {
            Some(current) => {
                let forgery = gate.forms.answer_token(&subject);
                session::prompt(mount, current, next, &forgery, &link.target)
            }
            None => signed_in(gate, link.key, &link.target, jar),
        },
        // Only the switch's own form posts to a link; nothing else is done with a token in
        // the URL, so a cross-site form cannot sign a browser in as someone else.
        Method::POST => {
            if !forgery::same_origin(request.headers()) {
                return not_switched(mount);
            }
            let (parts, body) = request.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, FORM_LIMIT).await else {
                return not_switched(mount);
            };
            let request = Request::from_parts(parts, axum::body::Body::from(bytes));
            let fields = Form::<Vec<(String, String)>>::from_request(request, &())
                .await
                .map(|Form(fields)| fields)
                .unwrap_or_default();
            let confirmed = fields
                .iter()
                .find(|(k, _)| k == TOKEN_FIELD)
                .is_some_and(|(_, token)| gate.forms.is_answer_token(&subject, token));
            if confirmed {
                signed_in(gate, link.key, &link.target, jar)
            } else {
                not_switched(mount)
            }
        }
        _ => page::message(
            StatusCode::METHOD_NOT_ALLOWED,
            mount,
            "Not a sign-in",
            "A link's token signs in when the link is opened; nothing else is done with it.",
        ),
    }
}

/// The redirect to `target` with a new session for the holder of key `key`.
fn signed_in(gate: &Gate, key: usize, target: &str, jar: &Jar<'_>) -> Response {
    let mut response = Redirect::to(target).into_response();
    if let Some(cookie) = gate.open_session(key, jar) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

fn not_switched(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Not signed in",
        "This sign-in did not come from the inbox's own page (its anti-forgery token is \
         missing or wrong, or the browser's session changed since), so nothing changed. \
         Open the link again.",
    )
}

/// The `token` of a URL's query, decoded.
fn link_token(uri: &Uri) -> Option<String> {
    let query = uri.query()?;
    query.split('&').find_map(|pair| match decoded(pair) {
        Some((key, value)) if key == "token" => Some(value),
        _ => None,
    })
}

/// One `key=value` pair of a query, decoded as a form decodes it.
fn decoded(pair: &str) -> Option<(String, String)> {
    let url = reqwest::Url::parse(&format!("http://page.invalid/?{pair}")).ok()?;
    let (key, value) = url.query_pairs().next()?;
    Some((key.into_owned(), value.into_owned()))
}

/// The reference to the page being served with its query but for `token` (every copy of
/// it), the other pairs as they were written.
fn without_token(mount: &Mount, query: Option<&str>) -> String {
    let kept: Vec<&str> = query
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| decoded(pair).is_none_or(|(key, _)| key != "token"))
        .collect();
    if kept.is_empty() {
        mount.here()
    } else {
        format!("{}?{}", mount.here(), kept.join("&"))
    }
}

fn refused(why: &str, mount: &Mount) -> Response {
    let mut response = page::message(
        StatusCode::UNAUTHORIZED,
        mount,
        "Sign-in needed",
        &format!(
            "{why} Open the inbox with the link it printed when it started (it ends in ?token=…)."
        ),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"toolnexus inbox\""),
    );
    response
}

/// The refusal of a session that ended or was never this page's, which the browser then
/// drops.
fn dropped(why: &str, mount: &Mount, jar: &Jar<'_>) -> Response {
    let mut response = refused(why, mount);
    if let Some(gone) = jar.clear() {
        response.headers_mut().append(header::SET_COOKIE, gone);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    #[test]
    fn the_redirect_keeps_the_page_and_drops_the_query() {
        assert_eq!(Mount::at("/").here(), "./");
        assert_eq!(Mount::at("/r/abc").here(), "abc");
        assert_eq!(Mount::of("/inbox/", "/").here(), "./");
        assert_eq!(Mount::of("/inbox", "/").here(), "inbox");
        assert_eq!(Mount::of("/inbox/r/abc", "/r/abc").here(), "abc");
        assert_eq!(Mount::at("/").list(), "./");
        assert_eq!(Mount::at("/r/abc").list(), "../");
    }

    #[test]
    fn the_token_leaves_the_query_and_the_rest_stays() {
        let list = Mount::at("/");
        let uri: Uri = "/?agent=shop&token=abc&kind=approval".parse().unwrap();
        assert_eq!(link_token(&uri).as_deref(), Some("abc"));
        assert_eq!(
            without_token(&list, uri.query()),
            "./?agent=shop&kind=approval"
        );
        assert_eq!(without_token(&list, Some("token=a&%74oken=b")), "./");
        assert_eq!(
            link_token(&"/?%74oken=a%2Bb".parse().unwrap()).as_deref(),
            Some("a+b")
        );
        assert_eq!(without_token(&Mount::at("/r/x"), Some("token=a")), "x");
        assert_eq!(link_token(&"/?tokens=a".parse().unwrap()), None);
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; inbox_x=2"));
        headers.append(header::COOKIE, HeaderValue::from_static("b=3"));
        assert_eq!(cookie(&headers, "inbox_x"), Some("2"));
        assert_eq!(cookie(&headers, "b"), Some("3"));
        assert_eq!(cookie(&headers, "inbox"), None);
    }

    #[test]
    fn bearer_is_case_insensitive_in_its_scheme() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer tok"),
        );
        assert_eq!(bearer(&headers), Some("tok"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic tok"));
        assert_eq!(bearer(&headers), None);
    }
}
