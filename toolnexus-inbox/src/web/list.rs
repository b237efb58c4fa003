//! The inbox's front page: the requests waiting for an answer, oldest first, a page at a
//! time, and below the first page the ones decided lately with what came of each. A plain
//! GET form filters the waiting ones by agent and kind, or to those the signed-in person
//! may answer (`?agent=…&kind=…&mine=1`).

use std::sync::Arc;

use axum::extract::{Extension, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};

use super::auth::{SignOut, Viewer};
use super::forgery::TOKEN_FIELD;
use super::mount::Mount;
use super::page::{self, layout};
use super::request::refusal::store_failed;
use super::summary;
use super::Shared;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::people::Person;
use crate::records::parked::{Parked, WaitingPage};

/// Seconds between reloads while a decided run's outcome is still to come. The list holds
/// no form, so reloading it never loses anything typed.
const REFRESH_SECONDS: u32 = 3;

/// What the list is narrowed to.
#[derive(Debug, Default, PartialEq)]
struct Filter {
    agent: Option<String>,
    kind: Option<String>,
    mine: bool,
}

impl Filter {
    fn of(query: Option<&str>) -> Filter {
        let pairs = query
            .and_then(|q| {
                axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
                    &format!("/?{q}").parse().ok()?,
                )
                .ok()
            })
            .map(|q| q.0)
            .unwrap_or_default();
        let value = |name: &str| {
            pairs
                .iter()
                .find(|(k, v)| k == name && !v.is_empty())
                .map(|(_, v)| v.clone())
        };
        Filter {
            agent: value("agent"),
            kind: value("kind"),
            mine: value("mine").is_some(),
        }
    }

    fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    fn admits(&self, inbox: &Inbox, parked: &Parked, viewer: &Person) -> bool {
        self.agent.as_ref().is_none_or(|a| *a == parked.agent)
            && self
                .kind
                .as_ref()
                .is_none_or(|k| k == parked.request.kind.as_str())
            && (!self.mine || inbox.may_answer(parked, Some(viewer)))
    }

    /// The filter as a query prefix (`agent=…&kind=…&mine=1&`), kept by the paging links.
    fn query(&self) -> String {
        let mut out = String::new();
        for (name, value) in [("agent", &self.agent), ("kind", &self.kind)] {
            if let Some(value) = value {
                out.push_str(&format!("{name}={}&", summary::segment(value)));
            }
        }
        if self.mine {
            out.push_str("mine=1&");
        }
        out
    }
}

/// One page of the waiting requests `filter` admits, and the agents and kinds among all
/// of them, for the filter's choices. Unfiltered, the store pages; filtered, the list is
/// narrowed here, as "may answer" is the inbox's rule rather than a column.
async fn waiting(
    shared: &Shared,
    filter: &Filter,
    viewer: &Person,
    from: usize,
) -> Result<(WaitingPage, Vec<String>, Vec<String>), InboxError> {
    let all = shared.inbox.waiting().await?;
    let mut agents: Vec<String> = all.iter().map(|p| p.agent.clone()).collect();
    let mut kinds: Vec<String> = all
        .iter()
        .map(|p| p.request.kind.as_str().to_owned())
        .collect();
    for list in [&mut agents, &mut kinds] {
        list.sort();
        list.dedup();
    }
    let page = if filter.is_empty() {
        shared.inbox.waiting_page(from, shared.page_size).await?
    } else {
        let admitted: Vec<Parked> = all
            .into_iter()
            .filter(|p| filter.admits(&shared.inbox, p, viewer))
            .collect();
        let total = admitted.len();
        WaitingPage::of(
            admitted
                .into_iter()
                .skip(from)
                .take(shared.page_size)
                .collect(),
            from,
            total,
        )
    };
    Ok((page, agents, kinds))
}

pub(crate) async fn show(
    State(shared): State<Arc<Shared>>,
    Extension(Viewer(viewer)): Extension<Viewer>,
    Extension(mount): Extension<Mount>,
    sign_out: Option<Extension<SignOut>>,
    RawQuery(query): RawQuery,
) -> Response {
    let filter = Filter::of(query.as_deref());
    let Some(from) = first_shown(query.as_deref()) else {
        return page::message(
            StatusCode::BAD_REQUEST,
            &mount,
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
    let ((waiting, agents, kinds), recent) =
        match tokio::try_join!(waiting(&shared, &filter, &viewer, from), recent) {
            Ok(both) => both,
            Err(e) => return store_failed(&e, &mount),
        };
    let now = shared.inbox.now_time();
    // A request's call (its tool and arguments) is shown only to who may answer it.
    let may = |parked: &Parked| shared.inbox.may_answer(parked, Some(&viewer));
    let refresh = recent
        .iter()
        .any(summary::in_flight)
        .then_some(REFRESH_SECONDS);
    let body = html! {
        @if let Some(Extension(SignOut(token))) = &sign_out {
            form.sign-out method="post" action=(mount.to("sign-out")) {
                input type="hidden" name=(TOKEN_FIELD) value=(token);
                button type="submit" { "Sign out" }
            }
        }
        (filters(&filter, &agents, &kinds, &mount))
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
        @for parked in &waiting.runs { (summary::card(parked, may(parked), now, &mount)) }
        (pages(&waiting, shared.page_size, &filter.query(), &mount))
        @if !recent.is_empty() {
            h2 { "Recently answered" }
            @for parked in &recent { (summary::card(parked, may(parked), now, &mount)) }
        }
    };
    let title = format!("{} waiting", waiting.total);
    (
        StatusCode::OK,
        layout(&mount, &title, refresh, Some(&viewer), body),
    )
        .into_response()
}

/// The filter form: a GET back to the list, so it needs no script and no anti-forgery
/// token (it changes nothing).
fn filters(filter: &Filter, agents: &[String], kinds: &[String], mount: &Mount) -> Markup {
    let choice = |name: &str, label: &str, options: &[String], chosen: &Option<String>| {
        html! {
            label for={ "filter-" (name) } { (label) }
            select id={ "filter-" (name) } name=(name) {
                option value="" { "any" }
                @for option in options {
                    option value=(option) selected[chosen.as_deref() == Some(option.as_str())] { (option) }
                }
            }
        }
    };
    html! {
        form.filters method="get" action=(mount.list()) {
            (choice("agent", "Agent", agents, &filter.agent))
            (choice("kind", "Kind", kinds, &filter.kind))
            label.mine {
                input type="checkbox" name="mine" value="1" checked[filter.mine];
                " Waiting for me"
            }
            button type="submit" { "Filter" }
            @if !filter.is_empty() { " " a href=(mount.list()) { "Show all" } }
        }
    }
}

/// Links to the next page of waiting requests and back to the first; plain links, so
/// paging needs no script.
fn pages(waiting: &WaitingPage, size: usize, filter: &str, mount: &Mount) -> Markup {
    let next = waiting.offset.saturating_add(size);
    let first = if filter.is_empty() {
        mount.list()
    } else {
        format!("{}?{}", mount.list(), filter.trim_end_matches('&'))
    };
    html! {
        @if waiting.offset > 0 || next < waiting.total {
            nav.pages {
                @if waiting.offset > 0 { a href=(first) { "First page" } }
                @if next < waiting.total {
                    a href={ "?" (filter) "from=" (next) } {
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
