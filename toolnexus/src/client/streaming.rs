//! [`LlmClient::stream`]: the run loop with its progress handed out as [`StreamEvent`]s.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use super::event::Queue;
use super::run::{RunState, Start};
use super::{ClientError, LlmClient, Message, RunResult, StreamEvent};
use crate::{Answer, Request, Toolkit};

impl LlmClient {
    /// Like [`run`](Self::run), with the run's progress as a stream of [`StreamEvent`]s
    /// (see there for their order) ending in [`StreamEvent::Done`]. Model replies are
    /// requested as server-sent events, so text arrives as it is generated.
    ///
    /// The loop, hooks, suspension rules, retries, timeout and cancellation are those of
    /// `run`; in particular a suspension without `wait_for` ends the stream with `Done` whose
    /// status is [`Pending`](crate::RunStatus::Pending). Nothing runs until the stream is
    /// polled, and it advances only as it is polled. Dropping it aborts the run and its
    /// in-flight request. A failure is yielded as the last item.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use toolnexus::{LlmClient, StreamEvent, Toolkit};
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([Reply::text("Once upon a time, a crab.")]).await?;
    /// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// # let tk = Toolkit::builder().build()?;
    /// let mut story = String::new();
    /// let mut events = std::pin::pin!(client.stream("Tell me a story", &tk));
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         StreamEvent::Text { delta } => story.push_str(&delta),
    ///         StreamEvent::Done(result) => println!("{story}\n[{:?}]", result.status),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(story, "Once upon a time, a crab.");
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream<'a>(
        &'a self,
        prompt: impl Into<String>,
        tk: &'a Toolkit,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'a {
        let transcript = self.new_transcript(prompt.into(), Vec::new());
        EventStream::new(move |queue| async move {
            let state = RunState::new(transcript?);
            self.go(state, Start::Fresh, tk, &queue).await
        })
    }

    /// Like [`run_with_answer`](Self::run_with_answer), streamed as [`stream`](Self::stream)
    /// does. The halted call's settled result comes as a `ToolResult`; results the halted
    /// transcript already held are not repeated.
    pub fn stream_with_answer<'a>(
        &'a self,
        messages: Vec<Message>,
        request: &'a Request,
        answer: Answer,
        tk: &'a Toolkit,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'a {
        EventStream::new(move |queue| async move {
            let start = Start::Resume { request, answer };
            self.go(RunState::new(messages), start, tk, &queue).await
        })
    }
}

/// Polls the run and hands out what it queued, oldest first, then its end.
struct EventStream<F> {
    queue: Queue,
    run: Option<Pin<Box<F>>>,
    end: Option<Result<RunResult, ClientError>>,
}

impl<F> EventStream<F> {
    fn new(start: impl FnOnce(Queue) -> F) -> Self {
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
