//! What the inbox's suites share: the example programs they start, the test cluster's
//! PostgreSQL, and an inbox page served in-process. Included as `mod common;` or by path
//! (`#[path = "../common/mod.rs"] mod common;`), so each test binary compiles the one copy.
#![allow(dead_code)] // each binary uses its own subset

pub mod example_bin;
pub mod page;
pub mod pg;
