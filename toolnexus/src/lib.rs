//! # toolnexus
//!
//! A vendor-neutral tool layer for LLM agents. Write a tool as a plain `async fn`, let
//! `#[tool]` derive its JSON schema from the signature, and let a tool that needs a human
//! (an approval, a login, some input) *suspend* with [`pending!`] until the host answers.
//!
//! ```
//! use toolnexus::{pending, tool, Answer, Tool, ToolContext, ToolResult, Toolkit};
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
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let tk = Toolkit::builder().tool(ApprovePurchase).build().unwrap();
//! let args = serde_json::json!({"item": "gpu"});
//! let parked = tk.execute("approve_purchase", args.clone(), ToolContext::default()).await;
//! let request = ToolResult::pending_of(&parked).unwrap();
//! let answered = ToolContext::default().with_answer(Answer::ok(request.id));
//! let done = tk.execute("approve_purchase", args, answered).await;
//! assert_eq!(done.output, "approved: gpu");
//! # });
//! ```

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Generated code names the runtime `::toolnexus`; this makes that path work inside the
// crate itself too.
extern crate self as toolnexus;

mod client;
mod decoded_reply;
#[macro_use]
mod suspend_macros;
mod form;
mod native;
mod outcome;
mod panics;
mod result;
mod suspension;
mod tool;
mod tool_args;
mod toolkit;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use client::{
    BeforeTool, ClientError, Conversation, ConversationStore, ErrorDetail, InMemoryStore, Limit,
    LlmCall, LlmClient, LlmClientBuilder, Message, MetricEvent, RetryDecision, RunResult,
    RunStatus, StoreError, StreamEvent, Style, ToolCall, ToolCallInfo, ToolCallRecord, ToolOutput,
    Usage,
};
pub use native::NativeTool;
pub use outcome::ToolOutcome;
pub use result::{IntoToolResult, Json, ToolResult};
pub use suspension::{Answer, AnswerDataError, Request};
/// The token that cancels a run (see [`LlmClient::with_cancel`]), re-exported from
/// `tokio-util` so hosts need not depend on it.
pub use tokio_util::sync::CancellationToken;
pub use tool::{Answered, BoxFuture, Tool, ToolContext, Toolbox};
pub use toolkit::{sanitize_name, Toolkit, ToolkitBuilder, ToolkitError};

pub use toolnexus_macros::{tool, toolbox};
