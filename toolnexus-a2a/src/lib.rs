#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod error;
pub mod mapping;
pub mod server;

pub use error::A2aError;
pub use server::{A2aServer, A2aServerBuilder};
