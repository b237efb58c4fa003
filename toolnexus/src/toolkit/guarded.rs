//! The guard a [`Toolkit`](crate::Toolkit) registers every tool behind.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use futures::future::Either;
use serde_json::Value;

use super::gate::default_prompt;
use crate::panics::{guard, panicked};
use crate::tool::BoxFuture;
use crate::{Tool, ToolContext, ToolResult, ToolSource};

/// A tool as a [`Toolkit`](crate::Toolkit) holds it: every tool, whatever made it, is
/// registered behind this guard, so a panic in a call — in its future, or in a hand-written
/// `execute` before it even returns one — is an error result naming the tool.
pub(crate) struct Guarded {
    /// The name the toolkit declares the tool under, which the error names.
    name: String,
    tool: Arc<dyn Tool>,
}

impl Guarded {
    pub(crate) fn new(name: String, tool: Arc<dyn Tool>) -> Self {
        Guarded { name, tool }
    }

    /// Runs one call of the tool, guarded: the tool's `execute` is called now, its future
    /// runs when awaited.
    pub(crate) fn call(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + '_ {
        match catch_unwind(AssertUnwindSafe(|| self.tool.execute(args, ctx))) {
            Ok(future) => Either::Left(guard(&self.name, future)),
            Err(panic) => Either::Right(std::future::ready(panicked(&self.name, panic))),
        }
    }
}

impl Tool for Guarded {
    fn name(&self) -> &str {
        self.tool.name()
    }
    fn description(&self) -> &str {
        self.tool.description()
    }
    fn input_schema(&self) -> &Value {
        self.tool.input_schema()
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(self.call(args, ctx))
    }
    fn source(&self) -> ToolSource<'_> {
        self.tool.source()
    }
    fn answer_schema(&self) -> Option<Result<&Value, &str>> {
        self.tool.answer_schema()
    }
    fn output_schema(&self) -> Option<&Value> {
        self.tool.output_schema()
    }
    /// A panic while deciding asks (fails closed), with a prompt naming the tool.
    fn approval(&self, args: &Value) -> Option<String> {
        match catch_unwind(AssertUnwindSafe(|| self.tool.approval(args))) {
            Ok(prompt) => prompt,
            Err(_) => {
                tracing::warn!(tool = %self.name, "deciding whether to ask panicked; asking");
                Some(default_prompt(&self.name, args))
            }
        }
    }
    fn approval_responders(&self) -> Option<&[&str]> {
        self.tool.approval_responders()
    }
    fn approval_quorum(&self) -> Option<u32> {
        self.tool.approval_quorum()
    }
    fn approval_edits(&self) -> Option<&[&str]> {
        self.tool.approval_edits()
    }
    fn approval_rememberable(&self) -> bool {
        self.tool.approval_rememberable()
    }
    fn approval_not_requester(&self) -> bool {
        self.tool.approval_not_requester()
    }
}
