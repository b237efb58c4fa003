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
//! | protocol 2026-07-28, with elicitation | an `input_required` result with one elicitation keyed by the request id; the request rides in `requestState`, sealed with an HMAC. The retried call's response becomes the `Answer` (accept: `ok`, content as `data`; decline / cancel: a refusal), and the loop's rule applies: `ok` re-runs the tool once, a refusal ends in `declined/expired: <prompt> (reason: …)`. A re-run that asks a new question is the next round; asking the same one again ends the call (the core's rule for a host that carries rounds, `Toolkit::settle_round`). A retry without the response is asked again; a `requestState` this server did not seal, other arguments, or a response that is no elicitation result is a JSON-RPC invalid-params error. A call without `requestState` whose `inputResponses` answer the request it asks (a fixed `id`) is answered at once. |
//! | an older protocol, with elicitation | `elicitation/create` while the call is held open: form mode for `approval`, `input`, `question` and typed forms (`data.schema` is the `requestedSchema`), URL mode for `authorization` with a `url` (elicitation id = request id). No reply within `elicitation_timeout` (default 10 min) answers `expired`. A re-run that asks a new question asks it the same way, in the same call. |
//! | no elicitation | an error result naming what the tool needs; with a [`Park`] hook (`McpServer::builder(tk).park(…)`), the request is parked and the result says so, and the same call made again later finds the answer there. |
//!
//! A gated tool (a declared approval) asks through elicitation, or the park hook, like any
//! suspension.
//!
//! # Tasks
//!
//! A client that declares the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663)
//! may be handed a task instead of a result: with
//! [`McpServerBuilder::task_after`], a call still running after that long is answered with
//! a `CreateTaskResult` (`resultType: "task"`, `taskId`, `status`, `ttlMs`,
//! `pollIntervalMs`) and goes on running. `tasks/get` then shows it `working`,
//! `input_required` with the question under `inputRequests` keyed by the request id (the
//! elicitation it would have been in the call: a form, URL mode for a sign-in),
//! `completed` with the tool's result inlined (a tool error is `completed` with
//! `isError: true`), or `failed` with a JSON-RPC error when the server could not go on (a
//! form MCP cannot carry, a run that died). `tasks/update` with `inputResponses` answers
//! the waiting request and resumes the call exactly once, however many updates race;
//! responses under other keys are ignored, and one for the waiting request that is no
//! elicitation result is an invalid-params error that leaves the task waiting.
//! `tasks/cancel` stops the call, or ends the wait, and the task is `cancelled`: nothing
//! runs after it. An unknown task id is invalid params on every method.
//!
//! A question asked before `task_after` is asked in the call, as without tasks (so a call
//! may gather input round by round, then become a task); `Duration::ZERO` makes every call
//! of such a client a task. [`McpServerBuilder::task_only`] marks a tool that a client
//! without the extension may not call (`-32021`, missing required client capability).
//! Tasks live in the server's memory, shared by its sessions, for
//! [`task_ttl`](McpServerBuilder::task_ttl) (default 1 hour). With a [`Park`] hook, a
//! task's request is parked there as well, so a person may answer it there (an inbox
//! page) instead of the client: the next `tasks/get` finds the answer and resumes the
//! call, once, and a later `tasks/update` for the same request finds nothing waiting.
//!
//! With the `inbox` feature, `McpServerBuilder::inbox` keeps the tasks that wait for a
//! person in a `toolnexus-inbox` (SQLite, or PostgreSQL for many servers) instead: each is
//! parked there as a run of its one call, so it outlives the server — a server started
//! again on the same database, or another sharing it, answers every task method for it —
//! a person may answer it on the inbox page, and it is resumed exactly once, by the
//! inbox's claim, however many answers race through however many servers. A form answer
//! that does not fit the form is invalid params naming the field, the task still waiting.
//!
//! [`McpTools`] declares the extension and follows a task it is handed: it polls
//! `tasks/get` as often as `pollIntervalMs` says (within 10 ms and 5 s), and a task waiting
//! for input is a suspension whose id names the task, so the answer goes back by
//! `tasks/update`, from this connection or a new one in another process. A task still
//! working when the call's [`timeout`](McpToolsBuilder::timeout) runs out is cancelled
//! with `tasks/cancel`, and the call is an error result saying so.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use toolnexus::{pending, tool, Answer, ToolContext, ToolResult, Toolkit};
//! use toolnexus_mcp::{McpServer, McpTools};
//!
//! /// Deletes a file once a person approves
//! #[tool]
//! async fn delete_file(path: String, answer: Option<&Answer>) -> ToolResult {
//!     match answer {
//!         Some(a) if a.ok => ToolResult::ok(format!("deleted {path}")),
//!         Some(_) => ToolResult::error("kept"),
//!         None => pending!(kind = "approval", prompt = format!("Delete {path}?")),
//!     }
//! }
//!
//! // Serve: every call of a client that declares tasks is a task.
//! let tk = Toolkit::builder().tool(DeleteFile).build()?;
//! let server = McpServer::builder(tk).task_after(Duration::ZERO).build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("http://{}/mcp", listener.local_addr()?);
//! let app = axum::Router::new().nest_service("/mcp", server.http_service());
//! tokio::spawn(async move { axum::serve(listener, app).await });
//!
//! // Consume: the task's question is a suspension; its answer resumes the task.
//! let remote = Toolkit::builder().tools(McpTools::connect(&url).await?).build()?;
//! let args = serde_json::json!({"path": "/tmp/old.log"});
//! let asked = remote
//!     .execute("toolnexus__delete_file", args.clone(), ToolContext::default())
//!     .await;
//! let request = ToolResult::pending_of(&asked).expect("the task waits for a person");
//! assert_eq!(request.prompt, "Delete /tmp/old.log?");
//! let answered = ToolContext::default().with_answer(Answer::ok(&request.id));
//! let done = remote.execute("toolnexus__delete_file", args, answered).await;
//! assert_eq!(done.output, "deleted /tmp/old.log");
//! # Ok(()) }
//! ```
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
//! back. A server that answers with a task is polled to its end (see [Tasks](#tasks)). A
//! server on an older protocol that sends `elicitation/create` mid-call is answered by
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
