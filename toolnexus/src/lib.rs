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
//!         // Reached only through a direct `Toolkit::execute`: under `LlmClient` a refusal
//!         // never re-runs the tool, the model is told `declined/expired: <prompt> (reason: …)`.
//!         Some(_) => ToolResult::error("not approved"),
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
//!
//! [`LlmClient`] runs the tool-calling loop against an OpenAI- or Anthropic-style endpoint
//! and answers suspensions inline ([`LlmClientBuilder::wait_for`]) or halts so a host can
//! resume later ([`LlmClient::run_with_answer`]). [`builtin`] holds ready-made tools.
//!
//! The `testing` feature adds `toolnexus::testing`, a scripted model on loopback for
//! offline tests. These docs show it when built with every feature, as docs.rs does:
//! `cargo doc -p toolnexus --all-features --no-deps --open`.
//!
//! Parameter and answer types derive `serde::Deserialize` and `schemars::JsonSchema`
//! (schemars 1.x). [`serde`], [`schemars`](https://docs.rs/schemars/1) and [`serde_json`] are re-exported, so a crate
//! can derive through toolnexus alone:
//!
//! ```
//! use toolnexus::{schemars, serde, Answer};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(crate = "toolnexus::serde")]
//! #[schemars(crate = "toolnexus::schemars")]
//! struct Size {
//!     label: String,
//! }
//!
//! let form = schemars::schema_for!(Size);
//! assert_eq!(form.get("required"), Some(&toolnexus::serde_json::json!(["label"])));
//! let answer = Answer::ok("req-1").with_data(toolnexus::serde_json::json!({"label": "M"}));
//! assert_eq!(answer.data_as::<Size>().unwrap().label, "M");
//! ```

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Generated code names the runtime `::toolnexus`; this makes that path work inside the
// crate itself too.
extern crate self as toolnexus;

pub mod builtin;
mod client;
mod extensions;
#[macro_use]
mod suspend_macros;
pub mod form;
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
#[path = "private/mod.rs"]
pub mod __private;

#[cfg(any(fuzzing, feature = "__bench", feature = "testing"))]
#[doc(hidden)]
#[path = "hooks.rs"]
pub mod __hooks;

pub use client::{
    BeforeTool, ClientError, Conversation, ConversationStore, ErrorDetail, InMemoryStore, Limit,
    LlmCall, LlmClient, LlmClientBuilder, Message, MetricEvent, ProviderState, RetryDecision, Run,
    RunOptions, RunResult, RunStatus, RunStream, StoreError, StreamEvent, Style, ToolCall,
    ToolCallInfo, ToolCallRecord, ToolChoice, ToolOutput, UnknownStyle, Usage,
    SEMANTIC_CONVENTIONS,
};
pub use extensions::{Ext, Extensions, MissingExtension};
pub use native::NativeTool;
pub use outcome::ToolOutcome;
pub use result::{IntoToolResult, Json, ToolResult};
pub use suspension::{Answer, AnswerDataError, Refusal, Request, RequestKind};
/// The token that cancels a run (see [`Run::cancel`]), re-exported from
/// `tokio-util` so hosts need not depend on it.
pub use tokio_util::sync::CancellationToken;
pub use tool::{Answered, BoxFuture, Tool, ToolContext, ToolSource, Toolbox};
pub use toolkit::{Approval, ToolDeclaration, Toolkit, ToolkitBuilder, ToolkitError};

/// The kinds of [`Run`]: which start a run has decides which settings it takes (only a
/// fresh run takes a history).
pub mod run {
    pub use crate::client::run::{Fresh, InThread, Resume};
}

pub use toolnexus_macros::{tool, toolbox};

/// The schemars this crate implements against (1.x): derive `JsonSchema` through it with
/// `#[schemars(crate = "toolnexus::schemars")]`.
pub use schemars;
/// The serde this crate implements against: derive through it with
/// `#[serde(crate = "toolnexus::serde")]`.
pub use serde;
/// The serde_json whose `Value` the tool API speaks.
pub use serde_json;

/// The README's code blocks, run as doctests so the README cannot drift from the API.
#[cfg(all(doctest, feature = "testing"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
