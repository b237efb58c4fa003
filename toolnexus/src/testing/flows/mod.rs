//! A kit for testing approval flows: scripted people ([`Approvers`]) answering a run's
//! questions, drives that take a run through every question to its end ([`Drive`]),
//! inline or durably and with a crash on the way, replays of a driven run from any of its
//! steps ([`Driven::replay_from`]), and golden transcripts ([`Driven::assert_golden`]).

mod approvers;
mod drive;
mod golden;
mod journal;
mod replay;

pub use approvers::{Approvers, Ask, Decision, Question};
pub use drive::{Drive, Driven};
pub use golden::{assert_golden, UPDATE_GOLDEN};
pub use replay::{Replay, RunStep, RunStepKind};
