#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod client;
mod elicit;
mod error;
mod park;
mod server;

pub use client::{McpTools, McpToolsBuilder};
pub use error::McpError;
pub use park::{Park, ParkedCall};
pub use server::{McpHttpService, McpServer, McpServerBuilder};
#[cfg(feature = "inbox")]
pub use server::{MetadataService, ProtectedResource};

/// The MCP SDK this crate is built on, re-exported so hosts can name its transports and
/// configuration types without a version mismatch.
pub use rmcp;
