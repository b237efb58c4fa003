//! [`ToolOutcome`]: what one tool call produced — a success, a failure, or a suspension with
//! its [`Request`] — sorted once from a [`ToolResult`] and carried as such through the loop,
//! the hooks, the transcript, the call records and the metric events.

use crate::{Request, ToolResult};

/// A tool call's result, sorted into success, failure or suspension.
///
/// A suspension carries `is_error = true` on the wire (there is no usable answer yet) but
/// is not a failure; sorting once means no code has to remember to ask
/// [`ToolResult::is_pending`] before looking at `is_error`.
///
/// ```
/// use toolnexus::{Request, ToolOutcome, ToolResult};
///
/// let parked = ToolOutcome::classify(ToolResult::pending(Request::new("approval", "Approve?")));
/// assert!(parked.is_pending() && !parked.is_error());
/// assert_eq!(parked.pending().unwrap().kind, "approval");
/// assert!(matches!(ToolOutcome::from(ToolResult::error("boom")), ToolOutcome::Failure(_)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool succeeded.
    Success(ToolResult),
    /// The tool failed.
    Failure(ToolResult),
    /// The tool suspended on `request`; `result` is the suspension itself.
    Pending {
        /// What the tool waits for.
        request: Request,
        /// The suspension result.
        result: ToolResult,
    },
}

impl ToolOutcome {
    /// A call that failed with `message` without running, or whose re-run could not be
    /// trusted.
    pub(crate) fn failure(message: String) -> Self {
        ToolOutcome::Failure(ToolResult::error(message))
    }

    /// Sorts a result (its pending request, if any, is decoded here, once).
    pub fn classify(result: ToolResult) -> Self {
        match ToolResult::pending_of(&result) {
            Some(request) => ToolOutcome::Pending { request, result },
            None if result.is_error => ToolOutcome::Failure(result),
            None => ToolOutcome::Success(result),
        }
    }

    /// The result, whatever its kind.
    pub fn result(&self) -> &ToolResult {
        match self {
            ToolOutcome::Success(r) | ToolOutcome::Failure(r) => r,
            ToolOutcome::Pending { result, .. } => result,
        }
    }

    /// Takes the result out, whatever its kind.
    pub fn into_result(self) -> ToolResult {
        match self {
            ToolOutcome::Success(r) | ToolOutcome::Failure(r) => r,
            ToolOutcome::Pending { result, .. } => result,
        }
    }

    /// The request of a suspension.
    pub fn pending(&self) -> Option<&Request> {
        match self {
            ToolOutcome::Pending { request, .. } => Some(request),
            _ => None,
        }
    }

    /// Whether the call suspended.
    pub fn is_pending(&self) -> bool {
        matches!(self, ToolOutcome::Pending { .. })
    }

    /// Whether the call failed (never true for a suspension).
    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutcome::Failure(_))
    }

    pub(crate) fn result_mut(&mut self) -> &mut ToolResult {
        match self {
            ToolOutcome::Success(r) | ToolOutcome::Failure(r) => r,
            ToolOutcome::Pending { result, .. } => result,
        }
    }
}

impl From<ToolResult> for ToolOutcome {
    fn from(result: ToolResult) -> Self {
        ToolOutcome::classify(result)
    }
}
