//! [`Settings`]: everything a built client holds — its configuration (request settings
//! included) and the parts it runs
//! with (HTTP transport, retry policy, hooks, telemetry, store) — shared by all its handles
//! and read by the run driver.

use std::sync::Arc;
use std::time::Duration;

use crate::client::config::callbacks::Hooks;
use crate::client::config::request_options::RequestOptions;
use crate::client::http::retry::RetryPolicy;
use crate::client::http::transport::Transport;
use crate::client::observe::telemetry::Telemetry;
use crate::client::provider::Style;
use crate::client::transcript::store::ConversationStore;

pub(crate) struct Settings {
    pub(crate) model: String,
    pub(crate) style: Style,
    pub(crate) base_url: String,
    pub(crate) system_prompt: Option<String>,
    pub(crate) max_turns: usize,
    pub(crate) request: RequestOptions,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_tool_output_bytes: usize,
    pub(crate) transport: Transport,
    pub(crate) retry: RetryPolicy,
    pub(crate) hooks: Hooks,
    pub(crate) telemetry: Telemetry,
    pub(crate) store: Arc<dyn ConversationStore>,
    /// The agent's name on traces, when the host gave one.
    pub(crate) agent: Option<String>,
    /// Whether spans record content (messages, arguments, results).
    pub(crate) trace_content: bool,
}
