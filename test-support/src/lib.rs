//! What the workspace's test suites share, so each crate's suites use one copy:
//! [`fixtures`] on the scripted model, and the [`example_bin`] programs as a user starts
//! them.

#[cfg(feature = "databases")]
pub mod databases;
pub mod example_bin;
pub mod fixtures;
