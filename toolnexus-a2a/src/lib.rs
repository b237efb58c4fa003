//! toolnexus agents over [A2A 1.0](https://a2a-protocol.org): a remote A2A agent becomes a
//! [`Tool`](toolnexus::Tool) of a [`Toolkit`](toolnexus::Toolkit) ([`RemoteAgent`]).
//!
//! When the remote task stops to ask a person (`TASK_STATE_INPUT_REQUIRED`,
//! `TASK_STATE_AUTH_REQUIRED`), the call suspends like any toolnexus tool: the run's
//! `wait_for` answers it, or the run halts and is resumed later, in this process or another
//! one (the inbox), and the answer goes to the same remote task as a continuation.
#![warn(missing_docs)]

mod error;
mod remote;

pub use error::A2aError;
pub use remote::{RemoteAgent, RemoteAgentBuilder};
