//! [`RunOptions`]: what one run brings besides its prompt — values for its tools
//! ([`Extensions`]) and overrides of the client's request settings.

use std::time::Duration;

use crate::client::config::request_options::{request_setters, RequestOptions};
use crate::Extensions;

/// Per-run options, given to a run with [`Run::options`](crate::Run::options) (fresh,
/// resumed and conversation runs alike).
///
/// - **Extensions**: typed values for the run's tools — who the run acts for, a tenant, a
///   token, a database handle. Every tool call of the run receives them in
///   [`ToolContext::extensions`](crate::ToolContext::extensions) (`#[tool]` parameters of
///   type [`Ext<T>`](crate::Ext) get one injected). They stay in the process: they are never
///   sent to the model, never put in the transcript or the [`RunResult`](crate::RunResult),
///   and `Debug` shows their type names only. A resumed run does not remember them: give
///   them again to the resume.
/// - **Request settings**: each one set here replaces the client's for this run (see the
///   builder's methods of the same names); extra body fields are merged key by key with
///   the client's, these winning. Invalid settings end the run with
///   [`ClientError::InvalidOptions`](crate::ClientError::InvalidOptions) before any request.
///
/// ```
/// use toolnexus::{RunOptions, ToolChoice};
///
/// struct UserId(u64);
///
/// let options = RunOptions::new()
///     .extension(UserId(42))
///     .temperature(0.0)
///     .tool_choice(ToolChoice::Required);
/// assert!(format!("{options:?}").contains("UserId"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct RunOptions {
    pub(crate) request: RequestOptions,
    pub(crate) extensions: Extensions,
    /// The run's own time limit, when it replaces the client's (`Some(None)`: none).
    pub(crate) timeout: Option<Option<Duration>>,
    /// The run's own count of retries per model request, when it replaces the client's.
    pub(crate) retries: Option<u32>,
}

impl RunOptions {
    /// No extensions, and the client's request settings.
    pub fn new() -> Self {
        RunOptions::default()
    }

    /// Attaches `value` for the run's tools (replacing a value of the same type).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// Attaches every value of `extensions` (replacing values of the same types).
    pub fn extensions(mut self, extensions: &Extensions) -> Self {
        self.extensions.extend(extensions);
        self
    }

    /// Replaces the client's [`timeout`](crate::LlmClientBuilder::timeout) for this run:
    /// `Some(limit)` bounds it by `limit`, `None` lets it run without one. A host that
    /// replays a run from its journal without sending anything (a durable workflow) runs it
    /// without a limit, which would otherwise race the wall clock its replay ignores.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolnexus::RunOptions;
    ///
    /// let patient = RunOptions::new().timeout(Some(Duration::from_secs(600)));
    /// assert_ne!(patient, RunOptions::new());
    /// ```
    pub fn timeout(mut self, limit: Option<Duration>) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Replaces the client's [`retries`](crate::LlmClientBuilder::retries) for this run's
    /// model requests. A host that retries the whole step itself, on the same rule
    /// ([`ClientError::is_transient`](crate::ClientError::is_transient)), sets `0` so the
    /// two retriers' attempts do not multiply: a Temporal activity does.
    ///
    /// ```
    /// use toolnexus::RunOptions;
    ///
    /// let once = RunOptions::new().retries(0);
    /// assert_ne!(once, RunOptions::new());
    /// ```
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = Some(retries);
        self
    }

    /// The values attached so far.
    pub fn attached(&self) -> &Extensions {
        &self.extensions
    }

    request_setters!("Set on a run's options, it replaces the client's setting for that run only.");
}
