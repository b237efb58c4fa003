//! The connections of the direct client: a model client talks to one origin, its base
//! URL's, so its pool is a list of idle HTTP/1.1 connections and at most one shared HTTP/2
//! connection, with no key to hash and nothing to look up.
//!
//! A request takes the connection put back last, waiting until hyper has it ready again
//! rather than starting a connect beside it: the attempt puts its connection back as soon
//! as it has read the reply's body, often before hyper's connection task has taken in the
//! reply's end, and a request racing that task would otherwise open a connection of its
//! own (and leave the returned one idle). A new connection is made only when no idle one
//! is left.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::{Request, Response, Uri};
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_service::Service;

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
    /// Its path and query, what an HTTP/1.1 request line names.
    origin_target: Uri,
    h1: http1::Builder,
    h2: http2::Builder<TokioExecutor>,
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// Idle HTTP/1.1 connections and the reaper's round each was put back in; the last is
    /// the warmest.
    h1: Vec<(http1::SendRequest<Body>, u64)>,
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
pub(crate) struct Conn {
    sender: Sender,
    /// Whether an earlier request used it: a request it refused before writing it may then
    /// go again on a fresh connection.
    reused: bool,
}

enum Sender {
    H1(http1::SendRequest<Body>),
    H2(http2::SendRequest<Body>),
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
    pub(crate) fn new(connector: Connector, origin: Uri) -> Self {
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.timer(TokioTimer::new());
        Pool {
            shared: Arc::new(Shared {
                connector,
                origin_target: path_only(&origin),
                origin,
                h1: http1::Builder::new(),
                h2,
                idle: Mutex::new(Idle::default()),
            }),
        }
    }

    /// The base URL the pool was made for: a request sent to this very value goes out with
    /// its HTTP/1.1 target made once.
    pub(crate) fn origin(&self) -> &Uri {
        &self.shared.origin
    }

    /// Sends `request` to `uri` (absolute, on the pool's origin) on an idle connection, or
    /// a new one when none is idle, and hands back the response with the connection, for
    /// [`put_back`](Self::put_back) once the body is read. A request an idle connection
    /// refused before writing any of it (the server had closed it) goes again on another.
    pub(crate) async fn send(
        &self,
        uri: &Uri,
        mut request: Request<Body>,
    ) -> Result<(Response<Incoming>, Conn), BoxError> {
        loop {
            let mut conn = self.checkout().await?;
            let sent = match &mut conn.sender {
                Sender::H1(tx) => {
                    *request.uri_mut() = self.shared.target(uri);
                    tx.try_send_request(request).await
                }
                Sender::H2(tx) => {
                    *request.uri_mut() = uri.clone();
                    tx.try_send_request(request).await
                }
            };
            match sent {
                Ok(response) => return Ok((response, conn)),
                Err(mut e) => match e.take_message() {
                    Some(back) if conn.reused => {
                        // A shared HTTP/2 connection that refused it is done with: the
                        // request goes again on a new connection, not on it again.
                        if let Sender::H2(_) = conn.sender {
                            self.shared.lock().h2 = None;
                        }
                        request = back;
                    }
                    _ => return Err(e.into_error().into()),
                },
            }
        }
    }

    /// Puts `conn` back for the next request, once its reply's body is read whole. A
    /// connection whose body was left unread is dropped instead, which closes it.
    pub(crate) fn put_back(&self, conn: Conn) {
        // An HTTP/2 connection never left: the pool keeps a handle to it.
        let Sender::H1(tx) = conn.sender else { return };
        if tx.is_closed() {
            return;
        }
        let mut idle = self.shared.lock();
        let round = idle.round;
        idle.h1.push((tx, round));
        // One reaper a pool, as hyper-util's pool spawns one idle task: on a runtime without
        // timers it would fail at once, and a new one at every put back would fail again.
        if idle.reaper.is_none() {
            idle.reaper = reaper(Arc::downgrade(&self.shared));
        }
    }

    /// The warmest idle connection once it is ready, or a new one.
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
            // A connection that closes while it gets ready is dropped; the next is tried.
            let ready = match taken {
                None => break,
                Some(Sender::H1(mut tx)) => tx.ready().await.is_ok().then_some(Sender::H1(tx)),
                Some(Sender::H2(mut tx)) => tx.ready().await.is_ok().then_some(Sender::H2(tx)),
            };
            if let Some(sender) = ready {
                return Ok(Conn {
                    sender,
                    reused: true,
                });
            }
        }
        // Boxed: a connect's future (the connector's, both handshakes) is large, and every
        // layer of a run's future would carry and move it though most requests never connect.
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
        if h2 {
            let (tx, connection) = shared.h2.handshake(io).await?;
            tokio::spawn(connection);
            let mut idle = shared.lock();
            if idle.h2.as_ref().is_none_or(http2::SendRequest::is_closed) {
                idle.h2 = Some(tx.clone());
            }
            drop(idle);
            return Ok(Conn {
                sender: Sender::H2(tx),
                reused: false,
            });
        }
        let (tx, connection) = shared.h1.handshake(io).await?;
        tokio::spawn(connection);
        Ok(Conn {
            sender: Sender::H1(tx),
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
    /// What an HTTP/1.1 request to `uri` names on its request line: its path and query.
    fn target(&self, uri: &Uri) -> Uri {
        if std::ptr::eq(uri, &self.origin) {
            self.origin_target.clone()
        } else {
            path_only(uri)
        }
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        // The list stays whole whatever panicked while it was held.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn path_only(uri: &Uri) -> Uri {
    uri.path_and_query()
        .map_or_else(Uri::default, |path| Uri::from(path.clone()))
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
                .retain(|(tx, since)| *since == round && !tx.is_closed());
            idle.round += 1;
        }
    }))
}
