//! [`RunOptions`]: what one run brings besides its prompt — values for its tools
//! ([`Extensions`]) and overrides of the client's request settings.

use serde_json::Value;

use super::request_options::RequestOptions;
use super::tool_choice::ToolChoice;
use crate::Extensions;

/// Per-run options, given to [`LlmClient::with_options`](crate::LlmClient::with_options) (or
/// [`run_with_options`](crate::LlmClient::run_with_options),
/// [`run_with_answer_and_options`](crate::LlmClient::run_with_answer_and_options)).
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

    /// The values attached so far.
    pub fn attached(&self) -> &Extensions {
        &self.extensions
    }

    /// Sampling temperature for this run.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.request.temperature = Some(temperature);
        self
    }

    /// `max_tokens` per model call for this run.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.request.max_tokens = Some(tokens);
        self
    }

    /// Whether and which tools the model must call, for this run.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.request.tool_choice = Some(choice);
        self
    }

    /// Whether the model may ask for several tool calls in one turn, for this run.
    pub fn parallel_tool_calls(mut self, allowed: bool) -> Self {
        self.request.parallel_tool_calls = Some(allowed);
        self
    }

    /// Stop sequences for this run; an empty list sends none, even when the client has some.
    pub fn stop<S: Into<String>>(mut self, sequences: impl IntoIterator<Item = S>) -> Self {
        self.request.stop = Some(sequences.into_iter().map(Into::into).collect());
        self
    }

    /// Extra body fields for this run, merged over the client's (see
    /// [`LlmClientBuilder::extra_body`](crate::LlmClientBuilder::extra_body)).
    pub fn extra_body(mut self, fields: Value) -> Self {
        self.request.extra_body = Some(fields);
        self
    }
}
