//! The transcript: the provider-neutral messages of a run, the provider's own state it
//! carries verbatim, and the store a conversation keeps them in. It is plain serde data, so
//! a halted run parked anywhere resumes from it.

pub(crate) mod message;
pub(crate) mod provider_state;
pub(crate) mod store;
