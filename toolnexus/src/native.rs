//! Tools built from closures at run time.

use std::future::Future;

use serde_json::Value;

use crate::tool::BoxFuture;
use crate::{IntoToolResult, Tool, ToolContext, ToolResult};

/// A tool built at run time from a closure, for tools whose shape is only known then
/// (loaded from configuration, proxied from elsewhere).
///
/// ```
/// use serde_json::json;
/// use toolnexus::{pending, NativeTool, Tool, ToolContext, ToolResult};
///
/// let approve = NativeTool::of(
///     "approve_purchase",
///     "Requests spend approval before proceeding",
///     json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
///     |args, ctx: ToolContext| async move {
///         match ctx.answer {
///             Some(a) if a.ok => ToolResult::ok(format!("approved: {}", args["item"])),
///             Some(_) => ToolResult::error("declined"),
///             None => pending!(kind = "approval", prompt = "Approve?"),
///         }
///     },
/// );
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let parked = approve.execute(json!({"item": "gpu"}), ToolContext::default()).await;
/// assert!(parked.is_pending());
/// # });
/// ```
pub struct NativeTool;

impl NativeTool {
    /// A tool named `name` whose calls run `f(args, ctx)`.
    pub fn of<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        f: F,
    ) -> impl Tool
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        ClosureTool {
            name: name.into(),
            description: description.into(),
            input_schema,
            f,
        }
    }
}

struct ClosureTool<F> {
    name: String,
    description: String,
    input_schema: Value,
    f: F,
}

impl<F, Fut, R> Tool for ClosureTool<F>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.input_schema
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        // The closure is called inside the guard, so even its synchronous part is covered.
        Box::pin(crate::panics::guard(&self.name, async move {
            (self.f)(args, ctx).await.into_tool_result()
        }))
    }
}
