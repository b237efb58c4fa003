//! What must hold for any input, beyond "no panic".

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde::de::DeserializeOwned;
use serde::Serialize;
use toolnexus::__hooks::DecodedReply;
use toolnexus::{ClientError, Message};

/// A reply either parses into a consistent turn whose transcript entry survives a JSON round
/// trip (a durable host persists it), or is refused as an unreadable response.
pub fn check_reply(parsed: Result<DecodedReply, ClientError>) {
    match parsed {
        Ok(reply) => {
            assert_eq!(reply.calls.len(), reply.arg_errors.len());
            for (call, problem) in reply.calls.iter().zip(&reply.arg_errors) {
                if problem.is_some() {
                    assert!(call.args.is_string(), "rejected arguments are kept as text");
                }
            }
            let entry = Message::Assistant {
                state: reply.state.map(Box::new),
                content: reply.text,
                tool_calls: reply.calls,
            };
            round_trip(&entry);
        }
        Err(e) => {
            assert!(matches!(e, ClientError::InvalidResponse(_)), "{e:?}");
            assert!(!e.to_string().is_empty());
        }
    }
}

/// Serializes `value` and reads it back: it must come back equal.
pub fn round_trip<T>(value: &T)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_vec(value).expect("wire types always serialize");
    let back: T = serde_json::from_slice(&text).unwrap_or_else(|e| {
        panic!(
            "{e}: {value:?} does not load back from {}",
            String::from_utf8_lossy(&text)
        )
    });
    assert_eq!(&back, value);
}

/// Polls a future that never waits on I/O to completion.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
}
