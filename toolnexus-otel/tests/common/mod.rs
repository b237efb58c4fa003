//! Fixtures the export's suites share: the workspace's (the styles to loop over, a client on
//! the stub, the `echo` tool) and the loopback OTLP receiver.
pub use toolnexus_test_support::fixtures::*;

pub mod receiver;
