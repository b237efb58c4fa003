//! # toolnexus-inbox
//!
//! Parked runs in SQLite or PostgreSQL, answered by people, resumed exactly once by any
//! worker.
//!
//! A toolnexus run with no `wait_for` halts when a tool suspends ([`RunStatus::Pending`]).
//! [`Inbox::park`] stores it — transcript, every request its turn waits on, model — keyed
//! by the request ids; [`Inbox::answer`] takes the first answer to each request (checked
//! against the request's form, or a gate's edited arguments against the tool's schema);
//! once all of a run's requests are answered, [`Inbox::resume_next`], or a [`Worker`],
//! claims the run under a lease and resumes it with `run_with_answers`, recording the
//! outcome exactly once.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use toolnexus::testing::{MockLlm, Reply};
//! use toolnexus::{pending, tool, Answer, LlmClient, RunStatus, ToolResult, Toolkit};
//! use toolnexus_inbox::{Inbox, ParkedState};
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
//! let llm = MockLlm::start([
//!     Reply::tool_call("c1", "approve_purchase", serde_json::json!({"item": "gpu"})),
//!     Reply::text("Bought."),
//! ]).await?;
//! let client = LlmClient::builder().base_url(llm.base_url()).model("m").api_key("k").build()?;
//! let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
//!
//! let inbox = Inbox::open("sqlite::memory:").await?;
//! let halted = client.run("buy a gpu", &tk).await?;
//! let id = inbox.park(&halted).await?;
//! inbox.answer_as(Answer::ok(&id), "ada@example.com").await?;
//! let resumed = inbox.resume_next(&client, &tk).await?.expect("an answered run");
//! assert_eq!(resumed.result.status, RunStatus::Done);
//! assert_eq!(inbox.get(&id).await?.unwrap().state, ParkedState::Done);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## Guarantees
//!
//! - A run is resumed and its outcome recorded **exactly once**: a claim is a lease fenced
//!   by an attempt counter, so a worker whose lease lapsed cannot record over the worker that
//!   took the run over.
//! - A tool's side effects after the answer are **at least once**: a worker that dies mid-
//!   tool leaves the run to be resumed again after its lease. The request id
//!   (`ctx.answer.id`) is the idempotency key a tool can use to do its effect once.
//!
//! [`RunStatus::Pending`]: toolnexus::RunStatus::Pending

#![warn(missing_docs)]

mod audit;
mod clock;
mod deadline;
mod error;
mod inbox;
mod notify;
mod parked;
mod people;
mod resume;
mod spans;
mod state;
mod store;
mod worker;

#[cfg(feature = "web")]
pub mod web;

pub use audit::{AuditEntry, AuditKind};
pub use deadline::{Escalation, Expiry};
pub use error::InboxError;
pub use inbox::{Inbox, InboxBuilder};
pub use notify::{Delivery, DeliveryState, Event, Webhook};
pub use parked::{Parked, Resumed, WaitingPage};
pub use people::Person;
pub use state::ParkedState;
pub use store::SqliteSync;
pub use worker::{Worker, WorkerReport};
