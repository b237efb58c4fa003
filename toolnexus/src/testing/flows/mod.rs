//! A kit for testing approval flows: scripted people ([`Approvers`]) answering a run's
//! questions, drives that take a run through every question to its end ([`Drive`]),
//! inline or durably and with a crash on the way, and golden transcripts
//! ([`Driven::assert_golden`]).

mod approvers;
mod crash;
mod drive;
mod golden;

pub use approvers::{Approvers, Ask, Decision, Question};
pub use drive::{Drive, Driven};
pub use golden::{assert_golden, UPDATE_GOLDEN};
