//! [`RunStream`]: a run polled by its consumer, handing out the [`StreamEvent`]s it queued,
//! then its end.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use crate::client::error::ClientError;
use crate::client::run::event::{Queue, StreamEvent};
use crate::client::run::result::RunResult;

/// A run's future, boxed so a [`RunStream`] and an awaited [`Run`](crate::Run) can be named.
pub(crate) type BoxedRun<'a> =
    Pin<Box<dyn Future<Output = Result<RunResult, ClientError>> + Send + 'a>>;

/// The events of a run started with [`Run::stream`](crate::Run::stream) (or
/// [`LlmClient::stream`](crate::LlmClient::stream)), ending with [`StreamEvent::Done`] or
/// the run's error. It polls the run and hands out what the run queued, oldest first.
#[must_use = "a stream does nothing unless polled"]
pub struct RunStream<'a> {
    queue: Queue,
    run: Option<BoxedRun<'a>>,
    end: Option<Result<RunResult, ClientError>>,
}

impl<'a> RunStream<'a> {
    pub(crate) fn new<F>(start: impl FnOnce(Queue) -> F) -> Self
    where
        F: Future<Output = Result<RunResult, ClientError>> + Send + 'a,
    {
        let queue = Queue::default();
        RunStream {
            run: Some(Box::pin(start(queue.clone()))),
            queue,
            end: None,
        }
    }
}

impl std::fmt::Debug for RunStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("ended", &self.run.is_none())
            .finish_non_exhaustive()
    }
}

impl Stream for RunStream<'_> {
    type Item = Result<StreamEvent, ClientError>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.queue.pop() {
                return Poll::Ready(Some(Ok(event)));
            }
            let Some(run) = this.run.as_mut() else {
                return Poll::Ready(this.end.take().map(|end| end.map(StreamEvent::Done)));
            };
            match run.as_mut().poll(cx) {
                // The run is waiting (on the network, a tool, `wait_for`): hand out what it
                // queued meanwhile, e.g. the `Pending` event a host answers `wait_for` from.
                Poll::Pending if this.queue.is_empty() => return Poll::Pending,
                Poll::Pending => {}
                Poll::Ready(end) => {
                    this.run = None;
                    this.end = Some(end);
                }
            }
        }
    }
}
