//! The offline testing stub (`toolnexus::testing`) driven over real HTTP with a plain
//! reqwest client: both wire formats, JSON and SSE, errors, delays, recording.

mod support;

mod connections;
mod json;
mod replies;
mod script;
mod sse;
