//! MCP in both directions: toolnexus tools served to MCP clients (rmcp's and the official
//! Python SDK's), and MCP servers' tools used by toolnexus, suspensions included.

mod example_bin;
// The shop's three-level agent, shared with the other doors' suites (edition 2021).
#[cfg(feature = "inbox")]
#[path = "../../../examples/shop_agent/nested.rs"]
#[rustfmt::skip]
mod nested;
// The examples' own module, formatted in their edition (2021) rather than this crate's.
#[path = "../../../examples/shop/mod.rs"]
#[rustfmt::skip]
mod shop;

#[cfg(feature = "inbox")]
mod agents;
#[cfg(feature = "inbox")]
mod closed;
mod consume;
#[cfg(feature = "inbox")]
mod hostile;
#[cfg(feature = "inbox")]
mod identity;
#[cfg(feature = "inbox")]
mod kept;
#[cfg(feature = "inbox")]
mod oauth;
mod python;
mod serve;
mod support;
mod tasks;
