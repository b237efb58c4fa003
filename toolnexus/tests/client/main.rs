//! The LLM client loop over real HTTP against a scripted loopback endpoint.

#[path = "../common/mod.rs"]
mod common;
mod support;

mod approvals;
mod config;
mod connections;
mod extensions;
mod failures;
mod gemini;
mod hooks;
mod http1;
mod idempotency;
mod journal;
mod limits;
mod loop_rules;
mod memory;
mod metrics;
mod observability;
mod reasoning;
mod reasoning_styles;
mod receipts;
mod redirects;
mod resilience;
mod responses;
mod resume;
mod run_builder;
mod settings;
mod several;
mod sharing;
mod streaming;
mod suspension;
mod tampering;
mod wire;
