//! How a toolnexus suspension reads in A2A, and how an A2A continuation reads back: the
//! shared vocabulary of the server (which reports a halted run as a task waiting for
//! input) and of any client that meets such a task.
//!
//! - [`task_state`] and [`status_message`]: the requests a halted run waits on, as the
//!   task's state and status message (each request's prompt as text, the request itself
//!   as a JSON data part, a sign-in's URL as a url part), and [`requests_of`] reading
//!   them back.
//! - [`answers_of`]: a continuation message as the [`Answer`](toolnexus::Answer)s it
//!   gives, checked against the requests before anything runs.
//! - [`history`]: a run's transcript as A2A messages.

mod answer;
mod request;
mod transcript;

pub use answer::answers_of;
pub use request::{requests_of, status_message, task_state, REQUEST_MEDIA_TYPE};
pub use transcript::history;
pub(crate) use transcript::rendered;
