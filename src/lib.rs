//! The workspace's root package. It is never published: it exists so that the
//! cross-crate integration tests (`tests/`) live at the root of the repository, next to
//! the crates users actually depend on. The runnable programs (`examples/`) belong to the
//! example packages under `examples/core`, `examples/inbox`, `examples/mcp`, `examples/a2a`
//! and `examples/agui`.

/// The repository README's code blocks, run as doctests (with this package's
/// dev-dependencies) so the README cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
