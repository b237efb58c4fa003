//! The HTTP side of the mock: accepting connections, answering each request with the next
//! scripted reply, and writing the body (optionally in paced pieces).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::issued::Issued;
use super::recorded::RecordedRequest;
use super::render::{self, Rendered};
use super::reply::{Reply, ReplyBody};
use super::strict;
use super::wire_parts::Exchange;
use crate::Style;

/// How many turns with reasoning the stub remembers for its checks.
const MAX_ISSUED: usize = 1024;

/// Answers requests once the queue is empty.
pub(crate) type Responder = Box<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// Counters a test can wait on.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub(crate) calls: usize,
    pub(crate) dropped: usize,
}

/// State shared by the [`MockLlm`](super::MockLlm) handle and every connection task.
pub(crate) struct Shared {
    state: Mutex<State>,
    fallback: Option<Responder>,
    pub(crate) counts: watch::Sender<Counts>,
    /// Whether requests are checked as the providers check them (the default).
    pub(crate) strict: AtomicBool,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) queue: VecDeque<Reply>,
    pub(crate) requests: Vec<RecordedRequest>,
    /// The turns sent so far, for checking the requests that continue them.
    pub(crate) issued: Vec<Issued>,
}

impl Shared {
    pub(crate) fn new(queue: VecDeque<Reply>, fallback: Option<Responder>) -> Self {
        Shared {
            state: Mutex::new(State {
                queue,
                ..State::default()
            }),
            fallback,
            counts: watch::Sender::new(Counts::default()),
            strict: AtomicBool::new(true),
        }
    }

    /// A panicking `with_fn` closure must not make every later request fail: the state is
    /// plain data that stays consistent, so a poisoned lock is simply taken over.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores the request and returns its 1-based number, counted over the stub's life so
    /// it stays unique after the stored requests are taken.
    fn record(&self, request: RecordedRequest) -> usize {
        self.state().requests.push(request);
        let mut seq = 0;
        self.counts.send_modify(|c| {
            c.calls += 1;
            seq = c.calls;
        });
        seq
    }

    /// The provider's refusal of `request`, if it would refuse it.
    fn refusal(&self, wire: Style, request: &RecordedRequest) -> Option<String> {
        if !self.strict.load(Ordering::Relaxed) {
            return None;
        }
        strict::check(wire, request, &self.state().issued).err()
    }

    /// Remembers a turn whose reasoning state later requests must bring back. Turns
    /// without reasoning are checked from the request alone (ids and order), so a stub that
    /// serves for long without reasoning keeps nothing; with it, the oldest turns are let go
    /// past [`MAX_ISSUED`].
    fn issued(&self, style: Style, seq: usize, reply: &Reply) {
        let ReplyBody::Turn(turn) = &reply.body else {
            return;
        };
        if turn.reasoning.is_none() {
            return;
        }
        let mut state = self.state();
        if state.issued.len() >= MAX_ISSUED {
            state.issued.remove(0);
        }
        state.issued.push(Issued {
            style,
            seq,
            turn: turn.clone(),
        });
    }

    fn next_reply(&self, request: &RecordedRequest) -> Option<Reply> {
        // The closure runs outside the lock so it may take as long as it likes.
        let queued = self.state().queue.pop_front();
        queued.or_else(|| self.fallback.as_ref().map(|f| f(request)))
    }
}

/// Accepts connections until the task is aborted; each connection is served on its own task
/// and closes gracefully once `shutdown`'s sender is gone.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: watch::Receiver<()>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: back off instead of spinning.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let shared = shared.clone();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(shared.clone(), req));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shutdown.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}

/// Answers one request: records it, then serves the next scripted reply, unless the
/// request goes nowhere the mock serves or a provider would refuse it.
async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<PacedBody>, Infallible> {
    let request = match read(req).await {
        Ok(request) => request,
        Err(refusal) => return Ok(refusal.response()),
    };
    let seq = shared.record(request.clone());
    Ok(match route(&shared, &request, seq) {
        Ok((wire, reply)) => answer(&shared, wire, seq, &request, reply).await,
        Err(refusal) => refusal.response(),
    })
}

/// What the mock answers itself instead of a scripted reply.
struct Refusal {
    /// The wire format the error body is written in.
    wire: Style,
    status: StatusCode,
    message: String,
}

impl Refusal {
    fn response(self) -> Response<PacedBody> {
        plain_error(self.wire, self.status, &self.message)
    }
}

/// The request as the mock records it, once its whole body has arrived.
async fn read(req: Request<Incoming>) -> Result<RecordedRequest, Refusal> {
    let (parts, body) = req.into_parts();
    let raw_body = match body.collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        // The client vanished mid-body; nobody reads this answer.
        Err(_) => {
            return Err(Refusal {
                wire: Style::OpenAi,
                status: StatusCode::BAD_REQUEST,
                message: "could not read the request body".to_owned(),
            })
        }
    };
    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    Ok(RecordedRequest::new(
        parts.method.as_str().to_owned(),
        parts.uri.path().to_owned(),
        parts.uri.query().map(str::to_owned),
        headers,
        raw_body,
    ))
}

/// The wire format of the endpoint request #`seq` went to and the reply it gets, or the
/// error the mock answers instead: no such endpoint, not a POST, a request the provider
/// would refuse, or a script used up.
fn route(
    shared: &Shared,
    request: &RecordedRequest,
    seq: usize,
) -> Result<(Style, Reply), Refusal> {
    let Some(wire) = super::recorded::style_for_path(&request.path) else {
        let message = format!(
            "toolnexus MockLlm: no endpoint at {}; it serves POST …/chat/completions (OpenAI), …/messages (Anthropic), …/responses (Responses) and …/models/MODEL:generateContent (Gemini)",
            request.path
        );
        return Err(Refusal {
            wire: Style::OpenAi,
            status: StatusCode::NOT_FOUND,
            message,
        });
    };
    if request.method != "POST" {
        let message = format!(
            "toolnexus MockLlm: {} {} is not served; use POST",
            request.method, request.path
        );
        return Err(Refusal {
            wire,
            status: StatusCode::METHOD_NOT_ALLOWED,
            message,
        });
    }
    if let Some(message) = shared.refusal(wire, request) {
        return Err(Refusal {
            wire,
            status: StatusCode::BAD_REQUEST,
            message,
        });
    }
    let Some(reply) = shared.next_reply(request) else {
        // 410, not a 5xx: a client retries those, and each retry would only find the
        // script used up again while it counted more requests than the test made.
        let message = format!(
            "toolnexus MockLlm: the script ran out: request #{seq} ({} {}) came after its \
             last scripted reply; script more with MockLlm::push or answer the rest with \
             MockLlm::with_fn",
            request.method, request.path
        );
        return Err(Refusal {
            wire,
            status: StatusCode::GONE,
            message,
        });
    };
    Ok((wire, reply))
}

/// Request #`seq`'s scripted reply, rendered in `wire`'s format after its delay.
async fn answer(
    shared: &Shared,
    wire: Style,
    seq: usize,
    request: &RecordedRequest,
    reply: Reply,
) -> Response<PacedBody> {
    let pending = InFlight {
        shared,
        answered: false,
    };
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    pending.answered();

    let rendered = render::render(wire, &reply.body, reply.usage, &Exchange::of(request, seq));
    shared.issued(wire, seq, &reply);
    respond(rendered, &reply.headers, reply.chunk_bytes).unwrap_or_else(|problem| {
        let message = format!(
            "toolnexus MockLlm: the scripted reply is not a valid HTTP response: {problem}"
        );
        plain_error(wire, StatusCode::INTERNAL_SERVER_ERROR, &message)
    })
}

/// Counts the request as dropped when hyper drops the handler before it answered, which it
/// does when the client closes the connection while the reply is delayed.
struct InFlight<'a> {
    shared: &'a Shared,
    answered: bool,
}

impl InFlight<'_> {
    fn answered(mut self) {
        self.answered = true;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.shared.counts.send_modify(|c| c.dropped += 1);
        }
    }
}

/// Builds the response; fails only on what the script itself got wrong (a status outside
/// 100..=999, a header name or value HTTP does not allow).
fn respond(
    rendered: Rendered,
    headers: &[(String, String)],
    chunk_bytes: Option<usize>,
) -> Result<Response<PacedBody>, String> {
    let status =
        StatusCode::from_u16(rendered.status).map_err(|_| format!("status {}", rendered.status))?;
    let content_type = HeaderValue::try_from(rendered.content_type.as_str())
        .map_err(|_| format!("Content-Type {:?}", rendered.content_type))?;
    let is_sse = rendered.content_type == "text/event-stream";

    let mut response = Response::new(PacedBody::new(rendered.body, chunk_bytes));
    *response.status_mut() = status;
    let map = response.headers_mut();
    map.insert(CONTENT_TYPE, content_type);
    if is_sse {
        map.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    let mut scripted: Vec<HeaderName> = Vec::new();
    for (name, value) in headers {
        let name =
            HeaderName::try_from(name.as_str()).map_err(|_| format!("header name {name:?}"))?;
        let value =
            HeaderValue::try_from(value.as_str()).map_err(|_| format!("value of header {name}"))?;
        // The first scripted value of a name replaces the mock's own; later ones add to it.
        if scripted.contains(&name) {
            map.append(name, value);
        } else {
            scripted.push(name.clone());
            map.insert(name, value);
        }
    }
    Ok(response)
}

/// An error the mock itself raises (not scripted), in the wire format of the endpoint.
fn plain_error(wire: Style, status: StatusCode, message: &str) -> Response<PacedBody> {
    let rendered = render::error(wire, status.as_u16(), message);
    let mut response = Response::new(PacedBody::new(rendered.body, None));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A response body that is sent whole, or in pieces with a yield between them so that each
/// piece is flushed to the socket on its own.
pub(crate) struct PacedBody {
    pieces: VecDeque<Bytes>,
    paced: bool,
    yield_next: bool,
}

impl PacedBody {
    fn new(body: Vec<u8>, chunk_bytes: Option<usize>) -> Self {
        let body = Bytes::from(body);
        let pieces = match chunk_bytes {
            Some(n) => (0..body.len())
                .step_by(n)
                .map(|at| body.slice(at..body.len().min(at + n)))
                .collect(),
            None if body.is_empty() => VecDeque::new(),
            None => VecDeque::from([body]),
        };
        PacedBody {
            pieces,
            paced: chunk_bytes.is_some(),
            yield_next: false,
        }
    }
}

impl Body for PacedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.pieces.is_empty() {
            return Poll::Ready(None);
        }
        // Returning Pending makes hyper flush what it has before asking for the next piece.
        if this.yield_next {
            this.yield_next = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        this.yield_next = this.paced;
        Poll::Ready(this.pieces.pop_front().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        // Paced bodies go out with chunked transfer-encoding, as providers' streams do.
        if self.paced {
            SizeHint::default()
        } else {
            SizeHint::with_exact(self.pieces.iter().map(|p| p.len() as u64).sum())
        }
    }
}
