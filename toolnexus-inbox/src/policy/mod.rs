//! The host's rules the inbox applies, kept apart from the steps that apply them: who a
//! person is ([`identify`]; from a provider's access tokens, `oidc`), why a door turns a
//! caller away ([`refusal`]), who may answer what ([`people`]), whose rights a person
//! holds for a while ([`delegation`]), and what happens when nobody answers in time
//! ([`deadline`]). A rule here reads no run; the lifecycle asks it.

pub(crate) mod deadline;
pub(crate) mod delegation;
pub(crate) mod identify;
#[cfg(feature = "oidc")]
pub(crate) mod oidc;
pub(crate) mod people;
pub(crate) mod refusal;
