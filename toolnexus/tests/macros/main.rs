//! The macros at run time: what `#[tool]` fns and `#[toolbox]` methods become, the
//! approvals they declare, the typed answers `pending!` asks for, and the forms tools are
//! written in.

#[path = "../common/mod.rs"]
mod common;

mod approval;
mod authoring;
mod tool_fn;
mod toolbox;
mod typed_answers;
