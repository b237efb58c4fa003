// The guide is the crate's documentation. Its examples run against the scripted model of
// the `testing` feature, so a doctest run collects them only with that feature; docs show
// the guide whatever the features, and a plain build still has crate docs.
#![cfg_attr(
    any(all(doc, not(doctest)), feature = "testing"),
    doc = include_str!("../GUIDE.md")
)]
#![cfg_attr(
    not(any(all(doc, not(doctest)), feature = "testing")),
    doc = "A vendor-neutral tool layer for LLM agents; the guide is in the crate docs."
)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Generated code names the runtime `::toolnexus`; this makes that path work inside the
// crate itself too.
extern crate self as toolnexus;

mod agent;
pub mod builtin;
mod client;
mod extensions;
#[macro_use]
mod suspend_macros;
pub mod form;
pub mod halted;
mod native;
mod outcome;
mod panics;
mod result;
pub mod round;
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
#[path = "wire_codec.rs"]
pub mod __hooks;

pub use agent::{AgentTool, SubAgent};
pub use client::{
    BeforeTool, ClientError, Conversation, ConversationStore, ErrorDetail, InMemoryJournal,
    InMemoryStore, Journal, JournalError, Limit, LlmCall, LlmClient, LlmClientBuilder, Message,
    MetricEvent, ProviderState, RecordedCall, RecordedReply, RetryDecision, Run, RunOptions,
    RunResult, RunStatus, RunStream, Step, StepKey, StoreError, StreamEvent, Style, ToolCall,
    ToolCallInfo, ToolCallRecord, ToolChoice, ToolOutput, UnknownStyle, Usage,
    SEMANTIC_CONVENTIONS,
};
pub use extensions::{Ext, Extensions, MissingExtension};
pub use native::NativeTool;
pub use outcome::ToolOutcome;
pub use result::{IntoToolResult, Json, ToolResult};
pub use suspension::{
    call_digest, canonical_json, check_answers, data_digest, Answer, AnswerDecodeError,
    AnswerSetError, Asks, Edits, Receipt, Refusal, Relay, Request, RequestKind, Rule, RuleError,
    SettledCall,
};
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

/// Signed receipts of answers: what a [`Receipt`] states ([`Statement`](receipt::Statement),
/// [`ReceiptAnswer`](receipt::ReceiptAnswer)) and the digests it is made of.
pub mod receipt {
    pub use crate::suspension::receipt::{
        data_digest, Receipt, ReceiptAnswer, Statement, RECEIPT_VERSION,
    };
    pub use crate::suspension::signed::{check_approval, UnsignedApproval, VerifyReceipt};
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

/// The crate README's code blocks, run as doctests so the crates.io page cannot drift
/// from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
