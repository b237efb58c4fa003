#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

// Temporal's macros turn each activity and handler into an associated constant that carries
// no doc comment; everything written by hand in these two modules is documented.
#[allow(missing_docs)]
mod activity;
mod agent;
mod bridge;
pub mod codec;
mod connect;
mod door;
mod error;
#[cfg(feature = "inbox")]
#[allow(missing_docs)]
pub mod inbox;
mod progress;
mod runs;
mod stretch;
mod wire;
mod worker;
#[allow(missing_docs)]
mod workflow;

pub use activity::Steps;
pub use agent::Agent;
pub use codec::Codec;
pub use connect::Connection;
pub use error::TemporalError;
pub use progress::Progress;
pub use runs::Runs;
pub use wire::{AnswerInput, Carry, Halted, RunInput, Start, StepInput};
pub use worker::{AgentWorker, TASK_QUEUE};
pub use workflow::AgentRun;
