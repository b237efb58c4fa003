//! The approval gate: a person's yes before a tool runs, whatever made the tool. Its rules
//! ([`Approval`] and a tool's own `#[tool(approval)]`), the question a gated call asks and
//! who may answer it, the toolkit's judgement of an approval (edits, receipts), and how the
//! answer settles the call. One module, so every door and the loop gate a call the same
//! way.

mod approval;
mod ask;
mod judge;
mod settle;

pub(crate) use approval::default_prompt;
pub use approval::Approval;
pub(crate) use ask::run_key;
pub(crate) use settle::{approved, changed_fields, settle};
