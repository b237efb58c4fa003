//! `GET /delegate` and `POST /delegate`: a signed-in person hands their own answering rights
//! to someone else until a date, sees what they gave and were given, and takes back what
//! they gave. Only one's own rights: the giver is always the viewer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::rejection::FormRejection;
use axum::extract::{Extension, Form as Body, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup};
use time::macros::format_description;

use super::auth::Viewer;
use super::mount::Mount;
use super::{forgery, page, Shared, TOKEN_HOLDER};
use crate::clock::{from_ms, rfc3339, to_ms};
use crate::error::InboxError;
use crate::policy::delegation::Delegation;
use crate::policy::people::Person;

use super::forgery::TOKEN_FIELD;

/// What the viewer's delegation form is bound to: them, and this page.
fn subject(viewer: &Person) -> String {
    format!("delegate:{}", viewer.id)
}

pub(crate) async fn show(
    State(shared): State<Arc<Shared>>,
    Extension(Viewer(viewer)): Extension<Viewer>,
    Extension(mount): Extension<Mount>,
) -> Response {
    match shared.inbox.delegations_of(&viewer.id).await {
        Ok(all) => render(&shared, &mount, &viewer, &all, None, StatusCode::OK),
        Err(e) => super::request::refusal::store_failed(&e, &mount),
    }
}

pub(crate) async fn submit(
    State(shared): State<Arc<Shared>>,
    Extension(Viewer(viewer)): Extension<Viewer>,
    Extension(mount): Extension<Mount>,
    headers: HeaderMap,
    body: Result<Body<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let refused = |text: &str| page::message(StatusCode::FORBIDDEN, &mount, "Refused", text);
    if !forgery::same_origin(&headers) {
        return refused("This came from another site, so nothing changed.");
    }
    let Ok(Body(fields)) = body else {
        return refused("This was not a form this page sent, so nothing changed.");
    };
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
    };
    let token_ok =
        field(TOKEN_FIELD).is_some_and(|t| shared.secret.is_answer_token(&subject(&viewer), t));
    if !token_ok {
        return refused(
            "This did not come from your delegation page (its anti-forgery token is missing \
             or wrong), so nothing changed.",
        );
    }
    if viewer.id == TOKEN_HOLDER {
        return refused("Sign in as yourself to hand your rights over: the token names nobody.");
    }
    let done = match (field("revoke"), field("to"), field("until")) {
        (Some(id), _, _) => shared.inbox.revoke_delegation(id, &viewer.id).await,
        (None, Some(to), Some(until)) => match end_of(until) {
            Some(until) => shared
                .inbox
                .delegate(viewer.clone(), to, until)
                .await
                .map(drop),
            None => Err(InboxError::InvalidDelegation(
                "give the last day as a date, YYYY-MM-DD".to_owned(),
            )),
        },
        _ => Err(InboxError::InvalidDelegation(
            "say who may answer for you, and until when".to_owned(),
        )),
    };
    match done {
        Ok(()) => Redirect::to(&mount.to("delegate")).into_response(),
        Err(e @ (InboxError::InvalidDelegation(_) | InboxError::UnknownDelegation(_))) => {
            let all = shared
                .inbox
                .delegations_of(&viewer.id)
                .await
                .unwrap_or_default();
            let problem = e.to_string();
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            render(&shared, &mount, &viewer, &all, Some(&problem), status)
        }
        Err(e) => super::request::refusal::store_failed(&e, &mount),
    }
}

/// The instant a delegation "until DATE" ends: the end of that day, UTC.
fn end_of(date: &str) -> Option<SystemTime> {
    let day = time::Date::parse(date, format_description!("[year]-[month]-[day]")).ok()?;
    let midnight = day.next_day()?.midnight().assume_utc();
    let seconds = u64::try_from(midnight.unix_timestamp()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
}

fn render(
    shared: &Shared,
    mount: &Mount,
    viewer: &Person,
    all: &[Delegation],
    problem: Option<&str>,
    status: StatusCode,
) -> Response {
    let me = crate::policy::people::key_of(&viewer.id);
    let (given, held): (Vec<&Delegation>, Vec<&Delegation>) = all
        .iter()
        .partition(|d| crate::policy::people::key_of(&d.from.id) == me);
    let token = shared.secret.answer_token(&subject(viewer));
    let tomorrow = from_ms(to_ms(shared.inbox.now_time()) + 24 * 3600 * 1000);
    let body = html! {
        h1 { "Answering while you are away" }
        p { "Hand your answering rights to someone until a date: they may then answer what \
             you may, and each answer is recorded as theirs for you. Toward an approval that \
             needs several people, you and they count as one." }
        @if let Some(problem) = problem { p.banner.problem role="alert" { (problem) } }
        form.answer method="post" action="delegate" novalidate {
            input type="hidden" name=(TOKEN_FIELD) value=(token);
            label { "Who answers for you (their id) " input type="text" name="to" required; }
            label { "Until the end of (UTC) " input type="date" name="until" value=(date_of(tomorrow)) required; }
            div.buttons { button.primary type="submit" { "Hand my rights over" } }
        }
        h2 { "You gave" }
        (listing(&given, true, &token))
        h2 { "You hold" }
        (listing(&held, false, &token))
    };
    let markup = page::layout(mount, "Delegation", None, Some(viewer), body);
    (status, markup).into_response()
}

fn listing(list: &[&Delegation], revocable: bool, token: &str) -> Markup {
    html! {
        @if list.is_empty() { p.meta { "None in force." } }
        ul.delegations {
            @for d in list {
                li {
                    @if revocable { (d.to) } @else { (d.from.display_name()) " (" (d.from.id) ")" }
                    " until " (rfc3339(to_ms(d.until)))
                    @if revocable {
                        form.revoke method="post" action="delegate" {
                            input type="hidden" name=(TOKEN_FIELD) value=(token);
                            input type="hidden" name="revoke" value=(d.id);
                            button type="submit" { "Take back" }
                        }
                    }
                }
            }
        }
    }
}

fn date_of(t: SystemTime) -> String {
    rfc3339(to_ms(t)).chars().take(10).collect()
}
