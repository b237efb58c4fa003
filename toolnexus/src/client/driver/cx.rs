//! [`Cx`]: what every level of a run reads — the client's settings, the run's request
//! settings and extensions, the toolkit and the event sink — borrowed once and passed down.

use crate::client::config::request_options::RequestOptions;
use crate::client::config::settings::Settings;
use crate::client::journal::call_seed::CallSeed;
use crate::client::journal::Journal;
use crate::client::run::event::Events;
use crate::{Extensions, Toolkit};

pub(super) struct Cx<'a, E> {
    pub(super) settings: &'a Settings,
    /// The client's request settings with the run's overrides.
    pub(super) request: &'a RequestOptions,
    /// The values the host attached to the run, for its tool calls.
    pub(super) extensions: Option<&'a Extensions>,
    pub(super) tk: &'a Toolkit,
    pub(super) ev: &'a E,
    /// What identifies the run up to the turn whose calls are being settled, for their
    /// idempotency keys; `None` outside a turn.
    pub(super) seed: Option<&'a CallSeed>,
    /// Where the run records its steps, when the host attached a journal.
    pub(super) journal: Option<&'a dyn Journal>,
    /// Retries per model request: the run's own count, else the client's.
    pub(super) retries: u32,
}

// Derives would require `E: Clone`; the fields are references.
impl<E> Clone for Cx<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Cx<'_, E> {}

impl<'a, E: Events> Cx<'a, E> {
    /// The same run, offering `tk` (a `before_llm` hook may have replaced the toolkit).
    pub(super) fn with_tools<'b>(self, tk: &'b Toolkit) -> Cx<'b, E>
    where
        'a: 'b,
    {
        Cx { tk, ..self }
    }

    /// The same run, settling the calls of the turn `seed` identifies.
    pub(super) fn in_turn<'b>(self, seed: &'b CallSeed) -> Cx<'b, E>
    where
        'a: 'b,
    {
        Cx {
            seed: Some(seed),
            ..self
        }
    }
}
