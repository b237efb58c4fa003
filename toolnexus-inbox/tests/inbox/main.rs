//! The inbox end to end: runs parked in a real SQLite file or PostgreSQL database,
//! answered, and resumed through a scripted model over loopback HTTP. Every test body runs
//! on both engines; PostgreSQL comes from `TOOLNEXUS_TEST_PG_URL` (scripts/test.sh).

#[path = "../common/mod.rs"]
mod common;
mod receiver;
mod support;

mod basics;
mod changes;
mod concurrency;
mod crash;
mod deadlines;
mod faults;
mod forms;
mod listing;
mod posts;
mod quorum;
mod several;
mod side_doors;
mod tampering;
mod team;
mod webhooks;

use common::{example_bin, pg};
