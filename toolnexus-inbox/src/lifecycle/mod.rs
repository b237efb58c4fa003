//! A parked run's life, in the order it lives it: parked ([`park`]), answered ([`answer`],
//! each answer admitted for a person and counted as their [`vote`]), resumed once by a
//! worker ([`resume`], driven by the [`worker`] loop), or cancelled, expired or escalated
//! on the way ([`cancel`], [`overdue`]). Each step is a transaction of its own on the
//! [`Inbox`](crate::inbox::Inbox), so what one step wrote is all the next one reads.

pub(crate) mod admit;
pub(crate) mod answer;
pub(crate) mod cancel;
pub(crate) mod overdue;
pub(crate) mod park;
pub(crate) mod resume;
pub(crate) mod vote;
pub(crate) mod worker;
