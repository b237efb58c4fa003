//! The crate's error type: what can go wrong building a server, or opening or serving an
//! MCP connection.
//! Failures of single tool calls are never errors here: they are tool error results.

use std::io;

/// Why a server could not be built, or an MCP connection opened or served.
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
    /// The [`ProtectedResource`](crate::ProtectedResource) given to
    /// [`McpServerBuilder::protected_resource`](crate::McpServerBuilder::protected_resource)
    /// cannot be published: its identifier is not a URL a client can be sent to, or it
    /// names no authorization server.
    #[cfg(feature = "inbox")]
    #[error("the protected resource {resource:?} cannot be published: {reason}")]
    InvalidResource {
        /// The resource identifier given.
        resource: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The key given to [`McpServerBuilder::state_key`](crate::McpServerBuilder::state_key)
    /// is too short: sealed state under a short HMAC key could be forged.
    #[error("the MCP state key is {len} bytes long; it must be at least {min}")]
    ShortStateKey {
        /// How long the key given is, in bytes.
        len: usize,
        /// How long it must be at least, in bytes.
        min: usize,
    },
}
