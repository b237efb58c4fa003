//! Everything a durable host persists — tool results, transcripts, whole run results —
//! comes back from JSON exactly as it went in.

use proptest::prelude::*;
use toolnexus::ToolResult;

use crate::strategies::{message, run_result, tool_result};
use crate::support::round_trip;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn tool_results_round_trip(result in tool_result()) {
        round_trip(&result)?;
        let back: ToolResult = serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
        prop_assert_eq!(back.is_pending(), result.is_pending());
        prop_assert_eq!(ToolResult::pending_of(&back), ToolResult::pending_of(&result));
    }

    #[test]
    fn transcripts_round_trip(messages in prop::collection::vec(message(), 0..8)) {
        round_trip(&messages)?;
    }

    #[test]
    fn run_results_round_trip(result in run_result()) {
        round_trip(&result)?;
    }
}
