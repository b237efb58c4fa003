#![doc = include_str!("../GUIDE.md")]
#![warn(missing_docs)]

mod admit;
mod answer;
mod audit;
mod awaited;
mod cancel;
mod chain;
mod clock;
mod deadline;
mod delegation;
mod door;
mod error;
mod identify;
mod in_flight;
mod inbox;
mod journal;
mod note;
mod notify;
mod overdue;
mod park;
mod parked;
mod people;
pub mod receipt;
mod resume;
mod spans;
mod starter;
mod state;
mod store;
mod vote;
#[cfg(test)]
mod wait_tests;
mod webhook;
mod worker;

#[cfg(feature = "web")]
pub mod web;

pub use audit::{AuditEntry, AuditKind};
pub use cancel::Cancelled;
pub use chain::{Latest, MAX_CHAIN};
pub use deadline::{Escalation, Expiry};
pub use delegation::Delegation;
pub use door::{Door, DoorRecord};
pub use error::InboxError;
pub use identify::{BearerTokens, Directory, Identify};
pub use in_flight::{InFlight, InFlightGuard};
pub use inbox::{Inbox, InboxBuilder};
pub use notify::Delivery;
pub use parked::{Parked, Resumed, WaitingPage};
pub use people::{Person, Responder};
pub use starter::{Sight, Starter};
pub use state::{DeliveryState, ParkedState};
pub use store::SqliteSync;
pub use vote::{Approvals, Vote};
pub use webhook::{Event, Webhook};
pub use worker::{Worker, WorkerReport};
