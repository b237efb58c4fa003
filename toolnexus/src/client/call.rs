//! One execution of one tool call, with the tool hooks around it and its metric event.

use std::time::Instant;

use serde_json::Value;

use super::hooks::{BeforeTool, ToolCallInfo, ToolOutcome};
use super::metrics::millis;
use super::{LlmClient, MetricEvent, ToolCall};
use crate::{Answer, ToolContext, ToolResult, Toolkit};

impl LlmClient {
    /// Runs `call` once: `before_tool`, the tool (unless the hook answered, or the
    /// arguments were unusable), then `after_tool`.
    pub(super) async fn attempt(
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

        hooks.emit(|| {
            let pending = result.is_pending();
            MetricEvent::Tool {
                tool: call.name.clone(),
                source: tk
                    .get(&call.name)
                    .map_or("unknown", |t| t.source())
                    .to_owned(),
                is_error: result.is_error && !pending,
                pending,
                ms: millis(started),
            }
        });
        result
    }
}
