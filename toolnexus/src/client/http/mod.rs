//! The wire below the model call: the HTTP clients (and the TLS provider they run on), one
//! attempt and its reply read within a cap, and when a failed attempt is tried again. What
//! an attempt means to the run, and how it is observed, is one layer up in
//! [`exchange`](super::exchange).

pub(crate) mod connect;
pub(crate) mod h1;
pub(crate) mod pool;
pub(crate) mod response;
pub(crate) mod retry;
pub(crate) mod tls;
pub(crate) mod transport;
