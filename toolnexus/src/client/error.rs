//! What can go wrong around a run ([`ClientError`]) and the detail its open-ended variants
//! carry ([`ErrorDetail`]): a message fit to show, and the error underneath when there is one.

use std::fmt;
use std::sync::Arc;

use super::redact::reveals;

type Source = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// The text of a [`ClientError`] and, when there is one, the error that caused it (a
/// `reqwest` or `serde_json` error, a store's error), reachable through
/// [`std::error::Error::source`] on the `ClientError`.
///
/// Two details are equal when their messages are; the message never holds a secret, and a
/// cause whose own text would reveal one is not kept.
///
/// ```
/// use toolnexus::{ClientError, ErrorDetail};
///
/// let e = ClientError::Network(ErrorDetail::from("connection reset"));
/// assert_eq!(e.to_string(), "could not reach the provider: connection reset");
/// ```
#[derive(Clone)]
pub struct ErrorDetail {
    message: String,
    source: Option<Source>,
}

impl ErrorDetail {
    /// A detail with a message and no underlying error.
    pub fn new(message: impl Into<String>) -> Self {
        ErrorDetail {
            message: message.into(),
            source: None,
        }
    }

    /// A detail with the error that caused it.
    pub fn caused_by(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ErrorDetail {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A failure to reach the provider: the error and its causes as one line, without the
    /// URL; the error itself is kept as the cause.
    pub(crate) fn network(e: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        // reqwest's errors name the URL, which may carry credentials.
        let e: Box<dyn std::error::Error + Send + Sync> = match e.downcast::<reqwest::Error>() {
            Ok(e) => Box::new(e.without_url()),
            Err(e) => e,
        };
        let mut text = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        ErrorDetail::caused_by_boxed(text, e)
    }

    /// Like [`caused_by`](Self::caused_by) for an already boxed error.
    pub(crate) fn caused_by_boxed(
        message: impl Into<String>,
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    ) -> Self {
        ErrorDetail {
            message: message.into(),
            source: Some(Arc::from(source)),
        }
    }

    /// Drops the cause when its text holds one of `secrets` (a provider may echo a key
    /// into the value a parser then quotes).
    pub(crate) fn unless_revealing(mut self, secrets: &[String]) -> Self {
        if let Some(source) = &self.source {
            let text = source.to_string();
            if secrets.iter().any(|s| reveals(&text, s)) {
                self.source = None;
            }
        }
        self
    }

    /// The message, as the error's `Display` shows it.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

impl fmt::Display for ErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Only the message: it is what `Display` shows and is known to be free of secrets.
impl fmt::Debug for ErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.message, f)
    }
}

impl PartialEq for ErrorDetail {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for ErrorDetail {}

impl From<String> for ErrorDetail {
    fn from(message: String) -> Self {
        ErrorDetail::new(message)
    }
}

impl From<&str> for ErrorDetail {
    fn from(message: &str) -> Self {
        ErrorDetail::new(message)
    }
}

/// An error from [`LlmClient`](crate::LlmClient): building it, talking to the provider, or
/// resuming a halted run.
///
/// Tool failures are not errors here: they are fed back to the model as error results and
/// the run goes on. No variant ever carries the API key or a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientError {
    /// The provider refused the request as unauthenticated (HTTP 401 or 403) and no API key
    /// was sent: none was given and the environment variable for the provider is unset.
    /// (Local servers — Ollama, vLLM, llama.cpp, LM Studio — need none, so a client is built
    /// without one and sends no `Authorization` header.)
    MissingApiKey {
        /// The environment variable that was consulted.
        var: &'static str,
        /// The HTTP status the provider answered with.
        status: u16,
    },
    /// A builder setting is invalid (model missing, malformed base URL or header, …).
    Config(ErrorDetail),
    /// A run's request settings cannot be used: a [`RunOptions`](crate::RunOptions) value
    /// is invalid, or a [`ToolChoice::Tool`](crate::ToolChoice::Tool) names a tool the
    /// toolkit does not have. Nothing was sent.
    InvalidOptions(ErrorDetail),
    /// The provider answered with a non-success HTTP status (after any retries).
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body, shortened and with secrets removed.
        excerpt: String,
    },
    /// The provider could not be reached or the connection failed (after any retries).
    Network(ErrorDetail),
    /// The provider's reply is not JSON or not the expected shape.
    InvalidResponse(ErrorDetail),
    /// A durable answer does not echo the id of the request it claims to answer.
    AnswerMismatch {
        /// The id of the request passed to the resume.
        request: String,
        /// The id the answer carries.
        answer: String,
    },
    /// The request passed to a resume is not the one the transcript halted on, or an
    /// answer given to [`run_with_answers`](crate::LlmClient::run_with_answers) echoes a
    /// request the transcript does not wait on. Nothing was run.
    RequestMismatch(String),
    /// An answer cannot settle its request: edited arguments that do not fit the tool's
    /// input schema, edits on a request that is not an approval's, or a second answer to
    /// one request. Nothing was run.
    InvalidAnswer {
        /// The id of the request answered.
        request: String,
        /// What is wrong, naming the field at fault when one is.
        reason: String,
    },
    /// A call an answer would settle is not the call its request was asked for: the
    /// transcript now shows another tool or other arguments under the call's id than
    /// when the run halted (its placeholder's [`call_digest`](crate::call_digest), or a
    /// gate's request holding another call). Nothing was run; the transcript is as it was.
    CallChanged {
        /// The id of the call, as the transcript shows it.
        call: String,
        /// The tool the transcript's call names.
        tool: String,
        /// The id of the request the answer echoes.
        request: String,
    },
    /// An answer carries a signed receipt issued for another request, or for another call
    /// than the one it would run (its tool, or its arguments with the answer's edits).
    /// Nothing was run.
    ReceiptMismatch {
        /// The id of the request the answer echoes.
        request: String,
        /// The id of the call it would settle.
        call: String,
        /// What the receipt names instead.
        reason: String,
    },
    /// The transcript passed to a resume is not a halted run, or a history passed to
    /// [`Run::history`](crate::Run::history) cannot be continued.
    InvalidTranscript(String),
    /// The provider's reply (a JSON body or a whole SSE stream) grew past
    /// [`max_response_bytes`](crate::LlmClientBuilder::max_response_bytes); reading stopped
    /// there. Not retried.
    ResponseTooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The provider reported an error inside a streamed reply (an SSE `error` event).
    /// Not retried: part of the reply may already have been delivered.
    StreamError(String),
    /// The model stopped without a turn the loop can use, for the reason the provider gave
    /// (Gemini's `SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL`, …; a Responses reply
    /// that failed or came back empty). Not retried.
    Stopped {
        /// The provider's reason, as it named it.
        reason: String,
    },
    /// The run was cancelled through its
    /// [`CancellationToken`](crate::CancellationToken); the in-flight request was aborted.
    Cancelled,
    /// The run took longer than [`timeout`](crate::LlmClientBuilder::timeout); the in-flight
    /// request was aborted.
    TimedOut,
    /// The [`ConversationStore`](crate::ConversationStore) failed to load or save a thread.
    Store(ErrorDetail),
    /// The run's [`Journal`](crate::Journal) failed to give back or record a step; the run
    /// stopped before its next step.
    Journal(ErrorDetail),
}

impl ClientError {
    /// Whether trying the same step again later could succeed: the provider was busy or
    /// down (HTTP 408, 409, 429 or 5xx, as the providers' own SDKs retry), the network or
    /// the run's storage failed, or the step ran out of time. Anything else (a refused key,
    /// a bad request, an unreadable or oversized reply, a cancel) fails again the same way.
    ///
    /// The one rule for every retrier: the client's own retries of a request take the
    /// request failures among these ([`RetryDecision::standard`](crate::RetryDecision::standard)),
    /// and a durable engine that retries a whole step takes them all.
    ///
    /// ```
    /// use toolnexus::ClientError;
    ///
    /// let busy = ClientError::Status { status: 529, excerpt: "overloaded".into() };
    /// assert!(busy.is_transient());
    /// let refused = ClientError::Status { status: 401, excerpt: "bad key".into() };
    /// assert!(!refused.is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Status { status, .. } => {
                matches!(*status, 408 | 409 | 429) || (500..600).contains(status)
            }
            ClientError::Network(_)
            | ClientError::TimedOut
            | ClientError::StreamError(_)
            | ClientError::Store(_)
            | ClientError::Journal(_) => true,
            _ => false,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::MissingApiKey { var, status } => write!(
                f,
                "the provider answered HTTP {status} and no API key was sent: pass one with `.api_key(..)` or set the {var} environment variable"
            ),
            ClientError::Config(d) => write!(f, "invalid client configuration: {d}"),
            ClientError::InvalidOptions(d) => write!(f, "invalid request settings: {d}"),
            ClientError::Status { status, excerpt } => {
                write!(f, "the provider answered HTTP {status}: {excerpt}")
            }
            ClientError::Network(d) => write!(f, "could not reach the provider: {d}"),
            ClientError::InvalidResponse(d) => write!(f, "unreadable provider response: {d}"),
            ClientError::AnswerMismatch { request, answer } => write!(
                f,
                "the answer's id `{answer}` does not echo the request id `{request}`"
            ),
            ClientError::RequestMismatch(id) => write!(
                f,
                "request `{id}` is not the request this transcript halted on"
            ),
            ClientError::InvalidAnswer { request, reason } => {
                write!(f, "the answer to request `{request}` cannot be used: {reason}")
            }
            ClientError::CallChanged {
                call,
                tool,
                request,
            } => write!(
                f,
                "call `{call}` to `{tool}` is not the call request `{request}` was asked for: its tool or arguments changed since the run halted, so nothing was run"
            ),
            ClientError::ReceiptMismatch {
                request,
                call,
                reason,
            } => write!(
                f,
                "the answer to request `{request}` carries a receipt that does not bind call `{call}`: {reason}; nothing was run"
            ),
            ClientError::InvalidTranscript(why) => {
                write!(f, "the transcript cannot be resumed: {why}")
            }
            ClientError::ResponseTooLarge { limit } => write!(
                f,
                "the provider's reply exceeds the limit of {limit} bytes (max_response_bytes)"
            ),
            ClientError::StreamError(message) => {
                write!(f, "the provider reported an error mid-stream: {message}")
            }
            ClientError::Stopped { reason } => {
                write!(f, "the model stopped without an answer: {reason}")
            }
            ClientError::Cancelled => f.write_str("the run was cancelled"),
            ClientError::TimedOut => f.write_str("the run timed out"),
            ClientError::Store(d) => write!(f, "the conversation store failed: {d}"),
            ClientError::Journal(d) => write!(f, "the run's journal failed: {d}"),
        }
    }
}

/// The source is the error underneath the detail itself (a `reqwest::Error`, a
/// `serde_json::Error`, a store's error), so a chain printer does not repeat the message.
// Written by hand, with Display, rather than derived: thiserror's source can only be a
// variant's field (here the detail, whose text the message already holds), not the
// optional cause inside it.
impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Config(d)
            | ClientError::Network(d)
            | ClientError::InvalidResponse(d)
            | ClientError::Store(d)
            | ClientError::Journal(d) => d.source(),
            _ => None,
        }
    }
}
