//! The crate's error type: what can go wrong opening or serving an MCP connection.
//! Failures of single tool calls are never errors here: they are tool error results.

use std::io;

/// Why an MCP connection could not be opened or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The child process of an MCP server could not be started.
    #[error("could not start the MCP server process: {0}")]
    Spawn(#[source] io::Error),
    /// The MCP handshake (`initialize` or `server/discover`) failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Listing the server's tools failed.
    #[error("could not list the MCP server's tools: {0}")]
    ListTools(#[source] rmcp::ServiceError),
    /// Serving a connection ended abnormally.
    #[error("the MCP connection ended abnormally: {0}")]
    Serve(#[source] Box<dyn std::error::Error + Send + Sync>),
}
