//! `RemoteAgent` against real A2A 1.0 agents: ones written with the official Python SDK
//! (`a2a-sdk`, from `TOOLNEXUS_TEST_PYTHON`), hostile ones served here, and a durable
//! resume through the inbox.

mod chain;
mod durable;
mod hostile;
mod sdk;
mod streaming;
mod support;
