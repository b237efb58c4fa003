//! The stream behind [`LlmClient::stream`](crate::LlmClient::stream): a run polled by its
//! consumer, handing out the [`StreamEvent`]s it queued, then its end.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use super::error::ClientError;
use super::event::{Queue, StreamEvent};
use super::run_result::RunResult;

/// Polls the run and hands out what it queued, oldest first, then its end.
pub(crate) struct EventStream<F> {
    queue: Queue,
    run: Option<Pin<Box<F>>>,
    end: Option<Result<RunResult, ClientError>>,
}

impl<F> EventStream<F> {
    pub(crate) fn new(start: impl FnOnce(Queue) -> F) -> Self {
        let queue = Queue::default();
        EventStream {
            run: Some(Box::pin(start(queue.clone()))),
            queue,
            end: None,
        }
    }
}

impl<F> Stream for EventStream<F>
where
    F: Future<Output = Result<RunResult, ClientError>>,
{
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
