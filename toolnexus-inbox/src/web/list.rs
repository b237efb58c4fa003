//! The inbox's front page: the requests waiting for an answer, oldest first, a page at a
//! time, and below the first page the ones decided lately with what came of each.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};

use super::page::{self, layout};
use super::request::store_failed;
use super::summary;
use super::Shared;
use crate::WaitingPage;

/// Seconds between reloads while a decided run's outcome is still to come. The list holds
/// no form, so reloading it never loses anything typed.
const REFRESH_SECONDS: u32 = 3;

pub(crate) async fn show(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let Some(from) = first_shown(query.as_deref()) else {
        return page::message(
            StatusCode::BAD_REQUEST,
            "",
            "No such page",
            "`from` must be a whole number: the position of the first request shown.",
        );
    };
    let recent = async {
        // The recently decided runs sit below the first page only.
        if from == 0 {
            shared.inbox.recent(shared.recent).await
        } else {
            Ok(Vec::new())
        }
    };
    let (waiting, recent) =
        match tokio::try_join!(shared.inbox.waiting_page(from, shared.page_size), recent) {
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
            @match waiting.total {
                0 => "Nothing waiting",
                1 => "1 request waiting",
                n => { (n) " requests waiting" }
            }
        }
        @if waiting.total == 0 {
            p.empty { "No run is waiting for an answer." }
        } @else if waiting.runs.is_empty() {
            p.empty { "No more waiting requests." }
        } @else if waiting.total > waiting.runs.len() {
            p.meta {
                "Showing " (from + 1) "–" (from + waiting.runs.len()) " of " (waiting.total)
                ", oldest first."
            }
        }
        @for parked in &waiting.runs { (summary::card(parked, now)) }
        (pages(&waiting, shared.page_size))
        @if !recent.is_empty() {
            h2 { "Recently answered" }
            @for parked in &recent { (summary::card(parked, now)) }
        }
    };
    let title = format!("{} waiting", waiting.total);
    (StatusCode::OK, layout("", &title, refresh, body)).into_response()
}

/// Links to the next page of waiting requests and back to the first; plain links, so
/// paging needs no script.
fn pages(waiting: &WaitingPage, size: usize) -> Markup {
    let next = waiting.offset.saturating_add(size);
    html! {
        @if waiting.offset > 0 || next < waiting.total {
            nav.pages {
                @if waiting.offset > 0 { a href="./" { "First page" } }
                @if next < waiting.total {
                    a href={ "?from=" (next) } {
                        "More: " (next + 1) "–" (next.saturating_add(size).min(waiting.total))
                        " of " (waiting.total)
                    }
                }
            }
        }
    }
}

/// The `from` of the list's query (0 when absent); `None` when it is not a number.
fn first_shown(query: Option<&str>) -> Option<usize> {
    let Some(query) = query else {
        return Some(0);
    };
    match query.split('&').find_map(|pair| pair.strip_prefix("from=")) {
        Some(value) => value.parse().ok(),
        None => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::first_shown;

    #[test]
    fn the_first_shown_request_comes_from_the_query() {
        assert_eq!(first_shown(None), Some(0));
        assert_eq!(first_shown(Some("from=50")), Some(50));
        assert_eq!(first_shown(Some("x=1&from=100")), Some(100));
        assert_eq!(first_shown(Some("x=1")), Some(0));
        assert_eq!(first_shown(Some("from=-1")), None);
        assert_eq!(first_shown(Some("from=ten")), None);
    }
}
