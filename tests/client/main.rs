//! The LLM client loop over real HTTP against a scripted loopback endpoint.

mod support;

mod config;
mod extensions;
mod failures;
mod gemini;
mod hooks;
mod limits;
mod loop_rules;
mod memory;
mod metrics;
mod observability;
mod reasoning;
mod reasoning_styles;
mod resilience;
mod responses;
mod resume;
mod settings;
mod sharing;
mod streaming;
mod suspension;
mod wire;
