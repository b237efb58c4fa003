//! The LLM client: [`LlmClient`] and its builder, the transcript and result types, and
//! behind them the run driver, the model exchange (retries, observation), the HTTP
//! transport and the provider modules. This file only declares and re-exports.
//!
//! Grouped by concern, from the host's side down to the wire: [`config`] (how a client is
//! set up), [`run`] (one run as the host sees it), [`driver`] (the loop), [`exchange`] (one
//! model call), [`http`] (one attempt on the wire), [`provider`] (the wire formats); beside
//! them [`transcript`] (what a run says), [`journal`] (what it has done) and [`observe`]
//! (what it tells the world).

mod config;
mod driver;
mod error;
mod exchange;
pub(crate) mod http;
mod journal;
mod llm_client;
mod observe;
mod provider;
mod redact;
pub(crate) mod run;
mod transcript;

pub(crate) use journal::call_seed::CallSeed;
pub(crate) use journal::lent::LentJournal;

pub use config::builder::LlmClientBuilder;
pub use config::callbacks::{BeforeTool, LlmCall, ToolCallInfo};
pub use config::tool_choice::ToolChoice;
pub use error::{ClientError, ErrorDetail};
pub use http::retry::RetryDecision;
pub use journal::{
    InMemoryJournal, Journal, JournalError, RecordedCall, RecordedReply, Step, StepKey,
};
pub use llm_client::{Conversation, LlmClient};
pub use observe::metrics::MetricEvent;
pub use observe::spans::SEMANTIC_CONVENTIONS;
pub use provider::{Style, UnknownStyle};
pub use run::event::StreamEvent;
pub use run::options::RunOptions;
pub use run::result::{Limit, RunResult, RunStatus, ToolCallRecord, Usage};
pub use run::setup::Run;
pub use run::stream::RunStream;
pub use transcript::message::{Message, ProviderState, ToolCall, ToolOutput};
pub use transcript::store::{ConversationStore, InMemoryStore, StoreError};

#[cfg(any(fuzzing, feature = "__bench", feature = "testing"))]
pub use provider::decoded_reply::{decode_reply, DecodedReply};
#[cfg(any(fuzzing, feature = "__bench", feature = "testing"))]
pub(crate) use provider::Outgoing;
