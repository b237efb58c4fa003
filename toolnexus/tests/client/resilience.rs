//! Retries (`Retry-After`, the `on_error` classifier), the whole-run timeout and external
//! cancellation, each over HTTP against the mock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    CancellationToken, ClientError, LlmClientBuilder, MetricEvent, RetryDecision, RunResult,
    RunStatus, StreamEvent, Style, Toolkit,
};

use crate::support::*;

/// One 429 carrying `Retry-After: value`, then a text reply. Returns the wait the client
/// chose before its retry (from the failed attempt's metric event), the run's outcome, and
/// how many requests the mock saw.
async fn after_a_429_with(
    value: &str,
    tweak: impl FnOnce(LlmClientBuilder) -> LlmClientBuilder,
) -> (f64, Result<RunResult, ClientError>, usize) {
    let mock = MockLlm::start([
        Reply::error(429, "slow down").with_header("retry-after", value),
        Reply::text("finally"),
    ])
    .await
    .unwrap();
    let metrics = Metrics::default();
    let builder = on(&mock, Style::OpenAi).on_metric(metrics.sink());
    let client = tweak(builder).build().unwrap();
    let result = client.run("hi", &Toolkit::empty()).await;
    let waits: Vec<f64> = metrics
        .events()
        .iter()
        .filter_map(|e| match e {
            MetricEvent::Llm {
                status: Some(429),
                retry_in_ms,
                ..
            } => *retry_in_ms,
            _ => None,
        })
        .collect();
    assert_eq!(waits.len(), 1, "one retried attempt for {value:?}");
    (waits[0], result, mock.calls())
}

/// Ends a run told to wait long, once the chosen wait is on record.
fn cut_short(builder: LlmClientBuilder) -> LlmClientBuilder {
    builder.timeout(Duration::from_millis(100))
}

#[tokio::test]
async fn retry_after_zero_retries_at_once() {
    // A backoff would wait at least an hour here.
    let (wait, result, calls) =
        after_a_429_with("0", |b| b.retry_base(Duration::from_secs(7200))).await;
    assert_eq!(wait, 0.0);
    assert_eq!(result.unwrap().text, "finally");
    assert_eq!(calls, 2);
}

#[tokio::test]
async fn retry_after_delay_seconds_are_honoured() {
    let (wait, result, calls) = after_a_429_with("7", cut_short).await;
    assert_eq!(wait, 7000.0);
    assert_eq!(result.unwrap_err(), ClientError::TimedOut, "still waiting");
    assert_eq!(calls, 1);
}

#[tokio::test]
async fn an_absurd_retry_after_is_capped_by_max_retry_delay() {
    let (wait, _, _) = after_a_429_with("86400", cut_short).await;
    assert_eq!(wait, 60_000.0, "the default cap");

    let (wait, result, calls) =
        after_a_429_with("3", |b| b.max_retry_delay(Duration::from_millis(5))).await;
    assert_eq!(wait, 5.0);
    assert_eq!(result.unwrap().status, RunStatus::Done);
    assert_eq!(calls, 2);
}

#[tokio::test]
async fn every_other_retry_after_form_falls_back_to_the_backoff() {
    for value in [
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "-1",
        "1.5",
        "+2",
        "2 s",
        "soon",
        "",
        "99999999999999999999999999999",
    ] {
        let (wait, result, calls) = after_a_429_with(value, |b| b).await;
        // retry_base 1 ms: the first backoff is 0.5 ms plus up to 0.5 ms of jitter.
        assert!((0.5..1.0).contains(&wait), "{value:?}: waited {wait} ms");
        assert_eq!(result.unwrap().text, "finally", "{value:?}");
        assert_eq!(calls, 2, "{value:?}");
    }
}

#[tokio::test]
async fn on_error_can_retry_what_the_default_policy_would_not() {
    let mock = MockLlm::start([Reply::error(409, "conflict"), Reply::text("ok")])
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let client = on(&mock, Style::OpenAi)
        .on_error(move |e: &ClientError| {
            log.lock().unwrap().push(e.clone());
            match e {
                ClientError::Status { status: 409, .. } => RetryDecision::Retry,
                other => RetryDecision::standard(other),
            }
        })
        .build()
        .unwrap();
    let result = client.run("hi", &Toolkit::empty()).await.unwrap();
    assert_eq!(result.text, "ok");
    assert_eq!(mock.calls(), 2);
    let seen = seen.lock().unwrap();
    assert!(
        matches!(&seen[..], [ClientError::Status { status: 409, excerpt }] if excerpt.contains("conflict")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn on_error_can_refuse_a_retry_and_choose_the_delay() {
    let mock = MockLlm::start([Reply::error(503, "busy"), Reply::text("unused")])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi)
        .on_error(|_: &ClientError| RetryDecision::Fail)
        .build()
        .unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 503, .. }),
        "{err}"
    );
    assert_eq!(mock.calls(), 1);

    let mock = MockLlm::start([Reply::error(503, "busy"), Reply::text("ok")])
        .await
        .unwrap();
    let metrics = Metrics::default();
    let client = on(&mock, Style::OpenAi)
        .on_metric(metrics.sink())
        .on_error(|_: &ClientError| RetryDecision::RetryAfter(Duration::from_millis(3)))
        .build()
        .unwrap();
    client.run("hi", &Toolkit::empty()).await.unwrap();
    let first = metrics.events().into_iter().next();
    assert!(
        matches!(first, Some(MetricEvent::Llm { retry_in_ms: Some(ms), .. }) if ms == 3.0),
        "{first:?}"
    );
}

#[tokio::test]
async fn retries_bound_the_classifier() {
    let mock = MockLlm::start([
        Reply::error(400, "bad"),
        Reply::error(400, "bad"),
        Reply::error(400, "bad"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::Anthropic)
        .retries(1)
        .on_error(|_: &ClientError| RetryDecision::Retry)
        .build()
        .unwrap();
    let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 400, .. }),
        "{err}"
    );
    assert_eq!(mock.calls(), 2, "one try and one retry");
}

#[tokio::test]
async fn a_timeout_aborts_the_request_in_flight_and_is_not_retried() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("late").delayed(Duration::from_secs(30))])
            .await
            .unwrap();
        let metrics = Metrics::default();
        let client = on(&mock, style)
            .timeout(Duration::from_millis(100))
            .on_metric(metrics.sink())
            .build()
            .unwrap();
        let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
        assert_eq!(err, ClientError::TimedOut, "{style:?}");
        soon("the server to see the drop", mock.wait_for_dropped(1)).await;
        assert_eq!(mock.calls(), 1, "{style:?}: an abort is never retried");
        assert!(
            matches!(metrics.events().last(), Some(MetricEvent::Run { error: Some(e), .. }) if e == "the run timed out"),
            "{style:?}"
        );
    }
}

#[tokio::test]
async fn cancelling_aborts_the_request_in_flight() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("late").delayed(Duration::from_secs(30))])
            .await
            .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::empty();
        let cancel = CancellationToken::new();
        let run = client.run("hi", &tk).cancel(cancel.clone());
        let stop = async {
            mock.wait_for_calls(1).await;
            cancel.cancel();
        };
        let (result, ()) = soon("the cancelled run", async { tokio::join!(run, stop) }).await;
        assert_eq!(result.unwrap_err(), ClientError::Cancelled, "{style:?}");
        soon("the server to see the drop", mock.wait_for_dropped(1)).await;
        assert_eq!(mock.calls(), 1, "{style:?}");
    }
}

#[tokio::test]
async fn a_cancelled_or_timed_out_stream_ends_with_that_error() {
    let mock = MockLlm::start([
        Reply::text("late").delayed(Duration::from_secs(30)),
        Reply::text("late").delayed(Duration::from_secs(30)),
    ])
    .await
    .unwrap();
    let tk = Toolkit::empty();
    let cancel = CancellationToken::new();
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let run = client.run("hi", &tk).cancel(cancel.clone());
    let stream = run.stream().collect::<Vec<_>>();
    let stop = async {
        mock.wait_for_calls(1).await;
        cancel.cancel();
    };
    let (items, ()) = soon("the cancelled stream", async { tokio::join!(stream, stop) }).await;
    assert!(
        matches!(items[..], [Err(ClientError::Cancelled)]),
        "{items:?}"
    );
    soon("the server to see the drop", mock.wait_for_dropped(1)).await;

    // Long enough for the request to reach the server on a busy machine: a client's first
    // streamed request also sets up its streaming client (and TLS) within that time, and a
    // request that timed out before it was sent leaves the server no connection to see drop.
    let client = on(&mock, Style::OpenAi)
        .timeout(Duration::from_millis(1000))
        .build()
        .unwrap();
    let items: Vec<Result<StreamEvent, ClientError>> =
        soon("the timed-out stream", client.stream("hi", &tk).collect()).await;
    assert!(
        matches!(items[..], [Err(ClientError::TimedOut)]),
        "{items:?}"
    );
    soon("the server to see the drop", mock.wait_for_dropped(2)).await;
}

#[tokio::test]
async fn a_token_cancelled_beforehand_sends_nothing() {
    let mock = MockLlm::start([Reply::text("unused")]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = client
        .run("hi", &Toolkit::empty())
        .cancel(cancel)
        .await
        .unwrap_err();
    assert_eq!(err, ClientError::Cancelled);
    assert_eq!(mock.calls(), 0);
}
