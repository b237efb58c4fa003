//! The AG-UI endpoint end to end: a real loopback server on a scripted model, its threads
//! in a real SQLite file or PostgreSQL database, driven by the official client
//! (`@ag-ui/client`'s `HttpAgent` in Node, `TOOLNEXUS_TEST_AGUI`, set up by
//! scripts/test.sh) and, for what no client would send, by raw HTTP; signed into with the
//! access tokens of a real OpenID provider (`TOOLNEXUS_TEST_OIDC`).

#[path = "../../../examples/shop_agent/nested.rs"]
mod nested;
#[path = "../../../examples/shop/mod.rs"]
mod shop;
#[path = "../../../examples/shop_agent/agent.rs"]
mod shop_agent;
mod support;

mod agents;
mod flows;
mod hostile;
mod identity;
mod oidc;
mod owners;
mod reasoning;
mod restart;
mod rules;
mod snapshots;
