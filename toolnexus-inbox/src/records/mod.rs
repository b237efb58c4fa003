//! What the inbox tells about its runs, to people and to tools: the audit trail
//! ([`audit`]), a run read back as [`Parked`](parked::Parked) ([`parked`]), the closed sets
//! its state columns keep ([`state`]), and the spans of its work on a trace ([`spans`]).
//! Every step of the lifecycle writes through these, so they read alike whoever wrote them.

pub(crate) mod audit;
pub(crate) mod parked;
pub(crate) mod spans;
pub(crate) mod state;
