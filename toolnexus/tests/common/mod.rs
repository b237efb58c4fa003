//! The fixtures every suite of the workspace shares.
pub use toolnexus_test_support::fixtures::*;
