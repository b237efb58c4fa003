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
#[allow(
    clippy::large_enum_variant,
    reason = "boxing a suspension's requests would cost every suspension an allocation, \
              and an outcome is moved a handful of times per call"
)]
pub enum ToolOutcome {
    /// The tool succeeded.
    Success(ToolResult),
    /// The tool failed.
    Failure(ToolResult),
    /// The tool suspended on `request` (and on `more`, when it asked several questions at
    /// once); `result` is the suspension itself.
    Pending {
        /// What the tool waits for: its first request when it asked several.
        request: Request,
        /// The requests it asked after `request`, in order
        /// ([`ToolResult::pending_all`]); empty when it asked one.
        more: Vec<Request>,
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

    /// Sorts a result (its pending requests, if any, are decoded here, once). A suspension
    /// whose `pendingMore` is not a list of requests with ids of their own is a failure
    /// saying so: the questions it meant to ask cannot be told apart.
    pub fn classify(result: ToolResult) -> Self {
        let Some(request) = crate::result::pending_in(result.metadata.as_ref()) else {
            return match result.is_error {
                true => ToolOutcome::Failure(result),
                false => ToolOutcome::Success(result),
            };
        };
        match crate::result::more_in(result.metadata.as_ref()) {
            Ok(more) if distinct(&request, &more) => ToolOutcome::Pending {
                request,
                more,
                result,
            },
            Ok(_) => ToolOutcome::failure(format!(
                "the suspension of `{}` asks one request id twice",
                request.prompt
            )),
            Err(why) => ToolOutcome::failure(format!(
                "the suspension of `{}` is malformed: {why}",
                request.prompt
            )),
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

    /// Every request of a suspension, in the order the tool asked them (its
    /// [`pending`](Self::pending) request first); none for other outcomes.
    ///
    /// ```
    /// use toolnexus::{Request, ToolOutcome, ToolResult};
    ///
    /// let both = ToolOutcome::classify(ToolResult::pending_all([
    ///     Request::new("input", "Name?"),
    ///     Request::new("input", "City?"),
    /// ]));
    /// let prompts: Vec<&str> = both.requests().map(|r| r.prompt.as_str()).collect();
    /// assert_eq!(prompts, ["Name?", "City?"]);
    /// ```
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        let (first, more) = match self {
            ToolOutcome::Pending { request, more, .. } => (Some(request), more.as_slice()),
            _ => (None, &[][..]),
        };
        first.into_iter().chain(more)
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

/// Whether no two of a suspension's requests share an id.
fn distinct(first: &Request, more: &[Request]) -> bool {
    more.iter()
        .enumerate()
        .all(|(i, r)| r.id != first.id && more[..i].iter().all(|o| o.id != r.id))
}

impl From<ToolResult> for ToolOutcome {
    fn from(result: ToolResult) -> Self {
        ToolOutcome::classify(result)
    }
}
