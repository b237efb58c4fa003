//! Support for macro-generated code. Not public API: names and signatures may change in
//! any release.
//!
//! By role: `arguments` decodes a call's arguments and builds the input schema,
//! `injection` fills the parameters the runtime injects, `returns` turns what a body
//! returns into a result, `forms` puts a suspension's answer form in its request,
//! `several` joins the requests of `pending_all!` into one suspension;
//! `approval` words the prompt of an approval a tool declares.
//!
//! `ensure_crypto_provider` is for the sibling crates, which build HTTP clients on the
//! core's reqwest and need the same rustls provider in place first.

mod approval;
mod arguments;
mod forms;
mod injection;
mod returns;
mod several;

use std::future::Future;

use serde_json::Value;

use crate::ToolResult;

pub use approval::*;
pub use arguments::*;
pub use forms::*;
pub use injection::*;
pub use returns::*;
pub use several::*;

pub use crate::client::http::tls::ensure_crypto_provider;

pub use schemars;
pub use serde;
pub use serde_json;
pub use toolnexus_macros::{__auth_required, __pending, __pending_all};

/// Runs a tool body, turning a panic into an error result so the run goes on.
pub fn guard<'a, F: Future<Output = ToolResult> + 'a>(
    tool: &'a str,
    fut: F,
) -> impl Future<Output = ToolResult> + 'a {
    crate::panics::guard(tool, fut)
}

/// A JSON value's kind, for error messages that must not echo the value itself.
pub fn kind_of(value: &Value) -> &'static str {
    crate::tool_args::kind_of(value)
}

/// Requires a tool body's future to be `Send` (agent loops run tools on multi-threaded
/// runtimes). Generated code calls it spanned at the fn, so a body holding something like
/// an `Rc` across an `.await` is reported there; the name is what the compiler's note
/// shows ("required by this bound in `tool_future_must_be_send`").
pub fn tool_future_must_be_send<F: Future + Send>(f: F) -> F {
    f
}
