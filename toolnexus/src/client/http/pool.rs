//! The connections of the direct client: a model client talks to one origin, its base
//! URL's, so its pool is a list of idle HTTP/1.1 connections and at most one shared HTTP/2
//! connection, with no key to hash and nothing to look up.
//!
//! A request takes the connection put back last; a new connection is made only when no
//! idle one is left. HTTP/1.1 goes through the pool's own exchange ([`h1`]), so a
//! connection put back has its reply read to the end and is ready at once; HTTP/2 goes
//! through hyper's connection, which multiplexes every request on one.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http2;
use hyper::header::{HeaderMap, HeaderName, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_service::Service;

use crate::client::http::h1;
use crate::client::http::response::Arrived;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Body = Full<Bytes>;

/// How long a connection may stay idle before it is closed, as reqwest keeps them.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// How the pool reaches its origin.
pub(crate) enum Connector {
    /// A base URL on `http`: plain TCP, no TLS set-up made or loaded.
    Plain(HttpConnector),
    /// Any other base URL (`https`): rustls, HTTP/2 when the server picks it by ALPN.
    Tls(HttpsConnector<HttpConnector>),
}

/// The connections to one origin, shared by every run of a client.
pub(crate) struct Pool {
    shared: Arc<Shared>,
}

struct Shared {
    connector: Connector,
    /// The base URL, which names the origin every connection goes to.
    origin: Uri,
    /// The request line and the client's headers of a POST to the base URL over
    /// HTTP/1.1, rendered once: most requests are just that.
    post_head: Box<[u8]>,
    h2: http2::Builder<TokioExecutor>,
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// Idle HTTP/1.1 connections and the reaper's round each was put back in; the last is
    /// the warmest.
    h1: Vec<(h1::Conn, u64)>,
    /// The reaper's round: it goes up by one every [`IDLE_TIMEOUT`].
    round: u64,
    /// The HTTP/2 connection every request shares, once one is made.
    h2: Option<http2::SendRequest<Body>>,
    /// Over TLS, the connect in flight whose protocol ALPN has not told yet: a request that
    /// finds nothing idle waits for it, since an HTTP/2 connection would carry it too.
    connecting: Option<watch::Receiver<bool>>,
    /// Whether the origin answered a connect with HTTP/1.1: its requests then connect
    /// side by side, each needing a connection of its own.
    speaks_h1: bool,
    /// The task closing connections idle past [`IDLE_TIMEOUT`], once one was put back.
    reaper: Option<JoinHandle<()>>,
}

/// A connection taken from the pool for one request.
struct Conn {
    sender: Sender,
    /// Whether an earlier request used it: a request that fails on it before any of the
    /// reply arrived (the server had closed it) may then go again on a fresh connection.
    reused: bool,
}

enum Sender {
    H1(h1::Conn),
    H2(http2::SendRequest<Body>),
}

/// A reply whose head has arrived, with what it came on.
pub(crate) enum Response {
    /// Holds its connection until [`Pool::put_back`].
    H1(h1::Response),
    /// hyper's: the pool keeps the shared connection it came on.
    H2(hyper::Response<Incoming>),
}

impl Arrived for Response {
    fn status(&self) -> StatusCode {
        match self {
            Response::H1(r) => r.status(),
            Response::H2(r) => r.status(),
        }
    }

    fn header(&self, name: &HeaderName) -> Option<&str> {
        match self {
            Response::H1(r) => r.header(name),
            Response::H2(r) => Arrived::header(r, name),
        }
    }

    fn content_length(&self) -> Option<u64> {
        match self {
            Response::H1(r) => r.content_length(),
            Response::H2(r) => Arrived::content_length(r),
        }
    }

    async fn body(&mut self, limit: usize) -> Result<(Bytes, bool), BoxError> {
        match self {
            Response::H1(r) => r.body(limit).await,
            Response::H2(r) => Arrived::body(r, limit).await,
        }
    }
}

/// A connection that could not be made: the message says so before the connector's own
/// words (`tcp connect error: Connection refused`, a certificate rejected …).
#[derive(Debug)]
struct ConnectFailed(BoxError);

impl std::fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("could not connect")
    }
}

impl std::error::Error for ConnectFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// What a request that found nothing idle does about connecting ([`Pool::connect_or_share`]).
enum Gate<'a> {
    /// Connects by itself: plain TCP, or an origin known to speak HTTP/1.1.
    Open,
    /// Connects, while the requests after it wait to see whether they may share it.
    Lead(Leading<'a>),
    /// Waits for the connect in flight.
    Wait(watch::Receiver<bool>),
}

/// The connect the waiting requests wait for; dropped, it lets them go, whether it
/// connected, failed or was given up.
struct Leading<'a> {
    shared: &'a Shared,
    done: watch::Sender<bool>,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        self.shared.lock().connecting = None;
        let _ = self.done.send(true);
    }
}

impl Pool {
    /// A pool of connections to `origin`'s scheme, host and port, made by `connector`.
    /// Every request carries `headers`.
    pub(crate) fn new(connector: Connector, origin: Uri, headers: &HeaderMap) -> Self {
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.timer(TokioTimer::new());
        Pool {
            shared: Arc::new(Shared {
                connector,
                post_head: h1::request_head(&Method::POST, target(&origin), headers, true),
                origin,
                h2,
                idle: Mutex::new(Idle::default()),
            }),
        }
    }

    /// The base URL the pool was made for: a POST sent to this very value goes out with
    /// its HTTP/1.1 head made once.
    pub(crate) fn origin(&self) -> &Uri {
        &self.shared.origin
    }

    /// Sends a request to `uri` (absolute, on the pool's origin) carrying `headers` and,
    /// when given, `body`, on an idle connection, or a new one when none is idle, and hands
    /// back its reply, for [`put_back`](Self::put_back) once the body is read. A request
    /// that fails on an idle connection before any of its reply arrived (the server had
    /// closed it) goes again on another.
    pub(crate) async fn send(
        &self,
        uri: &Uri,
        method: &Method,
        headers: &HeaderMap,
        body: Option<&Bytes>,
    ) -> Result<Response, BoxError> {
        loop {
            let conn = self.checkout().await?;
            let reused = conn.reused;
            match conn.sender {
                Sender::H1(conn) => {
                    let rendered;
                    let head = if *method == Method::POST && std::ptr::eq(uri, &self.shared.origin)
                    {
                        &self.shared.post_head
                    } else {
                        rendered = h1::request_head(method, target(uri), headers, body.is_some());
                        &rendered
                    };
                    match h1::exchange(conn, head, body.map(|b| &b[..])).await {
                        Ok(response) => return Ok(Response::H1(response)),
                        Err(failed) if reused && failed.before_reply => {}
                        Err(failed) => return Err(failed.error),
                    }
                }
                Sender::H2(mut tx) => {
                    let mut request = Request::new(Full::new(body.cloned().unwrap_or_default()));
                    *request.method_mut() = method.clone();
                    *request.headers_mut() = headers.clone();
                    if body.is_none() {
                        request.headers_mut().remove(CONTENT_TYPE);
                    }
                    *request.uri_mut() = uri.clone();
                    match tx.try_send_request(request).await {
                        Ok(response) => return Ok(Response::H2(response)),
                        // A shared HTTP/2 connection that refused it is done with: the
                        // request goes again on a new connection, not on it again.
                        Err(mut e) => {
                            if !reused || e.take_message().is_none() {
                                return Err(e.into_error().into());
                            }
                            self.shared.lock().h2 = None;
                        }
                    }
                }
            }
        }
    }

    /// Puts a reply's connection back for the next request, once its body is read whole. A
    /// connection whose body was left unread, or that the server is closing, is dropped
    /// instead, which closes it.
    pub(crate) fn put_back(&self, response: Response) {
        // An HTTP/2 connection never left: the pool keeps a handle to it.
        let Response::H1(response) = response else {
            return;
        };
        let Some(conn) = response.into_idle() else {
            return;
        };
        let mut idle = self.shared.lock();
        let round = idle.round;
        idle.h1.push((conn, round));
        // One reaper a pool, as hyper-util's pool spawns one idle task: on a runtime without
        // timers it would fail at once, and a new one at every put back would fail again.
        if idle.reaper.is_none() {
            idle.reaper = reaper(Arc::downgrade(&self.shared));
        }
    }

    /// The warmest idle connection still open, or a new one.
    async fn checkout(&self) -> Result<Conn, BoxError> {
        loop {
            let taken = {
                let mut idle = self.shared.lock();
                match &idle.h2 {
                    Some(tx) if !tx.is_closed() => Some(Sender::H2(tx.clone())),
                    _ => {
                        idle.h2 = None;
                        idle.h1.pop().map(|(tx, _)| Sender::H1(tx))
                    }
                }
            };
            // A connection the server closed is dropped; the next is tried.
            let ready = match taken {
                None => break,
                Some(Sender::H1(mut conn)) => conn.is_open().then_some(Sender::H1(conn)),
                Some(Sender::H2(mut tx)) => tx.ready().await.is_ok().then_some(Sender::H2(tx)),
            };
            if let Some(sender) = ready {
                return Ok(Conn {
                    sender,
                    reused: true,
                });
            }
        }
        // Boxed: every layer of a run's future would otherwise carry and move a connect's
        // state (the gate, the connector's future), though most requests never connect.
        Box::pin(self.connect_or_share()).await
    }

    /// Nothing was idle: a new connection; or, over TLS while another request's connect is
    /// in flight, that connection once ALPN made it HTTP/2 (every request shares one), and a
    /// new one only when it did not. A cold client's first burst thus makes one HTTP/2
    /// connection, not one a request. A request waits for one connect at most: if that one
    /// failed or was given up, it connects by itself.
    async fn connect_or_share(&self) -> Result<Conn, BoxError> {
        let gate = {
            let mut idle = self.shared.lock();
            if !matches!(self.shared.connector, Connector::Tls(_)) || idle.speaks_h1 {
                Gate::Open
            } else if let Some(connecting) = &idle.connecting {
                Gate::Wait(connecting.clone())
            } else {
                let (done, connecting) = watch::channel(false);
                idle.connecting = Some(connecting);
                Gate::Lead(Leading {
                    shared: &self.shared,
                    done,
                })
            }
        };
        match gate {
            Gate::Open => self.connect().await,
            Gate::Lead(leading) => {
                let conn = self.connect().await;
                drop(leading);
                conn
            }
            Gate::Wait(mut connecting) => {
                // An error says the leading connect was given up: nothing to share then.
                let _ = connecting.wait_for(|done| *done).await;
                let shared = self.shared.lock().h2.clone();
                if let Some(mut tx) = shared.filter(|tx| !tx.is_closed())
                    && tx.ready().await.is_ok()
                {
                    return Ok(Conn {
                        sender: Sender::H2(tx),
                        reused: true,
                    });
                }
                self.connect().await
            }
        }
    }

    /// A new connection to the origin, over HTTP/2 when TLS negotiated it.
    async fn connect(&self) -> Result<Conn, BoxError> {
        let shared = &self.shared;
        let handshake = {
            let origin = shared.origin.clone();
            let io = match &shared.connector {
                Connector::Plain(tcp) => tcp
                    .clone()
                    .call(origin)
                    .await
                    .map(MaybeHttpsStream::Http)
                    .map_err(|e| ConnectFailed(e.into()))?,
                Connector::Tls(tls) => tls.clone().call(origin).await.map_err(ConnectFailed)?,
            };
            let h2 = io.connected().is_negotiated_h2();
            if let Connector::Tls(_) = shared.connector {
                shared.lock().speaks_h1 = !h2;
            }
            if !h2 {
                return Ok(Conn {
                    sender: Sender::H1(h1::Conn::new(io)),
                    reused: false,
                });
            }
            // Boxed, and the stream moved into it in a scope that ends before the wait: the
            // handshake's future and the TLS stream are kilobytes, which every connect would
            // otherwise carry while it waits for TCP and TLS, though a client makes one HTTP/2
            // connection at most.
            Box::pin(shared.h2.handshake(io))
        };
        let (tx, connection) = handshake.await?;
        tokio::spawn(connection);
        let mut idle = shared.lock();
        if idle.h2.as_ref().is_none_or(http2::SendRequest::is_closed) {
            idle.h2 = Some(tx.clone());
        }
        drop(idle);
        Ok(Conn {
            sender: Sender::H2(tx),
            reused: false,
        })
    }
}

impl Drop for Pool {
    /// The reaper goes with the pool, not a round later: a dropped client leaves no task.
    fn drop(&mut self) {
        if let Some(reaper) = self.shared.lock().reaper.take() {
            reaper.abort();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Idle> {
        // The list stays whole whatever panicked while it was held.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What an HTTP/1.1 request to `uri` names on its request line: its path and query.
fn target(uri: &Uri) -> &str {
    uri.path_and_query().map_or("/", |path| path.as_str())
}

/// Closes the connections idle past [`IDLE_TIMEOUT`], on the runtime that first put one
/// back, until the pool is dropped; none is started outside a runtime. It counts rounds instead of
/// reading the clock on every put back: a connection put back before the last round began
/// has been idle at least that long, so it is closed between one and two rounds after its
/// last use, as a pool checking its idle ones once a round would close them.
fn reaper(shared: Weak<Shared>) -> Option<JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    Some(runtime.spawn(async move {
        let mut ticks = tokio::time::interval(IDLE_TIMEOUT);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let mut idle = shared.lock();
            let round = idle.round;
            idle.h1
                .retain_mut(|(conn, since)| *since == round && conn.is_open());
            idle.round += 1;
        }
    }))
}
