//! Turning a tool's panic into an error result, so one broken tool never ends a run: the
//! guard of a tool body, which the guard a toolkit registers every tool behind runs too.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use crate::ToolResult;

/// Runs a tool's future, turning a panic into an error result.
///
/// Not an `async fn`: one would keep `fut` twice in its state, as its argument and as what
/// it awaits, and a tool's future can be large.
pub(crate) fn guard<'a, F: Future<Output = ToolResult> + 'a>(
    tool: &'a str,
    fut: F,
) -> impl Future<Output = ToolResult> + 'a {
    AssertUnwindSafe(fut)
        .catch_unwind()
        .map(move |caught| caught.unwrap_or_else(|panic| panicked(tool, panic)))
}

/// The error result of a tool that panicked with `payload`.
pub(crate) fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolResult {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".to_owned());
    tracing::warn!(tool, "tool panicked");
    ToolResult::error(format!("tool {tool} failed: panicked: {message}"))
}
