//! Who is told: the webhooks an inbox notifies, what each is told of, and each checked and
//! ready to deliver to.

use std::fmt;
use std::time::Duration;

use super::sign::Key;
use crate::error::InboxError;

/// What a webhook is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Event {
    /// A run parked: its requests wait for people (`run.parked`).
    Parked,
    /// A person answered a request (`request.answered`).
    Answered,
    /// A person approved a request that needs several people, and it waits for more
    /// (`request.approved`); its data's `approvals` say how many and who.
    Approved,
    /// A request expired and its default applied (`request.expired`).
    Expired,
    /// A request waited too long and was escalated (`request.escalated`).
    Escalated,
    /// A worker resumed a run: it finished, halted again, or failed for good
    /// (`run.resumed`).
    Resumed,
}

impl Event {
    /// The notification's `type`, as its body and [`Delivery::event`](crate::Delivery::event) carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Parked => "run.parked",
            Event::Answered => "request.answered",
            Event::Approved => "request.approved",
            Event::Expired => "request.expired",
            Event::Escalated => "request.escalated",
            Event::Resumed => "run.resumed",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Event> {
        [
            Event::Parked,
            Event::Answered,
            Event::Approved,
            Event::Expired,
            Event::Escalated,
            Event::Resumed,
        ]
        .into_iter()
        .find(|e| e.as_str() == text)
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URL the inbox notifies ([`InboxBuilder::webhook`](crate::InboxBuilder::webhook)).
///
/// The body is JSON: `type` (an [`Event`]), `timestamp`, `data` (the agent, the run, the
/// request or requests with a `link` to their page) and a Slack-compatible `text`, so a
/// Slack incoming-webhook URL works as it is. With a [`secret`](Self::secret) each
/// attempt is signed as the Standard Webhooks specification says (`webhook-id`,
/// `webhook-timestamp`, `webhook-signature`); the id stays the same across retries, so a
/// receiver that keeps the ids it has seen handles each notification once.
///
/// ```
/// use std::time::Duration;
/// use toolnexus_inbox::{Event, Webhook};
///
/// let ops = Webhook::new("https://hooks.example.com/inbox")
///     .name("ops")
///     .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
///     .events([Event::Parked, Event::Escalated, Event::Resumed])
///     .retries(8, Duration::from_secs(5));
/// // The URL and the secret are credentials: never shown.
/// assert_eq!(
///     format!("{ops:?}"),
///     r#"Webhook { name: "ops", signed: true, events: [Parked, Escalated, Resumed], max_attempts: 8, .. }"#
/// );
/// ```
#[derive(Clone)]
pub struct Webhook {
    name: String,
    url: String,
    secret: Option<String>,
    events: Vec<Event>,
    max_attempts: u32,
    backoff: Duration,
    timeout: Duration,
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A Slack webhook URL is its own credential, and the secret is one.
        f.debug_struct("Webhook")
            .field("name", &self.name)
            .field("signed", &self.secret.is_some())
            .field("events", &self.events)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl Webhook {
    /// A webhook posting to `url`, told when a run parks and when a request is escalated,
    /// unsigned, tried 10 times from 5 seconds apart, doubling up to an hour.
    pub fn new(url: impl Into<String>) -> Webhook {
        let url = url.into();
        Webhook {
            name: default_name(&url),
            url,
            secret: None,
            events: vec![Event::Parked, Event::Escalated],
            max_attempts: 10,
            backoff: Duration::from_secs(5),
            timeout: Duration::from_secs(10),
        }
    }

    /// The name deliveries are kept under (default: the URL's scheme, host and port). Each
    /// webhook of an inbox needs its own; every process delivering the outbox must know
    /// the webhook by the same name.
    pub fn name(mut self, name: impl Into<String>) -> Webhook {
        self.name = name.into();
        self
    }

    /// Signs each attempt with `secret`, a Standard Webhooks secret (`whsec_` and the
    /// base64 of its key). A malformed one fails [`open`](crate::InboxBuilder::open).
    pub fn secret(mut self, secret: impl Into<String>) -> Webhook {
        self.secret = Some(secret.into());
        self
    }

    /// What it is told of (default [`Event::Parked`] and [`Event::Escalated`]). An
    /// escalation that names this webhook reaches it whatever its events.
    pub fn events(mut self, events: impl IntoIterator<Item = Event>) -> Webhook {
        self.events = events.into_iter().collect();
        self
    }

    /// How many attempts a notification gets before it is given up, and the wait after the
    /// first failure, doubled after each further one up to an hour.
    pub fn retries(mut self, max_attempts: u32, first_backoff: Duration) -> Webhook {
        self.max_attempts = max_attempts.max(1);
        self.backoff = first_backoff;
        self
    }

    /// How long one attempt may take (default 10 s); longer is a failed attempt.
    pub fn timeout(mut self, timeout: Duration) -> Webhook {
        self.timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// The webhook checked and ready to deliver to.
    pub(crate) fn target(&self) -> Result<Target, InboxError> {
        let name = self.name.clone();
        let invalid = |reason: String| InboxError::InvalidWebhook {
            name: name.clone(),
            reason,
        };
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| invalid(format!("its URL does not parse: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("its URL must be http or https".to_owned()));
        }
        let key = self
            .secret
            .as_deref()
            .map(Key::parse)
            .transpose()
            .map_err(invalid)?;
        Ok(Target {
            name,
            url,
            key,
            events: self.events.clone(),
            max_attempts: self.max_attempts,
            backoff: self.backoff,
            timeout: self.timeout,
        })
    }
}

/// `scheme://host:port` of a URL: enough to tell webhooks apart, and free of the path and
/// query a Slack URL keeps its credential in.
fn default_name(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "webhook".to_owned();
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // user:password@host keeps its credential before the `@`.
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}")
}

/// A webhook ready to deliver to.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) name: String,
    pub(crate) url: reqwest::Url,
    pub(crate) key: Option<Key>,
    pub(crate) events: Vec<Event>,
    pub(crate) max_attempts: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Duration,
}

/// The webhooks of an inbox, checked, with the client that delivers to them.
#[derive(Clone)]
pub(crate) struct Targets {
    pub(crate) all: Vec<Target>,
    pub(crate) http: reqwest::Client,
}

impl Targets {
    pub(crate) fn of(webhooks: &[Webhook]) -> Result<Targets, InboxError> {
        let mut all: Vec<Target> = Vec::new();
        for webhook in webhooks {
            let target = webhook.target()?;
            if all.iter().any(|t| t.name == target.name) {
                return Err(InboxError::InvalidWebhook {
                    name: target.name,
                    reason: "another webhook has the same name; name them apart with \
                             Webhook::name"
                        .to_owned(),
                });
            }
            all.push(target);
        }
        toolnexus::__private::ensure_crypto_provider();
        let http = reqwest::Client::builder()
            .user_agent(concat!("toolnexus-inbox/", env!("CARGO_PKG_VERSION")))
            // A webhook that redirects elsewhere is not followed: the signature was made
            // for the URL configured.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| InboxError::InvalidWebhook {
                name: "(client)".to_owned(),
                reason: e.without_url().to_string(),
            })?;
        Ok(Targets { all, http })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_name_keeps_no_credential() {
        assert_eq!(
            default_name("https://hooks.slack.com/services/T0/B0/secret"),
            "https://hooks.slack.com"
        );
        assert_eq!(
            default_name("http://127.0.0.1:9/hook?key=k"),
            "http://127.0.0.1:9"
        );
        assert_eq!(
            default_name("https://user:pw@example.com/x"),
            "https://example.com"
        );
        assert_eq!(default_name("not a url"), "webhook");
    }

    #[test]
    fn a_webhook_with_a_bad_url_or_secret_names_itself_not_its_secret() {
        let bad = Webhook::new("ftp://example.com/x").target().err().unwrap();
        assert!(bad.to_string().contains("http or https"), "{bad}");
        let bad = Webhook::new("https://example.com/x")
            .secret("whsec_???")
            .target()
            .err()
            .unwrap();
        assert!(bad.to_string().contains("https://example.com"), "{bad}");
        assert!(!bad.to_string().contains("???"), "{bad}");
    }
}
