//! Connections: replies a client gave up on or cancelled are counted as dropped, concurrent
//! requests each get one reply, and dropping the mock closes its port but lets a reply finish.

use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

use crate::support::*;

#[tokio::test]
async fn a_client_that_gives_up_on_a_delayed_reply_is_counted_as_dropped() {
    let mock = MockLlm::start([
        Reply::text("too late").delayed(Duration::from_secs(30)),
        Reply::text("worth the wait").delayed(Duration::from_millis(20)),
    ])
    .await
    .unwrap();
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();

    let err = impatient
        .post(format!("{}{OPENAI}", mock.base_url()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_dropped(1))
        .await
        .expect("the drop is noticed");
    assert_eq!(mock.dropped(), 1);

    let (status, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["message"]["content"], "worth the wait");
    assert_eq!(mock.dropped(), 1, "an answered request is not a drop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_in_flight_request_is_counted_as_dropped_on_multi_thread() {
    let mock = MockLlm::start([Reply::text("never").delayed(Duration::from_secs(30))])
        .await
        .unwrap();
    let url = format!("{}{ANTHROPIC}", mock.base_url());
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&json!({"max_tokens": 64, "messages": []}))
            .send()
            .await
    });

    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_calls(1))
        .await
        .expect("the request arrives");
    request.abort();
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_dropped(1))
        .await
        .expect("the drop is noticed");
    assert_eq!(mock.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_each_get_exactly_one_reply() {
    let n = 16;
    let mock = MockLlm::start((0..n).map(|i| Reply::text(format!("reply {i}"))))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let requests = (0..n).map(|_| {
        let http = http.clone();
        let url = format!("{}{OPENAI}", mock.base_url());
        tokio::spawn(async move {
            let body: Value = http.post(url).json(&json!({})).send().await?.json().await?;
            Ok::<_, reqwest::Error>(
                body["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
    });
    let mut texts: Vec<String> = Vec::new();
    for request in requests.collect::<Vec<_>>() {
        texts.push(request.await.unwrap().unwrap());
    }
    texts.sort();
    let mut expected: Vec<String> = (0..n).map(|i| format!("reply {i}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
    assert_eq!(mock.calls(), n);
}

#[tokio::test]
async fn dropping_the_mock_closes_its_port() {
    let mock = MockLlm::start([]).await.unwrap();
    let url = format!("{}{OPENAI}", mock.base_url());
    drop(mock);
    // Let the aborted accept task be torn down.
    tokio::task::yield_now().await;
    let err = reqwest::Client::new()
        .post(url)
        .json(&json!({}))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err}");
}

#[tokio::test]
async fn dropping_the_mock_lets_an_in_flight_reply_finish() {
    let mock = MockLlm::start([Reply::text("last words").delayed(Duration::from_millis(30))])
        .await
        .unwrap();
    let url = format!("{}{OPENAI}", mock.base_url());
    let request = tokio::spawn(async move {
        let resp = reqwest::Client::new()
            .post(url)
            .json(&json!({}))
            .send()
            .await?;
        resp.json::<Value>().await
    });
    tokio::time::timeout(Duration::from_secs(5), mock.wait_for_calls(1))
        .await
        .expect("the request arrives");
    drop(mock);
    let body = request.await.unwrap().expect("the reply still arrives");
    assert_eq!(body["choices"][0]["message"]["content"], "last words");
}
