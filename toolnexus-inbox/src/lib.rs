#![doc = include_str!("../GUIDE.md")]
#![warn(missing_docs)]

mod audit;
mod clock;
mod deadline;
mod error;
pub mod form;
mod inbox;
mod notify;
mod parked;
mod people;
mod resume;
mod spans;
mod state;
mod store;
mod worker;

#[cfg(feature = "web")]
pub mod web;

pub use audit::{AuditEntry, AuditKind};
pub use deadline::{Escalation, Expiry};
pub use error::InboxError;
pub use inbox::{Inbox, InboxBuilder};
pub use notify::{Delivery, DeliveryState, Event, Webhook};
pub use parked::{Parked, Resumed, WaitingPage};
pub use people::Person;
pub use state::ParkedState;
pub use store::SqliteSync;
pub use worker::{Worker, WorkerReport};
