//! Reliability: the parsers and decoders never panic on hostile input, wire types survive
//! persistence, many runs share one client without crossing answers, a dropped run leaves
//! nothing behind, and arguments nested past the parser's limits are refused cleanly.

#[path = "../common/mod.rs"]
mod common;
mod strategies;
mod support;

mod cancellation;
mod concurrency;
mod deep_args;
mod props_args;
mod props_replies;
mod props_wire;
mod regressions;
mod wire_roundtrip;
