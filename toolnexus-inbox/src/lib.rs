#![doc = include_str!("../GUIDE.md")]
#![warn(missing_docs)]

// The crate is grouped by concern: the handle and its settings (`inbox`), a run's life
// from park to resume (`lifecycle`), the host's rules (`policy`), what doors keep
// (`doors`), what the inbox tells (`records`, `notify`), its storage (`store`), the
// answers' receipts (`receipt`) and the page (`web`). The public names are re-exported
// here, flat, whichever group defines them.
mod clock;
mod doors;
mod error;
mod inbox;
mod lifecycle;
mod notify;
mod policy;
pub mod receipt;
mod records;
mod store;

#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "web")]
pub mod web;

pub use doors::admission::{Admission, DEFAULT_MAX_BODY};
pub use doors::chain::Latest;
pub use doors::in_flight::{InFlight, InFlightGuard};
pub use doors::listing::{Listed, RecordCursor, RecordQuery};
pub use doors::record::{Door, DoorRecord};
pub use doors::starter::{Sight, Starter};
pub use error::{InboxError, MAX_CHAIN};
pub use inbox::{Inbox, InboxBuilder};
pub use lifecycle::cancel::Cancelled;
pub use lifecycle::vote::{Approvals, Vote};
pub use lifecycle::worker::{Worker, WorkerReport};
pub use notify::webhook::{Event, Webhook};
pub use notify::{Delivery, Post, PostDelivery};
pub use policy::deadline::{Escalation, Expiry};
pub use policy::delegation::Delegation;
pub use policy::identify::{BearerTokens, Directory, Identify, Identifying, Verdict};
#[cfg(feature = "oidc")]
pub use policy::oidc::{OidcTokens, OidcTokensBuilder, SigningAlg, TokenRefused};
pub use policy::people::{Person, Responder};
pub use policy::refusal::{InsufficientScope, Refused, Unidentified};
pub use records::audit::{AuditEntry, AuditKind};
pub use records::parked::{Parked, Resumed, WaitingPage};
pub use records::state::{DeliveryState, ParkedState};
pub use store::SqliteSync;
