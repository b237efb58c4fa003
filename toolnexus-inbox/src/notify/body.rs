//! What a notification says: its JSON body, and the Slack-compatible `text` in it.
//!
//! A prompt is the model's words, so the text escapes what Slack reads as markup (`&`, `<`,
//! `>`): a hostile prompt cannot make a link or mention anyone. An answer is told with the
//! receipts the inbox signed for it, never those it was given with: a receiver must never
//! take a caller's for the inbox's.

use serde_json::{json, Value};
use toolnexus::{Answer, Request, RequestKind};

use crate::clock::rfc3339;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::lifecycle::vote::Approvals;
use crate::policy::people::{listed, Responder, Source};

use super::webhook::Event;

/// A notification about to be written to the outbox.
pub(crate) struct Notice {
    pub(crate) event: Event,
    pub(crate) run: String,
    /// The request it is about, for an event of one request.
    pub(crate) request: Option<String>,
    data: Value,
    text: String,
}

/// How a resumed run ended, for its notification.
pub(crate) enum Outcome<'a> {
    Done(&'a str),
    HaltedAgain(&'a str),
    Failed(&'a str),
}

impl Notice {
    pub(crate) fn body(&self, now_ms: i64) -> Result<String, InboxError> {
        let body = json!({
            "type": self.event.as_str(),
            "timestamp": rfc3339(now_ms),
            "data": self.data,
            "text": self.text,
        });
        serde_json::to_string(&body).map_err(|e| InboxError::Corrupt {
            id: self.run.clone(),
            reason: format!("the notification cannot be written as JSON: {e}"),
        })
    }
}

/// `text` with Slack's three control characters escaped.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Inbox {
    /// The page of request `id`, when the inbox knows where its page is served.
    pub(crate) fn link(&self, id: &str) -> Option<String> {
        let mut url = self.inner.page_url.clone()?;
        url.path_segments_mut()
            .ok()?
            .pop_if_empty()
            .push("r")
            .push(id);
        Some(url.into())
    }

    /// " <link|Open it in the inbox>", or nothing without a page.
    fn slack_link(&self, id: &str) -> String {
        self.link(id)
            .map(|url| format!(" <{url}|Open it in the inbox>"))
            .unwrap_or_default()
    }

    fn request_json(&self, agent: &str, request: &Request, tool: Option<(&str, &Value)>) -> Value {
        json!({
            "id": request.id,
            "kind": request.kind.as_str(),
            "prompt": request.prompt,
            "link": self.link(&request.id),
            "tool": tool.map(|(name, args)| json!({"name": name, "args": args})),
            "responders": self.inner.rules.responders(request, agent, &[]),
            "expiresAt": request.expires_at,
        })
    }

    /// A notice of `event` about run `run` (and `request`, for an event of one request):
    /// its data is the agent, the run, the request and `more`.
    fn notice(
        &self,
        event: Event,
        run: &str,
        agent: &str,
        request: Option<&Request>,
        more: Value,
        text: String,
    ) -> Notice {
        let mut data = serde_json::Map::new();
        data.insert("agent".to_owned(), json!(agent));
        data.insert("run".to_owned(), json!(run));
        if let Some(request) = request {
            data.insert(
                "request".to_owned(),
                self.request_json(agent, request, None),
            );
        }
        if let Value::Object(more) = more {
            data.extend(more);
        }
        Notice {
            event,
            run: run.to_owned(),
            request: request.map(|r| r.id.clone()),
            data: Value::Object(data),
            text,
        }
    }

    pub(crate) fn notice_parked(
        &self,
        run: &str,
        agent: &str,
        requests: &[(&Request, Option<(&str, &Value)>)],
    ) -> Notice {
        let prompts: Vec<String> = requests.iter().map(|(r, _)| escaped(&r.prompt)).collect();
        let asks = match prompts.as_slice() {
            [one] => one.clone(),
            many => format!("{} requests: {}", many.len(), many.join("; ")),
        };
        let more = json!({
            "link": self.link(run),
            "requests": requests
                .iter()
                .map(|(r, tool)| self.request_json(agent, r, *tool))
                .collect::<Vec<_>>(),
        });
        let text = format!(
            "*{}* waits for a person: {asks}{}",
            escaped(agent),
            self.slack_link(run)
        );
        self.notice(Event::Parked, run, agent, None, more, text)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn notice_answered(
        &self,
        run: &str,
        agent: &str,
        request: &Request,
        answer: &Answer,
        source: &Source,
        by: Option<&str>,
        approvals: &Approvals,
    ) -> Notice {
        let decision = match (answer.ok, &request.kind) {
            (false, _) => "declined",
            (true, RequestKind::Approval) => "approved",
            (true, _) => "answered",
        };
        let (event, text) = match source {
            Source::Expiry => (
                Event::Expired,
                format!(
                    "Nobody answered in time, so it was {decision} by default: {}",
                    escaped(&request.prompt)
                ),
            ),
            Source::Person(_) => (
                Event::Answered,
                format!(
                    "{} {decision}: {}",
                    escaped(by.unwrap_or("someone")),
                    escaped(&request.prompt)
                ),
            ),
        };
        // `answer` is as the inbox resolved it: the receipts it carries are those the
        // inbox signed for its votes, never a caller's.
        let mut more = json!({"answer": answer, "answeredBy": by});
        if approvals.quorum > 1 {
            more["approvals"] = json!(approvals);
        }
        self.notice(event, run, agent, Some(request), more, text)
    }

    /// One approval toward a quorum: the request still waits for more.
    pub(crate) fn notice_approved(
        &self,
        run: &str,
        agent: &str,
        request: &Request,
        by: Option<&str>,
        approvals: &Approvals,
    ) -> Notice {
        let text = format!(
            "{} approved, {approvals}: {}{}",
            escaped(by.unwrap_or("someone")),
            escaped(&request.prompt),
            self.slack_link(&request.id)
        );
        let more = json!({"approvals": approvals, "approvedBy": by});
        self.notice(Event::Approved, run, agent, Some(request), more, text)
    }

    pub(crate) fn notice_escalated(
        &self,
        run: &str,
        agent: &str,
        request: &Request,
        waited_ms: i64,
        responders: &[Responder],
    ) -> Notice {
        let minutes = waited_ms / 60_000;
        let widened = if responders.is_empty() {
            String::new()
        } else {
            format!(" Now also for {}.", escaped(&listed(responders)))
        };
        let more = json!({"waitedSeconds": waited_ms / 1000, "escalatedTo": responders});
        let text = format!(
            "Still waiting after {minutes} min: {}{widened}{}",
            escaped(&request.prompt),
            self.slack_link(&request.id)
        );
        self.notice(Event::Escalated, run, agent, Some(request), more, text)
    }

    pub(crate) fn notice_resumed(&self, run: &str, agent: &str, outcome: Outcome<'_>) -> Notice {
        let (name, mut more, text) = match outcome {
            Outcome::Done(text) => (
                "done",
                json!({"text": text}),
                format!("*{}* finished: {}", escaped(agent), escaped(text)),
            ),
            Outcome::HaltedAgain(next) => (
                "halted",
                json!({"next": next, "link": self.link(next)}),
                format!("*{}* asks again{}", escaped(agent), self.slack_link(next)),
            ),
            Outcome::Failed(error) => (
                "failed",
                json!({"error": error}),
                format!("*{}* failed: {}", escaped(agent), escaped(error)),
            ),
        };
        more["outcome"] = json!(name);
        self.notice(Event::Resumed, run, agent, None, more, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_markup_in_a_prompt_is_escaped() {
        assert_eq!(
            escaped("<!channel> pay <https://evil|here> & go"),
            "&lt;!channel&gt; pay &lt;https://evil|here&gt; &amp; go"
        );
    }
}
