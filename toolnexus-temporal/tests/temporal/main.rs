//! The crate's suites on the Temporal dev server, one test binary with a module each
//! (`cargo test -p toolnexus-temporal --test temporal temporal_agent::` runs one). Each
//! test binary links Temporal's SDK, which is most of what it costs to build, so the
//! suites share one binary and the SDK is linked once. The crash harness, `kills`, stays a
//! program of its own: it is also the worker it starts and kills.
//!
//! `hostile` and `temporal_inbox` keep runs' waits in an inbox, so they are built with the
//! `inbox` feature only (scripts/test.sh builds with every feature).

#[path = "../common/mod.rs"]
mod common;

mod expiry;
#[cfg(feature = "inbox")]
mod hostile;
mod replay;
mod step_inputs;
mod temporal_agent;
mod temporal_history;
#[cfg(feature = "inbox")]
mod temporal_inbox;
