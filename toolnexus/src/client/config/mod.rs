//! How a client is configured: [`LlmClientBuilder`](crate::LlmClientBuilder) and what it
//! checks and builds into [`Settings`](settings::Settings), the request settings a run may
//! override, and the host's callbacks. Everything here is decided once, when the client is
//! built; the run driver only reads it.

pub(crate) mod builder;
pub(crate) mod callbacks;
pub(crate) mod request_options;
pub(crate) mod settings;
pub(crate) mod tool_choice;
