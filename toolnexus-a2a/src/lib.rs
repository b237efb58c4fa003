#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod error;
pub mod mapping;
mod remote;
pub mod server;
mod signing;

pub use error::A2aError;
pub use remote::{RemoteAgent, RemoteAgentBuilder};
pub use server::{A2aServer, A2aServerBuilder};
pub use signing::{CardKey, CardSigner};
