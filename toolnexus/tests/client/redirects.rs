//! Where requests go: every request names the base URL's host, a redirect within the base
//! URL's origin is followed with the same POST, and one to another origin is not, so the
//! key (in a header reqwest would not drop, like Anthropic's `x-api-key`) never leaves.

use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, RunStatus, Style, Toolkit};

use crate::support::*;

fn redirect_to(location: String) -> Reply {
    Reply::raw(307, "text/plain", "moved").with_header("location", location)
}

#[tokio::test]
async fn every_request_names_the_base_urls_host() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
        let client = on(&mock, style).build().unwrap();
        client.run("hello", &Toolkit::empty()).await.unwrap();
        let seen = mock.requests();
        let addr = mock.addr().to_string();
        assert_eq!(seen[0].header("host"), Some(addr.as_str()), "{style:?}");
    }
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_with_the_same_post() {
    let mock = MockLlm::start([]).await.unwrap();
    mock.push(redirect_to(format!("{}/messages", mock.base_url())));
    mock.push(Reply::text("here"));
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let result = client.run("hello", &Toolkit::empty()).await.unwrap();

    assert_eq!(
        (result.status, result.text.as_str()),
        (RunStatus::Done, "here")
    );
    let seen = mock.requests();
    assert_eq!(seen.len(), 2, "the redirect is followed once");
    assert_eq!(seen[1].method, "POST");
    assert_eq!(seen[0].raw_body, seen[1].raw_body, "with the same body");
    assert_eq!(seen[1].header("x-api-key"), Some("test-key"));
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_and_the_key_stays() {
    // Another port of the same host is another origin.
    let elsewhere = MockLlm::start([Reply::text("not here")]).await.unwrap();
    let target = format!("{}/messages", elsewhere.base_url());
    let mock = MockLlm::start([redirect_to(target.clone())]).await.unwrap();
    let client = on(&mock, Style::Anthropic).build().unwrap();

    let err = client.run("hello", &Toolkit::empty()).await.unwrap_err();

    let ClientError::Status { status, excerpt } = &err else {
        panic!("expected the redirect's status, got {err:?}");
    };
    assert_eq!(*status, 307);
    assert!(excerpt.contains(&target), "{excerpt}");
    assert!(
        err.to_string().contains("outside the base URL's origin"),
        "{err}"
    );
    assert!(elsewhere.requests().is_empty(), "the key went elsewhere");
    assert_eq!(mock.requests().len(), 1, "a redirect is not retried");
}
