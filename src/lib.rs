//! The workspace's root package. It is never published: it exists so that the
//! cross-crate integration tests (`tests/`) and the runnable programs (`examples/`) live at
//! the root of the repository, next to the two crates users actually depend on.
