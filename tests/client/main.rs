//! The LLM client loop over real HTTP against a scripted loopback endpoint.

#[path = "../common/stub.rs"]
mod stub;

mod support;

mod config;
mod failures;
mod hooks;
mod loop_rules;
mod metrics;
mod resume;
mod sharing;
mod suspension;
mod wire;
