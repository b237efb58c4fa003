//! What can go wrong around a run: configuration, transport, the provider's replies, and
//! durable resumes that do not match their transcript.

/// An error from [`LlmClient`](crate::LlmClient): building it, talking to the provider, or
/// resuming a halted run.
///
/// Tool failures are not errors here: they are fed back to the model as error results and
/// the run goes on. No variant ever carries the API key or a header value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No API key was given and the environment variable for the provider is unset.
    #[error("no API key: pass one with `.api_key(..)` or set the {var} environment variable")]
    MissingApiKey {
        /// The environment variable that was consulted.
        var: &'static str,
    },
    /// A builder setting is invalid (model missing, malformed base URL or header, …).
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// The provider answered with a non-success HTTP status (after any retries).
    #[error("the provider answered HTTP {status}: {excerpt}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body, shortened and with secrets removed.
        excerpt: String,
    },
    /// The provider could not be reached or the connection failed (after any retries).
    #[error("could not reach the provider: {0}")]
    Network(String),
    /// The provider's reply is not JSON or not the expected shape.
    #[error("unreadable provider response: {0}")]
    InvalidResponse(String),
    /// A durable answer does not echo the id of the request it claims to answer.
    #[error("the answer's id `{answer}` does not echo the request id `{request}`")]
    AnswerMismatch {
        /// The id of the request passed to the resume.
        request: String,
        /// The id the answer carries.
        answer: String,
    },
    /// The request passed to a resume is not the one the transcript halted on.
    #[error("request `{0}` is not the request this transcript halted on")]
    RequestMismatch(String),
    /// The transcript passed to a resume is not a halted run, or a history passed to
    /// [`run_with_history`](crate::LlmClient::run_with_history) cannot be continued.
    #[error("the transcript cannot be resumed: {0}")]
    InvalidTranscript(String),
    /// The provider's reply (a JSON body or a whole SSE stream) grew past
    /// [`max_response_bytes`](crate::LlmClientBuilder::max_response_bytes); reading stopped
    /// there. Not retried.
    #[error("the provider's reply exceeds the limit of {limit} bytes (max_response_bytes)")]
    ResponseTooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The provider reported an error inside a streamed reply (an SSE `error` event).
    /// Not retried: part of the reply may already have been delivered.
    #[error("the provider reported an error mid-stream: {0}")]
    StreamError(String),
    /// The run was cancelled through its
    /// [`CancellationToken`](crate::CancellationToken); the in-flight request was aborted.
    #[error("the run was cancelled")]
    Cancelled,
    /// The run took longer than [`timeout`](crate::LlmClientBuilder::timeout); the in-flight
    /// request was aborted.
    #[error("the run timed out")]
    TimedOut,
    /// The [`ConversationStore`](crate::ConversationStore) failed to load or save a thread.
    #[error("the conversation store failed: {0}")]
    Store(String),
}
