//! A reply whose head has arrived, as an attempt reads it, whichever client brought it:
//! the pool's own HTTP/1.1 exchange, hyper's HTTP/2 connection, or reqwest.

use std::future::Future;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{HeaderName, CONTENT_LENGTH};
use hyper::StatusCode;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What an attempt reads of a reply: its status, the few headers it looks at, and its body
/// within a cap.
pub(crate) trait Arrived {
    fn status(&self) -> StatusCode;

    /// A header's value as text: only `Location` and `Retry-After` are asked for, and only
    /// of a reply that is not a success.
    fn header(&self, name: &HeaderName) -> Option<&str>;

    /// The length the reply announces.
    fn content_length(&self) -> Option<u64>;

    /// At most `limit` bytes of the body, so a hostile or runaway reply never fills memory,
    /// and whether the body went on past them (it is then not read further).
    fn body(
        &mut self,
        limit: usize,
    ) -> impl Future<Output = Result<(Bytes, bool), BoxError>> + Send;
}

impl<B> Arrived for hyper::Response<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin + Send,
    B::Error: Into<BoxError>,
{
    fn status(&self) -> StatusCode {
        self.status()
    }

    fn header(&self, name: &HeaderName) -> Option<&str> {
        self.headers().get(name)?.to_str().ok()
    }

    fn content_length(&self) -> Option<u64> {
        self.headers()
            .get(CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse()
            .ok()
    }

    async fn body(&mut self, limit: usize) -> Result<(Bytes, bool), BoxError> {
        let announced = Arrived::content_length(self);
        read_capped(self.body_mut(), announced, limit).await
    }
}

/// Reads at most `limit` bytes of a body, frame by frame.
async fn read_capped<B>(
    incoming: &mut B,
    announced: Option<u64>,
    limit: usize,
) -> Result<(Bytes, bool), BoxError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let mut body = Capped::new(limit, announced);
    while let Some(frame) = incoming.frame().await {
        let Ok(chunk) = frame.map_err(Into::into)?.into_data() else {
            continue;
        };
        if let Some(cut) = body.push(chunk) {
            return Ok((cut, true));
        }
    }
    Ok((body.finish(), false))
}

/// A body gathered piece by piece under a cap. A body that came in one piece, as a small
/// reply does, is handed on as it was read, without a copy; more pieces are joined.
pub(crate) struct Capped {
    first: Bytes,
    joined: Option<Vec<u8>>,
    limit: usize,
    /// The length the reply announced: only a hint, trusted within the limit.
    hint: usize,
}

impl Capped {
    pub(crate) fn new(limit: usize, announced: Option<u64>) -> Self {
        Capped {
            first: Bytes::new(),
            joined: None,
            limit,
            hint: announced.unwrap_or(0).min(limit as u64) as usize,
        }
    }

    /// Adds `chunk`; when it passes the cap, the body cut at the cap, not to be read further.
    pub(crate) fn push(&mut self, chunk: Bytes) -> Option<Bytes> {
        let read = self.joined.as_ref().map_or(self.first.len(), Vec::len);
        if chunk.len() > self.limit - read {
            let mut body = self.joined.take().unwrap_or_else(|| self.first.to_vec());
            body.extend_from_slice(&chunk[..self.limit - read]);
            return Some(body.into());
        }
        match &mut self.joined {
            Some(body) => body.extend_from_slice(&chunk),
            None if self.first.is_empty() => self.first = chunk,
            None => {
                let mut body = Vec::with_capacity(self.hint.max(read + chunk.len()));
                body.extend_from_slice(&self.first);
                body.extend_from_slice(&chunk);
                self.joined = Some(body);
            }
        }
        None
    }

    /// The body gathered.
    pub(crate) fn finish(self) -> Bytes {
        self.joined.map_or(self.first, Bytes::from)
    }
}
