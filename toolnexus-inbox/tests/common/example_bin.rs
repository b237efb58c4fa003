//! The example programs, as the suites start them.
pub use toolnexus_test_support::example_bin::*;
