//! One request's page: its details and the controls to answer it (`GET r/{id}`), and the
//! answer it receives (`POST r/{id}`), followed by the decision and the run's outcome.
//!
//! A run waiting on several requests shows them all together on the page of any of them,
//! each with its own controls (its own forms, posting to its own `r/{id}`), and the run's
//! outcome once every one is answered and a worker resumed it.

pub(super) mod refusal;
mod render;

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form as Body;

use super::answer::{self, capitalized, Shape, Submission};
use super::auth::Viewer;
use super::forgery::{self};
use super::form::{Entered, FieldErrors};
use super::mount::Mount;
use super::summary::segment;
use super::Shared;
use crate::error::InboxError;
use crate::notify::deliver::Delivery;
use crate::policy::delegation::Delegation;
use crate::policy::people::key_of;
use crate::policy::people::Person;
use crate::records::audit::AuditEntry;
use crate::records::parked::Parked;
use refusal::{
    already, closed, counted_already, cross_site, expired, forged, not_allowed, store_failed,
    unknown, unknown_action, unreadable,
};
use render::render;

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
