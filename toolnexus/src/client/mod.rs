//! The LLM client: [`LlmClient`] and its builder, the transcript and result types, and
//! behind them the run driver, the model exchange (retries, observation), the HTTP
//! transport and the provider modules. This file only declares and re-exports.

mod builder;
mod call_end;
mod call_seed;
mod driver;
mod error;
mod event;
mod exchange;
mod hooks;
mod journal;
mod limits;
mod llm_client;
mod message;
mod metrics;
mod prometheus;
mod provider;
mod provider_state;
mod redact;
mod request_options;
mod retry;
pub(crate) mod run;
mod run_options;
mod run_result;
mod settings;
pub(crate) mod spans;
mod store;
mod streaming;
mod telemetry;
pub(crate) mod tls;
mod tool_choice;
mod trace_context;
mod transport;

pub use builder::LlmClientBuilder;
pub(crate) use call_seed::CallSeed;
pub use error::{ClientError, ErrorDetail};
pub use event::StreamEvent;
pub use hooks::{BeforeTool, LlmCall, ToolCallInfo};
pub use journal::{
    InMemoryJournal, Journal, JournalError, RecordedCall, RecordedReply, Step, StepKey,
};
pub use llm_client::{Conversation, LlmClient};
pub use message::{Message, ProviderState, ToolCall, ToolOutput};
pub use metrics::MetricEvent;
pub use provider::{Style, UnknownStyle};
pub use retry::RetryDecision;
pub use run::Run;
pub use run_options::RunOptions;
pub use run_result::{Limit, RunResult, RunStatus, ToolCallRecord, Usage};
pub use spans::SEMANTIC_CONVENTIONS;
pub use store::{ConversationStore, InMemoryStore, StoreError};
pub use streaming::RunStream;
pub use tool_choice::ToolChoice;

#[cfg(any(fuzzing, feature = "__bench", feature = "testing"))]
pub use provider::decoded_reply::{decode_reply, DecodedReply};
#[cfg(any(fuzzing, feature = "__bench", feature = "testing"))]
pub(crate) use provider::Outgoing;
