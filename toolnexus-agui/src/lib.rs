#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod mapping;
pub mod server;
pub mod wire;

pub use server::{AguiServer, AguiServerBuilder};
