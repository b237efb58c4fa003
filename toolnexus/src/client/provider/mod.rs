//! The wire formats: one module per provider behind the [`Provider`] trait
//! (endpoint, default base URL, key variable, auth headers, tool declarations, request
//! encoding, reply and stream decoding), picked by [`Style`]. Request bodies are serialized
//! straight from the borrowed transcript; replies are parsed into typed structs.

mod anthropic;
mod arguments;
mod contract;
pub(super) mod decoded_reply;
mod dispatch;
mod gemini;
mod openai;
mod read_stream;
mod responses;
mod sse_parts;
mod style;

pub(crate) use contract::{DecodedReply, Outgoing, Provider};
pub(crate) use read_stream::{read_stream, StreamLimits};
pub use style::{Style, UnknownStyle};
