//! The suspension wire data: what a parked tool asks for ([`Request`]) and what a host
//! answers ([`Answer`]). The JSON keys are shared with every other toolnexus port, so a
//! request written by one process can be answered by another.

mod answer;
mod answers;
mod asks;
pub(crate) mod bound;
mod canonical;
mod codes;
mod digest;
mod present;
pub(crate) mod receipt;
mod relay;
mod request;
mod rule;
mod settle;
pub(crate) mod signed;

pub use answer::{Answer, AnswerDecodeError};
pub use answers::{check_answers, AnswerSetError};
pub use asks::Asks;
pub use canonical::canonical_json;
pub use codes::{Refusal, RequestKind};
pub use digest::call_digest;
pub(crate) use present::present;
pub use receipt::{data_digest, Receipt};
pub use relay::Relay;
pub(crate) use relay::VIA_KEY;
pub use request::Request;
pub(crate) use rule::whole;
pub use rule::{Edits, Rule, RuleError};
pub use settle::SettledCall;
