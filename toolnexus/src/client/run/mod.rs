//! One run as its host sees it: the [`Run`](setup::Run) being set up and awaited or
//! streamed, what it brings besides its prompt, what it reports as it goes and what it
//! returns. The loop behind it is the [`driver`](super::driver)'s.

pub(crate) mod event;
pub(crate) mod options;
pub(crate) mod result;
pub(crate) mod setup;
pub(crate) mod stream;

pub use setup::{Fresh, InThread, Resume};
