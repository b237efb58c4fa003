//! The metric events of a run.

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{MetricEvent, RunStatus, Style, Toolkit};

use crate::support::*;

#[tokio::test]
async fn a_run_reports_model_calls_tool_calls_and_itself() {
    let approver = Approver::default();
    let mock = purchase_mock().await;
    let metrics = Metrics::default();
    let client = on(&mock, Style::OpenAi)
        .on_metric(metrics.sink())
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
    let result = client.run("buy", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Pending);

    let events = metrics.events();
    assert_eq!(events.len(), 3, "{events:#?}");
    match &events[0] {
        MetricEvent::Llm {
            model,
            status,
            prompt_tokens,
            completion_tokens,
            ms,
            ..
        } => {
            assert_eq!(model, "gpt-4o-mini");
            assert_eq!(*status, Some(200));
            assert_eq!((*prompt_tokens, *completion_tokens), (10, 5));
            assert!(*ms >= 0.0);
        }
        other => panic!("expected an llm event, got {other:?}"),
    }
    match &events[1] {
        MetricEvent::Tool {
            tool,
            source,
            is_error,
            pending,
            ..
        } => {
            assert_eq!(tool, "approve_purchase");
            assert_eq!(source, "native");
            assert!(!is_error, "a suspension is not a tool error");
            assert!(pending);
        }
        other => panic!("expected a tool event, got {other:?}"),
    }
    match &events[2] {
        MetricEvent::Run {
            model,
            turns,
            tool_calls,
            total_tokens,
            status,
            error,
            ..
        } => {
            assert_eq!(model, "gpt-4o-mini");
            assert_eq!((*turns, *tool_calls, *total_tokens), (1, 1, 15));
            assert_eq!(*status, Some(RunStatus::Pending));
            assert_eq!(*error, None);
        }
        other => panic!("expected a run event, got {other:?}"),
    }
    let wire = serde_json::to_value(&events[1]).unwrap();
    assert_eq!(wire["type"], "tool");
    assert_eq!(wire["pending"], true);
}

#[tokio::test]
async fn a_failed_run_reports_its_error_and_each_attempt() {
    let mock = MockLlm::start(vec![Reply::error(503, "busy"); 2])
        .await
        .unwrap();
    let metrics = Metrics::default();
    let client = on(&mock, Style::OpenAi)
        .retries(1)
        .on_metric(metrics.sink())
        .build()
        .unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();

    let events = metrics.events();
    let statuses: Vec<Option<u16>> = events
        .iter()
        .filter_map(|e| match e {
            MetricEvent::Llm { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [Some(503), Some(503)]);
    match events.last() {
        Some(MetricEvent::Run {
            status,
            error,
            turns,
            ..
        }) => {
            assert_eq!(*status, None);
            assert_eq!(error.as_deref(), Some(err.to_string().as_str()));
            assert_eq!(*turns, 1);
        }
        other => panic!("expected a run event last, got {other:?}"),
    }
}
