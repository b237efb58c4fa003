//! The pages a submit is refused with, one for each reason, each saying what happened and
//! what the person may do next. They are kept apart from the handlers so that the path of
//! an answer taken reads straight through, and each refusal's wording is found in one place.

use std::time::SystemTime;

use axum::http::StatusCode;
use axum::response::Response;

use super::{forgery_subject, View};
use crate::error::InboxError;
use crate::records::parked::Parked;
use crate::records::state::ParkedState;
use crate::web::forgery::TOKEN_FIELD;
use crate::web::mount::Mount;
use crate::web::page::{self};

pub(super) fn not_allowed(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Not yours to answer",
        "This request names who may answer it, and you are not one of them, so your \
         answer was not recorded.",
    )
}

pub(super) fn counted_already(mount: &Mount) -> Response {
    page::message(
        StatusCode::CONFLICT,
        mount,
        "Already counted",
        "You already count toward this request's approvals (you approved it, or it was \
         approved for you), and one person approves once. It waits for someone else.",
    )
}

pub(super) fn cross_site(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Answer refused",
        "This answer came from another site, so it was not recorded. Answer from the \
         inbox page itself.",
    )
}

pub(super) fn unreadable(mount: &Mount) -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        mount,
        "Unreadable answer",
        "The answer was not a form this page sent. Open the request and answer again.",
    )
}

/// The refusal of a post without request `id`'s anti-forgery token.
pub(super) fn forged(view: &View, id: &str, fields: &[(String, String)]) -> Option<Response> {
    let token = fields
        .iter()
        .find(|(k, _)| k == TOKEN_FIELD)
        .map(|(_, v)| v);
    let subject = forgery_subject(id, view.viewer);
    if token.is_some_and(|t| view.shared.secret.is_answer_token(&subject, t)) {
        return None;
    }
    Some(page::message(
        StatusCode::FORBIDDEN,
        view.mount,
        "Answer refused",
        "This answer did not come from this request's page (its anti-forgery token is \
         missing or wrong), so it was not recorded. Open the request and answer again.",
    ))
}

pub(super) fn unknown_action(mount: &Mount) -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        mount,
        "Unknown answer",
        "That is not one of the answers this request takes. Open it and use its buttons.",
    )
}

/// The refusal for a request that can no longer be answered, checked before the answer is
/// read so the person learns that first (the store checks again, atomically).
pub(super) fn closed(parked: &Parked, now: SystemTime, mount: &Mount) -> Option<Response> {
    if parked.state != ParkedState::Waiting {
        return Some(already(parked.state, mount));
    }
    parked
        .expires_at
        .filter(|at| *at <= now)
        .map(|_| expired(mount))
}

pub(super) fn already(state: ParkedState, mount: &Mount) -> Response {
    page::message(
        StatusCode::CONFLICT,
        mount,
        "Already answered",
        &format!(
            "This request was answered before your answer arrived (its run is now {state}); \
             the first answer counts. Open the request to see it."
        ),
    )
}

pub(super) fn expired(mount: &Mount) -> Response {
    page::message(
        StatusCode::GONE,
        mount,
        "Request expired",
        "This request expired before it was answered; it is declined as expired and the \
         run is told so.",
    )
}

pub(super) fn unknown(mount: &Mount) -> Response {
    page::message(
        StatusCode::NOT_FOUND,
        mount,
        "No such request",
        "No run is parked on this request. It may belong to another inbox, or the link is \
         mistyped.",
    )
}

/// The store could not be read or written; the reason goes to the log, not the page.
pub(crate) fn store_failed(error: &InboxError, mount: &Mount) -> Response {
    tracing::error!(%error, "the inbox page could not reach its store");
    let (status, text) = match error {
        InboxError::Database(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "The inbox database cannot be reached right now. Try again in a moment.",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The inbox could not read this request. Its details are in the server's log.",
        ),
    };
    page::message(status, mount, "Inbox unavailable", text)
}
