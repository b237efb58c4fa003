//! The spans of a run, named and attributed by the OpenTelemetry semantic conventions for
//! generative AI ([`SEMANTIC_CONVENTIONS`]): `invoke_agent` for the run, `chat {model}` for each model
//! call, `execute_tool {tool}` for each tool call (and for each gate that asks before one).
//!
//! They are plain `tracing` spans at `INFO`: a host that only logs sees them as before, and
//! `tracing-opentelemetry` turns the `otel.*` fields into the span's name, kind and status.
//! Every value beyond the span's creation is recorded only when the span is enabled, so a
//! run without a subscriber pays nothing for them. Content (messages, arguments, results)
//! is recorded only when the host opts in
//! ([`trace_content`](crate::LlmClientBuilder::trace_content)); keys and header values never.

use std::borrow::Cow;

use serde_json::{json, Value};
use tracing::field::Empty;
use tracing::Span;

use crate::client::config::request_options::RequestOptions;
use crate::client::config::settings::Settings;
use crate::client::error::ClientError;
use crate::client::provider::DecodedReply;
use crate::client::provider::Style;
use crate::client::run::result::{RunResult, RunStatus, Usage};
use crate::client::transcript::message::{Message, ToolCall};
use crate::{Request, ToolOutcome, ToolSource};

/// The release of the OpenTelemetry semantic conventions the run's spans follow (their
/// GenAI part, which OpenTelemetry still marks as in development).
///
/// ```
/// assert_eq!(toolnexus::SEMANTIC_CONVENTIONS, "1.41.0");
/// ```
pub const SEMANTIC_CONVENTIONS: &str = "1.41.0";

/// The span of one run (`invoke_agent`).
pub(crate) fn run(settings: &Settings, conversation: Option<&str>, streaming: bool) -> Span {
    let span = tracing::info_span!(
        "invoke_agent",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = settings.style.provider_name(),
        gen_ai.request.model = %settings.model,
        gen_ai.agent.name = Empty,
        gen_ai.conversation.id = Empty,
        error.type = Empty,
        toolnexus.streaming = streaming,
        toolnexus.turns = Empty,
        toolnexus.status = Empty,
        toolnexus.waiting = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match &settings.agent {
        Some(agent) => {
            span.record("otel.name", format!("invoke_agent {agent}"));
            span.record("gen_ai.agent.name", agent.as_str());
        }
        None => {
            span.record("otel.name", "invoke_agent");
        }
    }
    if let Some(id) = conversation {
        span.record("gen_ai.conversation.id", id);
    }
    span
}

/// Records how the run ended: its status and turns, the requests a halted run waits on
/// (a halt is not an error), or the error.
pub(crate) fn run_ended(span: &Span, turns: usize, result: &Result<RunResult, ClientError>) {
    if span.is_disabled() {
        return;
    }
    span.record("toolnexus.turns", count(turns as u64));
    match result {
        Ok(run) => {
            span.record("toolnexus.status", status_name(run.status));
            if !run.waiting.is_empty() {
                let ids: Vec<&str> = run.waiting.iter().map(|r| r.id.as_str()).collect();
                span.record("toolnexus.waiting", ids.join(",").as_str());
            }
        }
        Err(e) => failed(span, e),
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Done => "done",
        RunStatus::Pending => "pending",
        RunStatus::Incomplete => "incomplete",
    }
}

/// Marks `span` as failed with `error`.
fn failed(span: &Span, error: &ClientError) {
    span.record("error.type", error_type(error).as_ref());
    span.record("otel.status_code", "error");
    span.record("otel.status_description", error.to_string().as_str());
}

/// `error.type` for a run's error: the HTTP status when the provider answered one, else a
/// short name of what went wrong.
fn error_type(error: &ClientError) -> Cow<'static, str> {
    Cow::Borrowed(match error {
        ClientError::Status { status, .. } => return Cow::Owned(status.to_string()),
        ClientError::MissingApiKey { status, .. } => return Cow::Owned(status.to_string()),
        ClientError::TimedOut => "timeout",
        ClientError::Cancelled => "cancelled",
        ClientError::Network(_) => "network",
        ClientError::InvalidResponse(_) => "invalid_response",
        ClientError::ResponseTooLarge { .. } => "response_too_large",
        ClientError::StreamError(_) => "stream_error",
        ClientError::Stopped { .. } => "stopped",
        ClientError::Config(_) | ClientError::InvalidOptions(_) => "invalid_options",
        ClientError::AnswerMismatch { .. }
        | ClientError::RequestMismatch(_)
        | ClientError::InvalidAnswer { .. }
        | ClientError::InvalidTranscript(_) => "invalid_resume",
        ClientError::CallChanged { .. } => "call_changed",
        ClientError::ReceiptMismatch { .. } => "receipt_mismatch",
        ClientError::Store(_) => "store",
        ClientError::Journal(_) => "journal",
    })
}

/// The span of one model call (`chat {model}`), with the request settings that are sent.
pub(crate) fn chat(settings: &Settings, request: &RequestOptions, turn: usize) -> Span {
    let span = tracing::info_span!(
        "chat",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = settings.style.provider_name(),
        gen_ai.request.model = %settings.model,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.request.stop_sequences = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        server.address = Empty,
        server.port = Empty,
        http.response.status_code = Empty,
        error.type = Empty,
        toolnexus.turn = count(turn as u64),
    );
    if span.is_disabled() {
        return span;
    }
    span.record("otel.name", format!("chat {}", settings.model));
    if let Some(t) = request.temperature {
        span.record("gen_ai.request.temperature", t);
    }
    if let Some(n) = request.max_tokens {
        span.record("gen_ai.request.max_tokens", i64::from(n));
    }
    if !request.stop().is_empty() {
        let stop = serde_json::to_string(request.stop()).unwrap_or_default();
        span.record("gen_ai.request.stop_sequences", stop.as_str());
    }
    if let Ok(url) = reqwest::Url::parse(&settings.base_url) {
        if let Some(host) = url.host_str() {
            span.record("server.address", host);
        }
        if let Some(port) = url.port_or_known_default() {
            span.record("server.port", i64::from(port));
        }
    }
    span
}

/// Records the messages a model call sends, when the host opted in to content.
pub(crate) fn chat_sent(span: &Span, settings: &Settings, messages: &[Message]) {
    if settings.trace_content && !span.is_disabled() {
        let sent: Vec<Value> = messages.iter().filter_map(conventional).collect();
        let text = Value::Array(sent).to_string();
        span.record("gen_ai.input.messages", text.as_str());
    }
}

/// Records the HTTP status of one attempt of a model call (the last one stays).
pub(crate) fn http_status(span: &Span, status: Option<u16>) {
    if let Some(code) = status {
        span.record("http.response.status_code", i64::from(code));
    }
}

/// Records what the model answered: the reply's id, model and finish reason, its token
/// counts (`input_tokens` counts the cached ones too, as the conventions define it), and,
/// with content opted in, the turn itself.
pub(crate) fn chat_reply(span: &Span, settings: &Settings, reply: &DecodedReply) {
    if span.is_disabled() {
        return;
    }
    let meta = &reply.meta;
    if let Some(id) = &meta.id {
        span.record("gen_ai.response.id", id.as_str());
    }
    if let Some(model) = &meta.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(reason) = &meta.finish_reason {
        let reasons = json!([reason]).to_string();
        span.record("gen_ai.response.finish_reasons", reasons.as_str());
    }
    record_usage(span, settings.style, &reply.usage);
    if settings.trace_content {
        let turn = Message::Assistant {
            content: reply.text.clone(),
            tool_calls: reply.calls.clone(),
            state: None,
        };
        let mut said = conventional(&turn).unwrap_or(Value::Null);
        if let (Some(reason), Value::Object(said)) = (&meta.finish_reason, &mut said) {
            said.insert("finish_reason".into(), json!(reason));
        }
        let text = Value::Array(vec![said]).to_string();
        span.record("gen_ai.output.messages", text.as_str());
    }
}

fn record_usage(span: &Span, style: Style, usage: &Usage) {
    // Anthropic counts the prompt apart from what it read from or wrote to its cache; the
    // conventions' input count holds all of it.
    let input = match style {
        Style::Anthropic => usage
            .prompt_tokens
            .saturating_add(usage.cached_tokens)
            .saturating_add(usage.cache_write_tokens),
        _ => usage.prompt_tokens,
    };
    span.record("gen_ai.usage.input_tokens", count(input));
    span.record("gen_ai.usage.output_tokens", count(usage.completion_tokens));
    if usage.cached_tokens > 0 {
        let read = count(usage.cached_tokens);
        span.record("gen_ai.usage.cache_read.input_tokens", read);
    }
    if usage.cache_write_tokens > 0 {
        let written = count(usage.cache_write_tokens);
        span.record("gen_ai.usage.cache_creation.input_tokens", written);
    }
    if usage.reasoning_tokens > 0 {
        let reasoning = count(usage.reasoning_tokens);
        span.record("gen_ai.usage.reasoning.output_tokens", reasoning);
    }
}

/// A count as OpenTelemetry's int: `tracing-opentelemetry` exports a `u64` as text.
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Marks a model call as failed.
pub(crate) fn chat_failed(span: &Span, error: &ClientError) {
    if !span.is_disabled() {
        failed(span, error);
    }
}

/// One message in the conventions' shape (`role` and `parts`); `None` for the system
/// prompt, which is not part of the chat history there.
fn conventional(message: &Message) -> Option<Value> {
    Some(match message {
        Message::System { .. } => return None,
        Message::User { content, .. } => {
            json!({"role": "user", "parts": [{"type": "text", "content": content}]})
        }
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut parts = Vec::with_capacity(tool_calls.len() + 1);
            if !content.is_empty() {
                parts.push(json!({"type": "text", "content": content}));
            }
            for call in tool_calls {
                parts.push(
                    json!({"type": "tool_call", "id": call.id, "name": call.name,
                                  "arguments": call.args}),
                );
            }
            json!({"role": "assistant", "parts": parts})
        }
        Message::ToolResults { results } => {
            let parts: Vec<Value> = results
                .iter()
                .map(|r| json!({"type": "tool_call_response", "id": r.call_id, "result": r.output}))
                .collect();
            json!({"role": "tool", "parts": parts})
        }
    })
}

/// The span of one tool call (`execute_tool {tool}`); `source` is where the tool comes from,
/// `None` when the toolkit has no such tool.
pub(crate) fn tool(
    settings: &Settings,
    call: &ToolCall,
    source: Option<ToolSource<'_>>,
    resumed: bool,
) -> Span {
    // Only in-process functions are `function`s; anything reached through a server or
    // shipped ready-made is an extension of the agent.
    let kind = match source {
        Some(ToolSource::Native) => "function",
        _ => "extension",
    };
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.name,
        gen_ai.tool.call.id = %call.id,
        gen_ai.tool.type = kind,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        toolnexus.resumed = resumed,
        toolnexus.approval = Empty,
        toolnexus.pending = Empty,
        toolnexus.request.kind = Empty,
        toolnexus.request.id = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    span.record("otel.name", format!("execute_tool {}", call.name));
    if settings.trace_content {
        span.record("gen_ai.tool.call.arguments", call.args.to_string().as_str());
    }
    span
}

/// Records how a tool call ended: a suspension is not an error (the call waits, with its
/// request's kind and id, and an event says so); a failure is.
pub(crate) fn tool_ended(span: &Span, settings: &Settings, outcome: &ToolOutcome) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        ToolOutcome::Pending { request, .. } => suspended(span, request),
        ToolOutcome::Failure(result) => {
            span.record("toolnexus.pending", false);
            span.record("error.type", "tool_error");
            span.record("otel.status_code", "error");
            if settings.trace_content {
                span.record("otel.status_description", result.output.as_str());
            }
        }
        ToolOutcome::Success(_) => {
            span.record("toolnexus.pending", false);
        }
    }
    if settings.trace_content && !outcome.is_pending() {
        span.record("gen_ai.tool.call.result", outcome.result().output.as_str());
    }
}

/// Marks `span`'s call as waiting on `request`.
pub(crate) fn suspended(span: &Span, request: &Request) {
    if span.is_disabled() {
        return;
    }
    span.record("toolnexus.pending", true);
    span.record("toolnexus.request.kind", request.kind.as_str());
    span.record("toolnexus.request.id", request.id.as_str());
    span.in_scope(|| {
        tracing::info!(
            toolnexus.request.kind = request.kind.as_str(),
            toolnexus.request.id = request.id.as_str(),
            "the call waits for an answer"
        );
    });
}
