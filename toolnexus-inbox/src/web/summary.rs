//! How a parked run reads on the page: its kind, prompt and halted call, how old it is and
//! when it expires, the answer it got and what came of it once resumed. Every piece of it
//! is model-influenced text, so it only ever goes through maud's escaping.

use std::time::{Duration, SystemTime};

use maud::{html, Markup};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use toolnexus::{Answer, Refusal, Request, RequestKind, RunStatus};

use super::mount::Mount;
use crate::records::parked::Parked;
use crate::records::state::ParkedState;

/// Arguments longer than this are cut on the list: a page of a thousand requests must stay
/// light, and the request's own page shows them whole.
const ARGS_ON_LIST: usize = 240;

/// The reference to a request's page from the router's root: `r/<id>`, the id
/// percent-encoded so any id makes one path segment.
pub(crate) fn request_path(id: &str) -> String {
    format!("r/{}", segment(id))
}

/// `text` as one URL path segment: unreserved characters kept, every other byte
/// percent-encoded.
pub(crate) fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The kind as a badge; the class only ever takes one of the known kinds.
pub(crate) fn kind_badge(kind: &RequestKind) -> Markup {
    let class = match kind {
        RequestKind::Other(_) => "other",
        known => known.as_str(),
    };
    html! { span class={ "kind " (class) } { (kind.as_str()) } }
}

/// The tool call the run halted in, as `name(args)`; `limit` cuts long arguments.
pub(crate) fn call(parked: &Parked, limit: Option<usize>) -> Option<Markup> {
    let tool = parked.tool.as_deref()?;
    let mut args = parked
        .args
        .as_ref()
        .map(Value::to_string)
        .unwrap_or_default();
    if let Some(limit) = limit
        && let Some((cut, _)) = args.char_indices().nth(limit)
    {
        args.truncate(cut);
        args.push('…');
    }
    Some(html! { code.call { (tool) "(" (args) ")" } })
}

/// The list's card for a run: kind, prompt (linking to its page), call (when `call_shown`:
/// only to who may answer it), times, and for a decided run its answer and outcome. The
/// prompt's link covers the whole card (see the stylesheet), and a waiting run also shows
/// an "Answer" action, so what to click is plain.
pub(crate) fn card(parked: &Parked, call_shown: bool, now: SystemTime, mount: &Mount) -> Markup {
    let path = mount.to(&request_path(parked.id()));
    let waiting = parked.state == ParkedState::Waiting;
    html! {
        article.card {
            div.head {
                (kind_badge(&parked.request.kind))
                span.prompt { a href=(path) { (parked.request.prompt) } }
                @if waiting {
                    a.action href=(path) { "Answer" }
                } @else {
                    (state_badge(parked.state))
                }
            }
            @if let Some(call) = call(parked, Some(ARGS_ON_LIST)).filter(|_| call_shown) { (call) }
            p.meta {
                (times(parked, now))
                @if parked.requests.len() > 1 {
                    " · one of " (parked.requests.len()) " requests of its run"
                }
            }
            @if parked.state != ParkedState::Waiting {
                (decision(parked, now))
                (outcome(parked, mount))
            }
        }
    }
}

pub(crate) fn state_badge(state: ParkedState) -> Markup {
    html! { span class={ "state " (state.as_str()) } { (state.as_str()) } }
}

/// "parked 3 min ago · expires in 1 h · agent purchasing", with exact times on hover.
pub(crate) fn times(parked: &Parked, now: SystemTime) -> Markup {
    html! {
        span title=(exact(parked.parked_at)) { "parked " (ago(parked.parked_at, now)) }
        @if let Some(at) = parked.expires_at {
            " · "
            span title=(exact(at)) {
                @if at <= now { "expired " (ago(at, now)) } @else { "expires " (ahead(at, now)) }
            }
        }
        " · agent " (parked.agent)
    }
}

/// The answer a decided run got, who gave it and when.
pub(crate) fn decision(parked: &Parked, now: SystemTime) -> Markup {
    let Some(answer) = &parked.answer else {
        return html! {};
    };
    html! {
        p.meta {
            @if answer.ok {
                (verdict(&parked.request, answer))
            } @else {
                span.verdict.refused { (verdict(&parked.request, answer)) }
            }
            @if let Some(by) = &parked.answered_by { " by " (by) }
            @if let Some(at) = parked.answered_at {
                " " span title=(exact(at)) { (ago(at, now)) }
            }
        }
    }
}

/// The banner of a decided request's page: an approval or a filled-in form in green, a
/// refusal (declined, cancelled, expired) in a box and words of its own, so the two are
/// never mistaken for each other.
pub(crate) fn decided_banner(parked: &Parked) -> Markup {
    let sign_in = parked.request.kind == RequestKind::Authorization;
    match &parked.answer {
        Some(answer) if !answer.ok => {
            let text = match (sign_in, answer.refusal()) {
                (_, Some(Refusal::Expired)) => "Expired: declined without an answer.",
                (true, _) => "Sign-in cancelled.",
                _ => "Declined.",
            };
            html! { p.banner.refused { (text) } }
        }
        Some(answer) => {
            let text = match (sign_in, &answer.data, &answer.args) {
                (true, _, _) => "Signed in.",
                (_, _, Some(_)) => "Approved with edited arguments.",
                (_, Some(_), _) => "Answered.",
                _ => "Approved.",
            };
            html! { p.banner { (text) } }
        }
        None => html! { p.banner { "Answered." } },
    }
}

/// "approved", "declined: “too expensive”", "cancelled", "answered city Lyon · express true".
fn verdict(request: &Request, answer: &Answer) -> Markup {
    // A known code names itself; without one, a sign-in is cancelled and anything else
    // declined. What the person typed follows in quotes: the note, or a reason that is no
    // code (as older answers and other ports wrote their words).
    let fallback = if request.kind == RequestKind::Authorization {
        Refusal::Cancelled
    } else {
        Refusal::Declined
    };
    let (code, said) = match answer.refusal() {
        Some(Refusal::Other(text)) => (&fallback, Some(text.trim()).filter(|t| !t.is_empty())),
        Some(code) => (code, None),
        None => (&fallback, None),
    };
    let said = answer.note().or(said);
    html! {
        @if answer.ok {
            @match (&answer.args, &answer.data) {
                (Some(Value::Object(args)), _) => { "approved with " (named(args)) },
                (_, Some(Value::Object(fields))) => { "answered " (named(fields)) },
                (_, Some(data)) => { "answered " (plain(data)) },
                _ => "approved",
            }
        } @else {
            (code.as_str())
            @if let Some(said) = said { ": “" (said) "”" }
        }
    }
}

/// "city Lyon · express true".
fn named(fields: &serde_json::Map<String, Value>) -> Markup {
    html! {
        @for (i, (name, value)) in fields.iter().enumerate() {
            @if i > 0 { " · " }
            span.field-name { (name) } " " (plain(value))
        }
    }
}

/// A JSON value as a person reads it: strings without their quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What came of a decided run: the resumed run's final text, that it halted again, its
/// error, or that a worker has yet to resume it.
pub(crate) fn outcome(parked: &Parked, mount: &Mount) -> Markup {
    match (parked.run_state, &parked.result) {
        (ParkedState::Done, Some(result)) => match result.status {
            RunStatus::Done => html! { p.outcome.ok { (result.text) } },
            RunStatus::Pending => html! {
                p.outcome {
                    "The run asked again: "
                    @match &parked.next {
                        Some(next) => a href=(mount.to(&request_path(next))) {
                            (result.pending.as_ref().map_or("a new request", |r| r.prompt.as_str()))
                        },
                        None => (result.pending.as_ref().map_or("a new request", |r| r.prompt.as_str())),
                    }
                }
            },
            RunStatus::Incomplete => html! {
                p.outcome.error { "The run stopped at its turn limit. " (result.text) }
            },
            // A status added to the core later: show what the run said.
            _ => html! { p.outcome { (result.text) } },
        },
        (ParkedState::Failed, _) => html! {
            p.outcome.error {
                "The run failed"
                @if let Some(error) = &parked.last_error { ": " (error) }
            }
        },
        (ParkedState::Answered | ParkedState::Running, _) => html! {
            p.outcome.meta {
                @if parked.run_state == ParkedState::Running {
                    "A worker is resuming the run…"
                } @else {
                    "Waiting for a worker to resume the run…"
                }
                @if let Some(error) = &parked.last_error {
                    " (attempt " (parked.attempts) " failed: " (error) ")"
                }
            }
        },
        (ParkedState::Waiting, _) if parked.state != ParkedState::Waiting => html! {
            p.outcome.meta { "The run goes on once its other requests are answered." }
        },
        _ => html! {},
    }
}

/// Whether the run's outcome is still to come, so its page should refresh itself.
pub(crate) fn in_flight(parked: &Parked) -> bool {
    matches!(
        parked.run_state,
        ParkedState::Answered | ParkedState::Running
    )
}

pub(crate) fn ago(at: SystemTime, now: SystemTime) -> String {
    format!("{} ago", span(now.duration_since(at).unwrap_or_default()))
}

fn ahead(at: SystemTime, now: SystemTime) -> String {
    format!("in {}", span(at.duration_since(now).unwrap_or_default()))
}

/// A duration as people say it: the largest whole unit.
fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=86_399 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

pub(crate) fn exact(at: SystemTime) -> String {
    OffsetDateTime::from(at)
        .format(&Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_one_path_segment() {
        assert_eq!(request_path("3f2a-9c"), "r/3f2a-9c");
        assert_eq!(request_path("a/b?c#d e"), "r/a%2Fb%3Fc%23d%20e");
        assert_eq!(segment("é"), "%C3%A9");
    }

    #[test]
    fn durations_read_in_their_largest_unit() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(ago(now - Duration::from_secs(5), now), "5 s ago");
        assert_eq!(ago(now - Duration::from_secs(150), now), "2 min ago");
        assert_eq!(ahead(now + Duration::from_secs(7300), now), "in 2 h");
        assert_eq!(ago(now - Duration::from_secs(200_000), now), "2 d ago");
    }

    #[test]
    fn unknown_kinds_never_reach_the_class_attribute() {
        let badge = kind_badge(&RequestKind::from("x\" onclick=\"y")).into_string();
        assert!(badge.starts_with(r#"<span class="kind other">"#), "{badge}");
        assert!(badge.contains("x&quot; onclick=&quot;y"), "{badge}");
    }
}
