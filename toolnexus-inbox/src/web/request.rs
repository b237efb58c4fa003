//! One request's page: its details and the controls to answer it (`GET r/{id}`), and the
//! answer it receives (`POST r/{id}`), followed by the decision and the run's outcome.
//!
//! A run waiting on several requests shows them all together on the page of any of them,
//! each with its own controls (its own forms, posting to its own `r/{id}`), and the run's
//! outcome once every one is answered and a worker resumed it.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::rejection::FormRejection;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form as Body;
use maud::{html, Markup};
use toolnexus::Asks;

use super::answer::{self, capitalized, Action, Shape, Submission, ACTION_FIELD, REASON_FIELD};
use super::auth::Viewer;
use super::forgery::{self, TOKEN_FIELD};
use super::form::{Entered, FieldErrors};
use super::link::web_link;
use super::mount::Mount;
use super::page::{self, layout};
use super::summary::{self, segment};
use super::Shared;
use crate::error::InboxError;
use crate::notify::deliver::Delivery;
use crate::policy::delegation::Delegation;
use crate::policy::people::key_of;
use crate::policy::people::Person;
use crate::records::audit::{AuditEntry, AuditKind};
use crate::records::parked::Parked;
use crate::records::state::{DeliveryState, ParkedState};

/// Seconds between reloads of a page whose outcome is still to come.
const REFRESH_SECONDS: u32 = 2;

/// What a refused submit shows again: the request it was for, the values typed and the
/// messages.
#[derive(Default)]
struct Retry {
    /// The request whose form is shown again; the run's other requests show theirs anew.
    id: Option<String>,
    entered: Option<Entered>,
    errors: FieldErrors,
    /// A problem with the answer as a whole, shown above the form.
    problem: Option<String>,
}

impl Retry {
    fn of(id: &str) -> Retry {
        Retry {
            id: Some(id.to_owned()),
            ..Retry::default()
        }
    }

    /// This retry, if it is for request `id`.
    fn for_request(&self, id: &str) -> Option<&Retry> {
        (self.id.as_deref() == Some(id)).then_some(self)
    }
}

/// What a run's page shows besides its requests: who is looking, the run's trail and who
/// was told of it.
struct View<'a> {
    shared: &'a Shared,
    /// Where the page is, for its links.
    mount: &'a Mount,
    viewer: &'a Person,
    audit: Vec<AuditEntry>,
    deliveries: Vec<Delivery>,
    /// The rights others handed the viewer, in force now.
    held: Vec<Delegation>,
}

impl View<'_> {
    /// Whether the viewer may answer `parked`, themselves or under rights they hold (the
    /// store checks again when they do).
    fn may_answer(&self, parked: &Parked) -> bool {
        let inbox = &self.shared.inbox;
        inbox.may_answer(parked, Some(self.viewer))
            || self
                .held
                .iter()
                .any(|d| inbox.may_answer(parked, Some(&d.from)))
    }

    /// Whether the viewer already counts toward `parked`'s approvals, having approved it
    /// themselves or had it approved for them.
    fn counted(&self, parked: &Parked) -> bool {
        let me = key_of(&self.viewer.id);
        parked.votes.iter().any(|v| {
            [v.by.as_deref(), v.for_whom.as_deref()]
                .into_iter()
                .flatten()
                .any(|id| key_of(id) == me)
        })
    }

    /// Whether the viewer may see `parked`'s call (its tool and arguments) and how it was
    /// voted on — each vote's answer, note and signed receipt: those who may answer it,
    /// and those who did. Everyone else sees what it asks and that it was answered, and by
    /// whom, not the call or the receipts.
    fn sees_votes(&self, parked: &Parked) -> bool {
        let me = key_of(&self.viewer.id);
        self.may_answer(parked)
            || self.counted(parked)
            || parked
                .answered_by
                .as_deref()
                .is_some_and(|by| key_of(by) == me)
    }

    /// The anti-forgery token of the viewer's answer to `id`: bound to both, so one
    /// person's form cannot carry another person's answer.
    fn answer_token(&self, id: &str) -> String {
        self.shared
            .secret
            .answer_token(&forgery_subject(id, self.viewer))
    }
}

fn forgery_subject(id: &str, who: &Person) -> String {
    // The length keeps `("ab", "c")` and `("a", "bc")` apart.
    format!("{}:{id}{}", id.len(), who.id)
}

/// The run of request `id`, its trail, its notifications, and the rights the viewer holds,
/// read together.
async fn load(shared: &Shared, id: &str, viewer: &Person) -> Result<Loaded, InboxError> {
    let (run, audit, deliveries, delegations) = tokio::try_join!(
        shared.inbox.run_requests(id),
        shared.inbox.audit(id),
        shared.inbox.deliveries(id),
        shared.inbox.delegations_of(&viewer.id)
    )?;
    let me = key_of(&viewer.id);
    let held = delegations.into_iter().filter(|d| d.to == me).collect();
    Ok((run, audit, deliveries, held))
}

type Loaded = (Vec<Parked>, Vec<AuditEntry>, Vec<Delivery>, Vec<Delegation>);

pub(crate) async fn show(
    State(shared): State<Arc<Shared>>,
    Extension(Viewer(viewer)): Extension<Viewer>,
    Extension(mount): Extension<Mount>,
    Path(id): Path<String>,
) -> Response {
    match load(&shared, &id, &viewer).await {
        Ok((run, audit, deliveries, held)) if !run.is_empty() => {
            let view = View {
                shared: &shared,
                mount: &mount,
                viewer: &viewer,
                audit,
                deliveries,
                held,
            };
            render(&view, &run, StatusCode::OK, &Retry::default())
        }
        Ok(_) => unknown(&mount),
        Err(e) => store_failed(&e, &mount),
    }
}

/// The answer a request's page posts: checked (origin, form, anti-forgery token, still
/// open), read against the request's shape, then recorded, or the page shown again with
/// what was wrong.
pub(crate) async fn submit(
    State(shared): State<Arc<Shared>>,
    Extension(Viewer(viewer)): Extension<Viewer>,
    Extension(mount): Extension<Mount>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Body<Vec<(String, String)>>, FormRejection>,
) -> Response {
    if !forgery::same_origin(&headers) {
        return cross_site(&mount);
    }
    let Ok(Body(fields)) = body else {
        return unreadable(&mount);
    };
    let (run, audit, deliveries, held) = match load(&shared, &id, &viewer).await {
        Ok(all) => all,
        Err(e) => return store_failed(&e, &mount),
    };
    let Some(parked) = run.iter().find(|p| p.id() == id) else {
        return unknown(&mount);
    };
    let view = View {
        shared: &shared,
        mount: &mount,
        viewer: &viewer,
        audit,
        deliveries,
        held,
    };
    // Before the token check: someone not allowed never had a form, so the token is not
    // what they need to hear about.
    if !view.may_answer(parked) {
        return not_allowed(&mount);
    }
    if let Some(refused) = forged(&view, &id, &fields) {
        return refused;
    }
    if let Some(refused) = closed(parked, view.shared.inbox.now_time(), &mount) {
        return refused;
    }
    let shape = Shape::of(&parked.request);
    let answer = match answer::read(&parked.request, &shape, &fields) {
        Submission::Answer(answer) => answer,
        Submission::Misfit(coerced) => {
            let retry = Retry {
                entered: Some(coerced.entered),
                errors: coerced.errors,
                ..Retry::of(&id)
            };
            return render(&view, &run, StatusCode::UNPROCESSABLE_ENTITY, &retry);
        }
        Submission::UnknownAction => return unknown_action(&mount),
    };
    match shared.inbox.answer_as(answer, viewer.clone()).await {
        // Back to the run's page, where its other requests wait.
        Ok(()) => Redirect::to(&segment(&parked.run)).into_response(),
        Err(e) => not_recorded(&view, &run, parked, &shape, &fields, e),
    }
}

fn not_allowed(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Not yours to answer",
        "This request names who may answer it, and you are not one of them, so your \
         answer was not recorded.",
    )
}

fn counted_already(mount: &Mount) -> Response {
    page::message(
        StatusCode::CONFLICT,
        mount,
        "Already counted",
        "You already count toward this request's approvals (you approved it, or it was \
         approved for you), and one person approves once. It waits for someone else.",
    )
}

fn cross_site(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Answer refused",
        "This answer came from another site, so it was not recorded. Answer from the \
         inbox page itself.",
    )
}

fn unreadable(mount: &Mount) -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        mount,
        "Unreadable answer",
        "The answer was not a form this page sent. Open the request and answer again.",
    )
}

/// The refusal of a post without request `id`'s anti-forgery token.
fn forged(view: &View, id: &str, fields: &[(String, String)]) -> Option<Response> {
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

fn unknown_action(mount: &Mount) -> Response {
    page::message(
        StatusCode::BAD_REQUEST,
        mount,
        "Unknown answer",
        "That is not one of the answers this request takes. Open it and use its buttons.",
    )
}

/// What the person sees when the inbox did not record their answer: the page again with
/// the problem next to its field, or why the request no longer takes answers.
fn not_recorded(
    view: &View,
    run: &[Parked],
    parked: &Parked,
    shape: &Shape,
    fields: &[(String, String)],
    error: InboxError,
) -> Response {
    match error {
        InboxError::InvalidAnswer { field, reason } => {
            let form = shape.form();
            let mut retry = Retry {
                entered: Some(form.map_or_else(Entered::new, |f| f.coerce(fields).entered)),
                ..Retry::of(parked.id())
            };
            match field
                .filter(|f| form.is_some_and(|form| form.fields.iter().any(|x| x.name == *f)))
            {
                Some(field) => {
                    retry.errors.insert(field, capitalized(&reason));
                }
                None => retry.problem = Some(capitalized(&reason)),
            }
            render(view, run, StatusCode::UNPROCESSABLE_ENTITY, &retry)
        }
        InboxError::NotAllowed { .. } => not_allowed(view.mount),
        InboxError::AlreadyCounted { .. } => counted_already(view.mount),
        InboxError::NotWaiting { state, .. } | InboxError::Finished { state, .. } => {
            already(state, view.mount)
        }
        InboxError::Expired(_) => expired(view.mount),
        InboxError::UnknownRequest(_) => unknown(view.mount),
        e => store_failed(&e, view.mount),
    }
}

/// The refusal for a request that can no longer be answered, checked before the answer is
/// read so the person learns that first (the store checks again, atomically).
fn closed(parked: &Parked, now: SystemTime, mount: &Mount) -> Option<Response> {
    if parked.state != ParkedState::Waiting {
        return Some(already(parked.state, mount));
    }
    parked
        .expires_at
        .filter(|at| *at <= now)
        .map(|_| expired(mount))
}

fn already(state: ParkedState, mount: &Mount) -> Response {
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

fn expired(mount: &Mount) -> Response {
    page::message(
        StatusCode::GONE,
        mount,
        "Request expired",
        "This request expired before it was answered; it is declined as expired and the \
         run is told so.",
    )
}

fn unknown(mount: &Mount) -> Response {
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

/// The page of a run: its only request as the page itself, or its several requests one
/// below the other, then the run's outcome.
fn render(view: &View, run: &[Parked], status: StatusCode, retry: &Retry) -> Response {
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
