//! MCP in both directions: toolnexus tools served to MCP clients (rmcp's and the official
//! Python SDK's), and MCP servers' tools used by toolnexus, suspensions included.

mod example_bin;
#[path = "../examples/shop/mod.rs"]
mod shop;

#[path = "mcp/consume.rs"]
mod consume;
#[path = "mcp/python.rs"]
mod python;
#[path = "mcp/serve.rs"]
mod serve;
#[path = "mcp/support.rs"]
mod support;
