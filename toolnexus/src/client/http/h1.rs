//! One HTTP/1.1 request and its reply on a connection of the pool, driven inside the
//! attempt's own future: no task, no channel, and buffers only while bytes move. A run
//! waiting on the model holds its connection and nothing else; over plain TCP the read
//! buffer is made only once the socket has something to read.
//!
//! hyper's client connection would cost every connection a spawned task, its dispatch
//! channel and two 8 KB buffers reserved for its whole life, none of which can be made
//! smaller, while a model request is one write and one reply.

mod parse;

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes, BytesMut};
use hyper::header::{
    HeaderMap, HeaderName, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER, TRANSFER_ENCODING,
};
use hyper::{Method, StatusCode};
use hyper_rustls::MaybeHttpsStream;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use crate::client::http::response::{Arrived, Capped};
use parse::{parse_head, Chunk, Chunked, Framing, Head, Parsed};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The first read's buffer: a model's JSON reply and its head fit in it, so most replies
/// are read in one go and handed on from it without a copy.
const READ_BYTES: usize = 8 * 1024;

/// A connection to the origin, for HTTP/1.1.
pub(crate) enum Conn {
    Plain(TcpStream),
    /// Boxed: rustls' state is kilobytes, and a plain connection should not carry its room.
    /// Wrapped in `TokioIo` for tokio's read and write traits on hyper-rustls' stream.
    Tls(Box<TokioIo<MaybeHttpsStream<TokioIo<TcpStream>>>>),
}

impl Conn {
    /// The connection a connector made, as this module drives it.
    pub(crate) fn new(io: MaybeHttpsStream<TokioIo<TcpStream>>) -> Self {
        match io {
            MaybeHttpsStream::Http(tcp) => Conn::Plain(tcp.into_inner()),
            tls => Conn::Tls(Box::new(TokioIo::new(tls))),
        }
    }

    /// Whether an idle connection may carry a request: one the server closed (or sent
    /// something unasked on) reads at once, EOF or bytes, while a live one has nothing to
    /// read. One non-blocking read, never a wait.
    pub(crate) fn is_open(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(self).poll_read(&mut cx, &mut buf).is_pending()
    }

    /// Waits until the reply's first bytes can be read, then reads them into a new buffer.
    /// Over TLS readiness of the socket says nothing of the records behind it, so the
    /// buffer is made before the read.
    async fn first_read(&mut self) -> io::Result<BytesMut> {
        if let Conn::Plain(tcp) = self {
            tcp.readable().await?;
        }
        let mut buf = BytesMut::with_capacity(READ_BYTES);
        self.read_buf(&mut buf).await?;
        Ok(buf)
    }

    /// Reads more into `buf`, with room for at least `room` bytes; `false` at EOF.
    async fn read_more(&mut self, buf: &mut BytesMut, room: usize) -> io::Result<bool> {
        buf.reserve(room.max(1));
        Ok(self.read_buf(buf).await? > 0)
    }

    /// Writes all of `parts` with as few writes as the socket allows.
    async fn write_request(&mut self, mut parts: &mut [IoSlice<'_>]) -> io::Result<()> {
        IoSlice::advance_slices(&mut parts, 0);
        while !parts.is_empty() {
            let n = self.write_vectored(parts).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut parts, n);
        }
        self.flush().await
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Conn::Tls(tls) => Pin::new(&mut **tls).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Conn::Tls(tls) => Pin::new(&mut **tls).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Conn::Tls(tls) => Pin::new(&mut **tls).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(tcp) => tcp.is_write_vectored(),
            Conn::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Conn::Tls(tls) => Pin::new(&mut **tls).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Conn::Tls(tls) => Pin::new(&mut **tls).poll_shutdown(cx),
        }
    }
}

/// A request's line and headers up to, not including, its framing: the client's fixed
/// headers are rendered once for its POSTs to the base URL, not once a request. The
/// framing headers are this module's to write, so a host's own are left out.
pub(crate) fn request_head(
    method: &Method,
    target: &str,
    headers: &HeaderMap,
    body: bool,
) -> Box<[u8]> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(method.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(target.as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in headers {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING || (!body && name == CONTENT_TYPE) {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.into_boxed_slice()
}

/// An exchange that failed, and whether it failed before any of the reply arrived: a
/// request on a reused connection the server had closed fails so, and may go again on a
/// fresh one.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) error: BoxError,
    pub(crate) before_reply: bool,
}

impl Failed {
    fn before_reply(error: impl Into<BoxError>) -> Self {
        Failed {
            error: error.into(),
            before_reply: true,
        }
    }

    fn during_reply(error: impl Into<BoxError>) -> Self {
        Failed {
            error: error.into(),
            before_reply: false,
        }
    }
}

/// Sends a request (`head` from [`request_head`], then `body` with its length, or none)
/// and reads its reply's final head.
pub(crate) async fn exchange(
    mut conn: Conn,
    head: &[u8],
    body: Option<&[u8]>,
) -> Result<Response, Failed> {
    let mut framing = [0u8; 40];
    let framing_len = match body {
        Some(body) => length_lines(&mut framing, body.len()),
        None => {
            framing[..2].copy_from_slice(b"\r\n");
            2
        }
    };
    let mut parts = [
        IoSlice::new(head),
        IoSlice::new(&framing[..framing_len]),
        IoSlice::new(body.unwrap_or_default()),
    ];
    conn.write_request(&mut parts)
        .await
        .map_err(Failed::before_reply)?;
    let mut buf = conn.first_read().await.map_err(Failed::before_reply)?;
    if buf.is_empty() {
        return Err(Failed::before_reply(closed("before the response")));
    }
    loop {
        match parse_head(&buf).map_err(Failed::during_reply)? {
            Parsed::Final(head, len) => {
                buf.advance(len);
                return Ok(Response {
                    head,
                    buf,
                    conn: Some(conn),
                    reusable: false,
                });
            }
            Parsed::Interim(len) => {
                buf.advance(len);
                if !buf.is_empty() {
                    continue;
                }
            }
            Parsed::Partial => {}
        }
        // A full buffer doubles, so a long head is read in a few reads; parse_head bounds it.
        let room = if buf.len() < buf.capacity() {
            0
        } else {
            buf.len()
        };
        if !conn
            .read_more(&mut buf, room)
            .await
            .map_err(Failed::during_reply)?
        {
            return Err(Failed::during_reply(closed(
                "before the response head ended",
            )));
        }
    }
}

/// `content-length: N` and the blank line ending the head, written into `out`; its length.
fn length_lines(out: &mut [u8; 40], length: usize) -> usize {
    const NAME: &[u8] = b"content-length: ";
    out[..NAME.len()].copy_from_slice(NAME);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = length;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let end = NAME.len() + digits.len() - at;
    out[NAME.len()..end].copy_from_slice(&digits[at..]);
    out[end..end + 4].copy_from_slice(b"\r\n\r\n");
    end + 4
}

fn closed(when: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the connection closed {when}"),
    )
}

/// A reply whose head has arrived, its body still on the connection.
pub(crate) struct Response {
    head: Head,
    /// What was read past the head: the body's first bytes.
    buf: BytesMut,
    /// Until the body is read, or given up on.
    conn: Option<Conn>,
    /// Whether the body was read to its end on a connection fit for another request.
    reusable: bool,
}

impl Response {
    /// The connection, when the reply was read to its end, the server kept the connection
    /// open, and sent nothing past the reply: it may carry the next request.
    pub(crate) fn into_idle(self) -> Option<Conn> {
        self.conn.filter(|_| self.reusable)
    }

    async fn read_body(&mut self, limit: usize) -> Result<(Bytes, bool), BoxError> {
        let mut conn = self
            .conn
            .take()
            .ok_or("the reply's body was already read")?;
        let (body, over) = match self.head.framing {
            Framing::Empty => (Bytes::new(), false),
            Framing::Length(length) => self.read_length(&mut conn, length, limit).await?,
            Framing::Chunked => self.read_chunked(&mut conn, limit).await?,
            Framing::Eof => self.read_to_eof(&mut conn, limit).await?,
        };
        // Bytes past the reply were never asked for: the connection is not trusted again.
        self.reusable = !over && self.head.keep_alive && self.buf.is_empty();
        self.conn = Some(conn);
        Ok((body, over))
    }

    /// A body of `length` bytes, of which at most `limit` are read.
    async fn read_length(
        &mut self,
        conn: &mut Conn,
        length: u64,
        limit: usize,
    ) -> Result<(Bytes, bool), BoxError> {
        let want = length.min(limit as u64) as usize;
        while self.buf.len() < want {
            let room = want - self.buf.len();
            if !conn.read_more(&mut self.buf, room).await? {
                return Err(closed("before the body ended").into());
            }
        }
        Ok((self.buf.split_to(want).freeze(), length > limit as u64))
    }

    /// A chunked body, of which at most `limit` bytes of data are read.
    async fn read_chunked(
        &mut self,
        conn: &mut Conn,
        limit: usize,
    ) -> Result<(Bytes, bool), BoxError> {
        let mut decoder = Chunked::default();
        let mut body = Capped::new(limit, None);
        loop {
            let (used, chunk) = decoder.decode(&self.buf)?;
            match chunk {
                Chunk::Data(range) => {
                    self.buf.advance(range.start);
                    if let Some(cut) = body.push(self.buf.split_to(range.len()).freeze()) {
                        return Ok((cut, true));
                    }
                    continue;
                }
                Chunk::End => {
                    self.buf.advance(used);
                    return Ok((body.finish(), false));
                }
                Chunk::More => self.buf.advance(used),
            }
            if !conn.read_more(&mut self.buf, READ_BYTES).await? {
                return Err(closed("before the chunked body ended").into());
            }
        }
    }

    /// A body that ends where the connection does, of which at most `limit` bytes are read.
    async fn read_to_eof(
        &mut self,
        conn: &mut Conn,
        limit: usize,
    ) -> Result<(Bytes, bool), BoxError> {
        while self.buf.len() <= limit {
            let room = READ_BYTES.min(limit + 1 - self.buf.len());
            if !conn.read_more(&mut self.buf, room).await? {
                return Ok((self.buf.split().freeze(), false));
            }
        }
        Ok((self.buf.split_to(limit).freeze(), true))
    }
}

impl Arrived for Response {
    fn status(&self) -> StatusCode {
        self.head.status
    }

    fn header(&self, name: &HeaderName) -> Option<&str> {
        if name == LOCATION {
            self.head.location.as_deref()
        } else if name == RETRY_AFTER {
            self.head.retry_after.as_deref()
        } else {
            None
        }
    }

    fn content_length(&self) -> Option<u64> {
        match self.head.framing {
            Framing::Length(length) => Some(length),
            _ => None,
        }
    }

    async fn body(&mut self, limit: usize) -> Result<(Bytes, bool), BoxError> {
        self.read_body(limit).await
    }
}
