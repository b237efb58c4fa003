//! Rendering a run's page: its requests one below the other, each with its controls, the
//! votes and receipts, the trail and the notifications, then the outcome. Everything the
//! model influenced is escaped here (maud), so the handlers never build markup themselves.

use std::time::SystemTime;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};
use toolnexus::Asks;

use super::refusal::unknown;
use super::{Retry, View, REFRESH_SECONDS};
use crate::notify::deliver::Delivery;
use crate::records::audit::{AuditEntry, AuditKind};
use crate::records::parked::Parked;
use crate::records::state::{DeliveryState, ParkedState};
use crate::web::answer::{Action, Shape, ACTION_FIELD, REASON_FIELD};
use crate::web::forgery::TOKEN_FIELD;
use crate::web::form::FieldErrors;
use crate::web::link::web_link;
use crate::web::page::layout;
use crate::web::summary::{self, segment};

/// The page of a run: its only request as the page itself, or its several requests one
/// below the other, then the run's outcome.
pub(super) fn render(view: &View, run: &[Parked], status: StatusCode, retry: &Retry) -> Response {
    let now = view.shared.inbox.now_time();
    let Some(first) = run.first() else {
        return unknown(view.mount);
    };
    let open =
        |p: &Parked| p.state == ParkedState::Waiting && p.expires_at.is_none_or(|at| at > now);
    // A page with a form to fill in never reloads itself: it would lose what was typed.
    let refresh = (!run.iter().any(open) && summary::in_flight(first)).then_some(REFRESH_SECONDS);
    let (title, body) = match run {
        [only] => (
            only.request.prompt.clone(),
            html! {
                section.request { (request(view, only, open(only), "", retry, now)) }
                (trail(view, run, now))
                (notifications(&view.deliveries, now))
            },
        ),
        several => {
            let title = format!("{} requests of one run", several.len());
            let body = html! {
                h1 { (title) }
                p.meta {
                    "Each is answered on its own; the run goes on once every one is answered."
                }
                @for (i, parked) in several.iter().enumerate() {
                    @let scope = format!("r{}-", i + 1);
                    section.request.several id={ "request-" (i + 1) } {
                        (request(view, parked, open(parked), &scope, retry, now))
                    }
                }
                @if first.run_state != ParkedState::Waiting {
                    section.request { (summary::outcome(first, view.mount)) }
                }
                (trail(view, run, now))
                (notifications(&view.deliveries, now))
            };
            (title, body)
        }
    };
    (
        status,
        layout(view.mount, &title, refresh, Some(view.viewer), body),
    )
        .into_response()
}

/// The run's audit trail, oldest first: what happened, when, by whom. What a vote said
/// (its answer and the receipts signed for it) is shown only to a viewer who may see the
/// votes of its request.
fn trail(view: &View, run: &[Parked], now: SystemTime) -> Markup {
    let audit = &view.audit;
    let shown = |entry: &'_ AuditEntry| -> Option<String> {
        let vote = matches!(
            entry.kind,
            AuditKind::Answered | AuditKind::Approved | AuditKind::Expired
        );
        let hidden = vote
            && entry.request.as_deref().is_none_or(|id| {
                run.iter()
                    .find(|p| p.id() == id)
                    .is_none_or(|p| !view.sees_votes(p))
            });
        if hidden {
            None
        } else {
            entry.detail.clone()
        }
    };
    html! {
        @if !audit.is_empty() {
            section.audit {
                h2 { "History" }
                ol.audit {
                    @for entry in audit {
                        li {
                            span.when title=(summary::exact(entry.at)) { (summary::ago(entry.at, now)) }
                            " " strong { (entry.kind) }
                            @if let Some(request) = &entry.request { " " code { (request) } }
                            @if let Some(actor) = &entry.actor { " by " (actor) }
                            @if let Some(attempt) = entry.attempt { " (attempt " (attempt) ")" }
                            @if let Some(detail) = shown(entry) { " " code.detail { (detail) } }
                        }
                    }
                }
            }
        }
    }
}

/// Who was told of the run, and how each notification's delivery stands.
fn notifications(deliveries: &[Delivery], now: SystemTime) -> Markup {
    html! {
        @if !deliveries.is_empty() {
            section.audit {
                h2 { "Notifications" }
                ol.audit {
                    @for d in deliveries {
                        li {
                            span.when title=(summary::exact(d.created_at)) { (summary::ago(d.created_at, now)) }
                            " " strong { (d.event.as_str()) } " to " (d.webhook) ": "
                            @match (d.state, d.delivered_at, d.next_attempt_at) {
                                (DeliveryState::Delivered, Some(at), _) => {
                                    "delivered " (summary::ago(at, now))
                                }
                                (DeliveryState::Pending, _, Some(next)) if d.attempts > 0 => {
                                    "retrying, next attempt at " (summary::exact(next))
                                }
                                (DeliveryState::Pending, _, _) => "waiting to be sent",
                                (DeliveryState::Failed, _, _) => "given up",
                                _ => "delivered",
                            }
                            @if d.attempts > 1 || d.state != DeliveryState::Delivered {
                                " (" (d.attempts) " attempt" @if d.attempts != 1 { "s" } ")"
                            }
                            @if let Some(error) = d.last_error.as_ref().filter(|_| d.state != DeliveryState::Delivered) {
                                " " code.detail { (error) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One request of the run: what it asks, then its controls while it is open, else its
/// decision (and, on a page of its own, what came of the run).
fn request(
    view: &View,
    parked: &Parked,
    open: bool,
    scope: &str,
    retry: &Retry,
    now: SystemTime,
) -> Markup {
    let alone = scope.is_empty();
    html! {
        div.head {
            (summary::kind_badge(&parked.request.kind)) " "
            @if parked.state != ParkedState::Waiting { (summary::state_badge(parked.state)) }
        }
        @if alone { h1 { (parked.request.prompt) } } @else { h2.prompt { (parked.request.prompt) } }
        // A sub-agent's question: who asked it, so the person knows which agent's call an
        // answer lets run.
        @if let Some(relay) = parked.request.relay() {
            p.meta.via {
                "Asked by " (relay.agents().join(" > ")) ", for its tool " code { (relay.tool()) }
            }
        }
        @if let Some(call) = summary::call(parked, None).filter(|_| view.sees_votes(parked)) { (call) }
        p.meta { (summary::times(parked, now)) }
        @if let Some(approvals) = parked.approvals() {
            p.approvals { (approvals.to_string()) }
        }
        @if view.sees_votes(parked) { (receipts(parked)) }
        @if open && view.counted(parked) {
            p.banner.readonly {
                "You count toward this request already; it waits for someone else's approval."
            }
        } @else if open && view.may_answer(parked) {
            (controls(view, parked, scope, retry.for_request(parked.id())))
        } @else if open {
            p.banner.readonly {
                "Only " (crate::policy::people::listed(&view.shared.inbox.responders(parked).unwrap_or_default()))
                " may answer this request; you see it read-only."
            }
        } @else if parked.state == ParkedState::Waiting {
            p.banner.problem { "This request expired; it can no longer be answered." }
        } @else {
            (summary::decided_banner(parked))
            (summary::decision(parked, now))
            @if alone { (summary::outcome(parked, view.mount)) }
        }
    }
}

/// The receipts the inbox signed for `parked`'s votes, each as the JSON a verifier checks,
/// folded away: they are for whoever hands them on, not for reading.
fn receipts(parked: &Parked) -> Markup {
    let signed: Vec<(String, String)> = parked
        .votes
        .iter()
        .filter_map(|vote| {
            let receipt = serde_json::to_string(vote.receipt.as_ref()?).ok()?;
            Some((vote.label(), receipt))
        })
        .collect();
    html! {
        @if !signed.is_empty() {
            details.receipts {
                summary { "Signed receipts (" (signed.len()) ")" }
                ul.receipts {
                    @for (by, receipt) in &signed {
                        li { (by) ": " code.detail { (receipt) } }
                    }
                }
            }
        }
    }
}

fn controls(view: &View, parked: &Parked, scope: &str, retry: Option<&Retry>) -> Markup {
    let shape = Shape::of(&parked.request);
    let token = view.answer_token(parked.id());
    let target = segment(parked.id());
    let entered = retry.and_then(|r| r.entered.as_ref());
    let no_errors = FieldErrors::new();
    let errors = retry.map_or(&no_errors, |r| &r.errors);
    let problem = html! {
        @if let Some(problem) = retry.and_then(|r| r.problem.as_ref()) {
            p.banner.problem role="alert" { (problem) }
        }
    };
    // Declining is a form of its own, so Enter in the reason field declines instead of
    // pressing the other form's first button.
    let (primary, edit, refusal) = match &shape {
        Shape::Form(form) => (
            html! {
                (problem)
                (form.render(scope, entered, errors))
                div.buttons { (button(Action::Submit, "primary", "Submit")) }
            },
            None,
            (Action::Decline, "Decline"),
        ),
        Shape::Unrenderable(why) => {
            let note = html! {
                p.banner.problem {
                    "This request's form cannot be shown here (" (why) "); it can only be declined."
                }
            };
            return html! {
                (note) (decline_form(&target, &token, scope, Action::Decline, "Decline"))
            };
        }
        Shape::Authorization => (
            html! {
                (problem)
                div.buttons { (button(Action::SignedIn, "primary", "I have signed in")) }
            },
            None,
            (Action::Cancel, "Cancel"),
        ),
        Shape::Approval => (
            html! { (problem) div.buttons { (button(Action::Approve, "primary", "Approve")) } },
            None,
            (Action::Decline, "Decline"),
        ),
        Shape::Gate(form) => {
            let proposed = match parked.request.asks() {
                Asks::Gate { args, .. } => args,
                _ => None,
            };
            let prefilled = proposed.map(|args| form.prefill(args));
            let edit = html! {
                form.answer.edit method="post" action=(target) novalidate {
                    input type="hidden" name=(TOKEN_FIELD) value=(token);
                    p.meta { "Or change the arguments before the call runs:" }
                    (problem)
                    (form.render(scope, entered.or(prefilled.as_ref()), errors))
                    div.buttons { (button(Action::Edit, "", "Approve with these arguments")) }
                }
            };
            (
                html! { div.buttons { (button(Action::Approve, "primary", "Approve")) } },
                Some(edit),
                (Action::Decline, "Decline"),
            )
        }
    };
    html! {
        @if let Shape::Authorization = shape {
            (sign_in(parked.request.url.as_deref()))
        }
        form.answer method="post" action=(target) novalidate {
            input type="hidden" name=(TOKEN_FIELD) value=(token);
            (primary)
        }
        @if let Some(edit) = edit { (edit) }
        (decline_form(&target, &token, scope, refusal.0, refusal.1))
    }
}

fn sign_in(url: Option<&str>) -> Markup {
    html! {
        @match url {
            Some(url) => @match web_link(url) {
                Some(href) => p.signin {
                    "Sign in at "
                    a href=(href) target="_blank" rel="noopener noreferrer" { (href) }
                    ", then come back here."
                },
                None => p.unsafe {
                    "The sign-in address of this request is not a web address, so it is not "
                    "linked: " code { (url) }
                },
            },
            None => p.meta { "This request names no sign-in address." },
        }
    }
}

fn button(action: Action, class: &str, label: &str) -> Markup {
    html! {
        button type="submit" class=[(!class.is_empty()).then_some(class)] name=(ACTION_FIELD)
            value=(action.value()) { (label) }
    }
}

fn decline_form(target: &str, token: &str, scope: &str, action: Action, label: &str) -> Markup {
    let id = format!("reason-{scope}{}", action.value());
    html! {
        form.decline method="post" action=(target) {
            input type="hidden" name=(TOKEN_FIELD) value=(token);
            label for=(id) { "Reason (optional)" }
            input.reason type="text" id=(id) name=(REASON_FIELD);
            div.buttons { (button(action, "danger", label)) }
        }
    }
}
