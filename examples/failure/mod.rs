//! How the examples end on an error. A `main` returning `Result<(), E>` prints `Error: `
//! and `E`'s `Debug`, which for most errors is a Rust value (`MissingApiKey { var: … }`);
//! `main` returns `Result<(), Failure>` instead, whose `Debug` is the error's message.

use std::fmt;

/// Any error, shown by its message.
pub struct Failure(Box<dyn std::error::Error>);

// No `impl Error for Failure`: it would overlap with this conversion, which is what lets
// `?` turn any error (or a message, `Err("…".into())`) into a `Failure`.
impl<E: Into<Box<dyn std::error::Error>>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure(error.into())
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}
