//! The inbox's front page: the requests waiting for an answer, oldest first, and below
//! them the ones decided lately with what came of each.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::html;

use super::page::layout;
use super::request::store_failed;
use super::summary;
use super::Shared;

/// Seconds between reloads while a decided run's outcome is still to come. The list holds
/// no form, so reloading it never loses anything typed.
const REFRESH_SECONDS: u32 = 3;

pub(crate) async fn show(State(shared): State<Arc<Shared>>) -> Response {
    let (waiting, recent) =
        match tokio::try_join!(shared.inbox.waiting(), shared.inbox.recent(shared.recent)) {
            Ok(both) => both,
            Err(e) => return store_failed(&e),
        };
    let now = SystemTime::now();
    let refresh = recent
        .iter()
        .any(summary::in_flight)
        .then_some(REFRESH_SECONDS);
    let body = html! {
        h1 {
            @match waiting.len() {
                0 => "Nothing waiting",
                1 => "1 request waiting",
                n => { (n) " requests waiting" }
            }
        }
        @if waiting.is_empty() {
            p.empty { "No run is waiting for an answer." }
        }
        @for parked in &waiting { (summary::card(parked, now)) }
        @if !recent.is_empty() {
            h2 { "Recently answered" }
            @for parked in &recent { (summary::card(parked, now)) }
        }
    };
    let title = format!("{} waiting", waiting.len());
    (StatusCode::OK, layout("", &title, refresh, body)).into_response()
}
