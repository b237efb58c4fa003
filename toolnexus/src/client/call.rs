//! One execution of one tool call, with the tool hooks around it and its metric event.

use std::time::Instant;

use serde_json::Value;
use tracing::field::Empty;
use tracing::Instrument;

use super::hooks::{BeforeTool, ToolCallInfo, ToolOutcome};
use super::metrics::millis;
use super::telemetry::UNKNOWN;
use super::{LlmClient, ToolCall};
use crate::{Answer, ToolContext, ToolResult, Toolkit};

impl LlmClient {
    /// Runs `call` once, in its own span: `before_tool`, the tool (unless the hook
    /// answered, or the arguments were unusable), then `after_tool`.
    pub(super) async fn attempt(
        &self,
        tk: &Toolkit,
        call: &ToolCall,
        arg_error: Option<&str>,
        answer: Option<Answer>,
    ) -> ToolResult {
        // Names and ids only: arguments and outputs may hold anything.
        let span = tracing::debug_span!(
            "toolnexus.tool",
            tool = %call.name,
            call_id = %call.id,
            resumed = answer.is_some(),
            is_error = Empty,
            pending = Empty,
        );
        self.attempt_once(tk, call, arg_error, answer)
            .instrument(span)
            .await
    }

    async fn attempt_once(
        &self,
        tk: &Toolkit,
        call: &ToolCall,
        arg_error: Option<&str>,
        mut answer: Option<Answer>,
    ) -> ToolResult {
        let hooks = &self.inner.hooks;
        let started = Instant::now();
        let info = |args: Value, answer: Option<Answer>| ToolCallInfo {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args,
            answer,
        };

        let mut args = None;
        let mut early = arg_error.map(ToolResult::error);
        if let (None, Some(before)) = (&early, &hooks.before_tool) {
            match before(info(call.args.clone(), answer.clone())).await {
                BeforeTool::Continue => {}
                BeforeTool::RewriteArgs(rewritten) => args = Some(rewritten),
                BeforeTool::ShortCircuit(result) => early = Some(result),
            }
        }
        let mut args = args.unwrap_or_else(|| call.args.clone());
        let keep = hooks.after_tool.is_some();

        let result = match early {
            Some(result) => result,
            None => {
                let mut ctx = ToolContext::default().with_call_id(call.id.as_str());
                ctx.answer = if keep { answer.clone() } else { answer.take() };
                let run_args = if keep {
                    args.clone()
                } else {
                    std::mem::take(&mut args)
                };
                tk.execute(&call.name, run_args, ctx).await
            }
        };
        let result = match &hooks.after_tool {
            Some(after) => after(info(args, answer), ToolOutcome::classify(result)).await,
            None => result,
        };

        let pending = result.is_pending();
        let is_error = result.is_error && !pending;
        let span = tracing::Span::current();
        span.record("is_error", is_error);
        span.record("pending", pending);
        let source = tk.get(&call.name).map_or(UNKNOWN, |t| t.source());
        let telemetry = &self.inner.telemetry;
        telemetry.tool(&call.name, source, is_error, pending, millis(started));
        result
    }
}
