#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod activity;
mod agent;
mod bridge;
pub mod codec;
mod connect;
mod door;
mod earlier;
mod error;
mod heartbeat;
#[cfg(feature = "inbox")]
mod inbox;
mod progress;
mod refusal;
mod runs;
mod stretch;
mod wire;
mod worker;
mod workflow;

pub use agent::Agent;
pub use codec::Codec;
pub use connect::Connection;
pub use error::TemporalError;
pub use refusal::AnswerRefusal;
pub use runs::Runs;
pub use wire::{AnswerInput, RunInput};
pub use worker::{AgentWorker, TASK_QUEUE};
pub use workflow::AgentRun;
