//! The A2A server end to end: a real loopback server on a scripted model, its tasks in a
//! real SQLite file or PostgreSQL database, driven by the official Python `a2a-sdk`
//! client (`TOOLNEXUS_TEST_PYTHON`, set up by scripts/test.sh) and, for what no client
//! would send, by raw HTTP.

#[path = "../../../examples/shop_agent/nested.rs"]
mod nested;
#[path = "../../../examples/shop/mod.rs"]
mod shop;
#[path = "../../../examples/shop_agent/agent.rs"]
mod shop_agent;
mod support;

mod agents;
mod flows;
mod hostile;
mod listing;
mod media;
mod names;
mod numbers;
mod oauth;
mod owners;
mod push;
mod quorum;
mod rest;
mod restart;
mod shaping;
mod signed;
