//! Ready-made tools a host adds to its [`Toolkit`](crate::Toolkit) as they are.
//!
//! Their names, argument schemas and suspension requests are the ones every toolnexus port
//! uses, so a model, a prompt or a host written against another port works unchanged. They
//! report the source [`ToolSource::Builtin`](crate::ToolSource::Builtin) (`"builtin"`) in
//! metrics.

mod question;

pub use question::Question;
