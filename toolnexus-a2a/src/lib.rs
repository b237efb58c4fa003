#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod error;
pub mod mapping;
mod remote;
pub mod server;
mod signing;

/// The A2A protocol's wire types (the `a2a-lf` crate), as the server's hooks and the
/// history mapping take and give them.
pub use a2a;
pub use error::A2aError;
pub use remote::{RemoteAgent, RemoteAgentBuilder};
pub use server::{A2aServer, A2aServerBuilder, CardSecurity};
pub use signing::{CardKey, CardSigner};
