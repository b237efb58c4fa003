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
//! ```toml
//! [dependencies]
//! toolnexus = "0.24"
//! toolnexus-mcp = "0.24"
//! ```
//!
//! This crate needs Rust 1.88 (rmcp is edition 2024); the core crate keeps 1.85.
//!
//! # Serving
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
//! let server = McpServer::new(tk.clone());
//! // Over stdio: `server.serve_stdio().await?`. Over streamable HTTP, a tower service to
//! // mount at /mcp, e.g. `axum::Router::new().nest_service("/mcp", service)`:
//! let service = McpServer::new(tk).http_service();
//! # drop((server, service));
//! ```
//!
//! The tools are listed as the toolkit declares them to a model
//! ([`Toolkit::declarations`](toolnexus::Toolkit::declarations): names sanitized to
//! `[a-zA-Z0-9_-]`, self-contained input schemas), and called by those names.
//!
//! What each suspension becomes when served:
//!
//! | the MCP client | a `pending!` result becomes |
//! |---|---|
//! | protocol 2026-07-28, with elicitation | an `input_required` result with one elicitation keyed by the request id; the request rides in `requestState`, sealed with an HMAC. The retried call's response becomes the `Answer` (accept: `ok`, content as `data`; decline / cancel: a refusal), and the loop's rule applies: `ok` re-runs the tool once, a refusal ends in `declined/expired: <prompt> (reason: …)`. A re-run that asks a new question (another request id) is the next round; asking the same one again ends `unresolved: <prompt>`. A retry without the response is asked again; a `requestState` this server did not seal, other arguments, or a response that is no elicitation result is a JSON-RPC invalid-params error. A call without `requestState` whose `inputResponses` answer the request it asks (a fixed `id`) is answered at once. |
//! | an older protocol, with elicitation | `elicitation/create` while the call is held open: form mode for `approval`, `input`, `question` and typed forms (`data.schema` is the `requestedSchema`), URL mode for `authorization` with a `url` (elicitation id = request id). No reply within `elicitation_timeout` (default 10 min) answers `expired`. A re-run that asks a new question asks it the same way, in the same call. |
//! | no elicitation | an error result naming what the tool needs; with a [`Park`] hook (`McpServer::builder(tk).park(…)`), the request is parked and the result says so, and the same call made again later finds the answer there. |
//!
//! A gated tool (a declared approval) asks through elicitation, or the park hook, like any
//! suspension.
//!
//! - HTTP: `http_service()` accepts only loopback `Host` headers (DNS-rebinding protection);
//!   a public deployment lists its host names with
//!   `http_service_with(StreamableHttpServerConfig::default().with_allowed_hosts([…]))`.
//! - Several servers behind a load balancer share `.state_key(…)` so any of them accepts a
//!   retry.
//!
//! # Consuming
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toolnexus::Toolkit;
//! use toolnexus_mcp::McpTools;
//!
//! let files = McpTools::spawn(tokio::process::Command::new("some-mcp-server")).await?;
//! let docs = McpTools::connect("http://127.0.0.1:8080/mcp").await?;
//! let tk = Toolkit::builder().tools(files).tools(docs).build()?; // names: <server>__<tool>
//! # Ok(()) }
//! ```
//!
//! A server's `input_required` elicitation becomes a `pending!` — a form is `kind = "input"`
//! with the form at `data.schema`, a URL is `kind = "authorization"` with that `url` — so it
//! halts a durable run like any other suspension; the round (input key and the server's
//! `requestState`) rides in the request id, so `run_with_answer` in another process sends it
//! back. A server on an older protocol that sends `elicitation/create` mid-call is answered by
//! `McpTools::builder().wait_for(…)`, else declined; the answer's refusal code decides the
//! elicitation's action (`Refusal::Cancelled` is `cancel`, any other refusal `decline`),
//! whatever note the person wrote. A consumed server's tools are gated by the toolkit's
//! `Approval`s like any other tool.
//!
//! - Names: `<server>__<tool>`, sanitized to `[a-zA-Z0-9_-]`; [`McpTools::names`] keeps the
//!   mapping; metrics report `source = "mcp:<server>"`.
//! - A server that hangs (per-call `timeout`, default 60 s), dies or sends garbage gives that
//!   call an error result; the other tools keep working. A dead server is not restarted: each
//!   call says it is gone, and a new `McpTools` reconnects.

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
