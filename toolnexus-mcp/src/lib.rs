//! # toolnexus-mcp
//!
//! The Model Context Protocol in both directions, on the official Rust SDK
//! ([`rmcp`](https://docs.rs/rmcp)):
//!
//! - **Serve**: [`McpServer`] offers a [`Toolkit`](toolnexus::Toolkit) to any MCP host
//!   (desktop assistants, IDEs, agent frameworks in any language), over stdio or streamable
//!   HTTP. A tool that suspends with `pending!` crosses the protocol as an elicitation.
//! - **Consume**: [`McpTools`] turns an MCP server's tools into toolnexus tools, named
//!   `<server>__<tool>`, for `Toolkit::builder().tools(…)`. A server's request for input
//!   becomes a toolnexus suspension, so it halts a durable run like any other.
//!
//! What each suspension becomes, serving:
//!
//! | the client speaks | a pending result becomes |
//! |---|---|
//! | protocol 2026-07-28 with elicitation | an `input_required` result (multi round-trip request); the retried call carries the answer |
//! | an older protocol with elicitation | `elicitation/create` while the call is held open (form mode, or URL mode for `authorization` with a `url`) |
//! | no elicitation | an error result naming what the tool needs, or, with a [`Park`] hook, the request is parked and the result says so |
//!
//! ```
//! use toolnexus::{pending, tool, Answer, ToolResult, Toolkit};
//! use toolnexus_mcp::McpServer;
//!
//! /// Requests spend approval before proceeding
//! #[tool]
//! async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
//!     match answer {
//!         Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
//!         Some(_) => ToolResult::error("declined"),
//!         None => pending!(kind = "approval", prompt = format!("Approve purchase of {item}?")),
//!     }
//! }
//!
//! let tk = Toolkit::builder().tool(ApprovePurchase).build().unwrap();
//! let server = McpServer::new(tk);
//! // server.serve_stdio().await?  — or mount server.http_service() at /mcp
//! # drop(server);
//! ```

#![warn(missing_docs)]

mod client;
mod elicit;
mod error;
mod park;
mod server;

pub use client::{McpTools, McpToolsBuilder};
pub use error::McpError;
pub use park::{Park, ParkedCall};
pub use server::{McpServer, McpServerBuilder};

/// The MCP SDK this crate is built on, re-exported so hosts can name its transports and
/// configuration types without a version mismatch.
pub use rmcp;
