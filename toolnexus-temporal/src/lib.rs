//! toolnexus agent runs as Temporal workflows.
//!
//! A run is the `AgentRun` workflow: the loop's decisions run in the workflow, replayed by
//! Temporal from the steps it recorded; every model call and every tool call is a step
//! activity, retried by Temporal, so a completed step is never made twice. A person's wait
//! is the `answer` update; the query `pending` shows what waits.

mod activity;
mod agent;
mod bridge;
pub mod codec;
mod connect;
mod error;
mod progress;
mod runs;
mod stretch;
mod wire;
mod worker;
mod workflow;

pub use activity::Steps;
pub use agent::Agent;
pub use codec::Codec;
pub use connect::Connection;
pub use error::TemporalError;
pub use progress::Progress;
pub use runs::Runs;
pub use wire::{Carry, Halted, RunInput, Start, StepInput};
pub use worker::{AgentWorker, TASK_QUEUE};
pub use workflow::AgentRun;
