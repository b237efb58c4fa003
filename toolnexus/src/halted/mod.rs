//! What a halted run means, said once and publicly.
//!
//! A run that halts leaves its rules in plain data: the transcript's last turn holds the
//! calls and, for each call that waits, a placeholder with its requests; the result says
//! what it waits on; each request's `data` and `expiresAt` say who answers it, how far its
//! approvals came and until when. The loop reads those rules, and so does every door and
//! engine that shows, answers or resumes a waiting run. Rules that each reader restates
//! drift apart (a placeholder built by hand had already come to differ from the loop's), so
//! they live here, and every reader calls them:
//!
//! - [`HaltedTurn`]: the turn a transcript halted in — its calls, which are settled, which
//!   wait and on which requests, and which call asked a request;
//! - [`ToolOutput::settled`] and [`ToolOutput::suspended`]: the transcript entry of a
//!   call's outcome, a waiting call's placeholder included, and
//!   [`ToolOutput::check_call`]: whether a call is still the one its placeholder asked for;
//! - [`RunResult::halted`] and [`RunResult::finished`]: a run's result, from its transcript;
//! - [`Request::expiry`]: a request's deadline, read one way ([`ExpiryError`] when its
//!   date does not parse);
//! - [`Request::approvals`]: how far the approvals of a request that needs several people
//!   came ([`Approvals`]); with [`Request::rule`] (who answers, how many, which edits) and
//!   [`Request::asks`] (a gate, a sign-in, a form), the typed view of a request's data.
//!
//! [`ToolOutput::settled`]: crate::ToolOutput::settled
//! [`ToolOutput::suspended`]: crate::ToolOutput::suspended
//! [`ToolOutput::check_call`]: crate::ToolOutput::check_call
//! [`RunResult::halted`]: crate::RunResult::halted
//! [`RunResult::finished`]: crate::RunResult::finished
//! [`Request::expiry`]: crate::Request::expiry
//! [`Request::approvals`]: crate::Request::approvals
//! [`Request::rule`]: crate::Request::rule
//! [`Request::asks`]: crate::Request::asks

mod approvals;
mod expiry;
mod output;
mod result;
mod turn;

pub use approvals::Approvals;
pub use expiry::ExpiryError;
pub use turn::{Asked, HaltedTurn};
