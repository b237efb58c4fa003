//! A reply's framing as RFC 9112 gives it, read from bytes already received: the head
//! (through `httparse`) reduced to what an attempt uses, and a chunked body's decoder that
//! takes its input in pieces split anywhere. Nothing here reads from a connection, so every
//! split a network could make is tested without one.

use std::ops::Range;

use hyper::StatusCode;

/// The largest response head read: far above any provider's (a few hundred bytes), and a
/// bound on what a server that never ends its head makes the client hold.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Header lines a head may have; more is refused like a head over [`MAX_HEAD_BYTES`]. The
/// array `httparse` fills lives on the stack only while a head is parsed.
const MAX_HEADERS: usize = 100;

/// The longest chunk-size line, extensions included: a chunk's size is at most 16 hex
/// digits, so this bounds only extensions and leading zeros a server makes up.
const MAX_CHUNK_LINE: usize = 4 * 1024;

/// A reply that breaks HTTP/1.1's framing: the message says what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Malformed(pub(crate) String);

impl Malformed {
    fn head(what: impl std::fmt::Display) -> Self {
        Malformed(format!("invalid HTTP response head: {what}"))
    }

    fn chunk(what: &str) -> Self {
        Malformed(format!("invalid chunk size line: {what}"))
    }
}

/// Where a reply's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// It has none: 204 and 304.
    Empty,
    /// After this many bytes.
    Length(u64),
    /// At the chunked coding's last chunk and trailers.
    Chunked,
    /// Where the server closes the connection.
    Eof,
}

/// What an attempt uses of a final reply's head.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) status: StatusCode,
    pub(crate) framing: Framing,
    /// Whether the connection may carry another request once the body is read: HTTP/1.1
    /// without `Connection: close`, or HTTP/1.0 with `keep-alive`, and a body not ended by
    /// closing.
    pub(crate) keep_alive: bool,
    /// `Retry-After` and `Location`, kept only for a reply that is not a success: those
    /// are what a failed attempt or a redirect reads, and a success needs no allocation.
    pub(crate) retry_after: Option<Box<str>>,
    pub(crate) location: Option<Box<str>>,
}

/// What the bytes received so far hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// Not yet a whole head.
    Partial,
    /// A whole 1xx interim head of this many bytes, to skip.
    Interim(usize),
    /// The final head, of this many bytes.
    Final(Head, usize),
}

/// Parses the head at the start of `buf`.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Parsed, Malformed> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD_BYTES => {
            return Err(Malformed::head(format_args!(
                "longer than {MAX_HEAD_BYTES} bytes"
            )));
        }
        Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
        Err(e) => return Err(Malformed::head(e)),
    };
    if len > MAX_HEAD_BYTES {
        return Err(Malformed::head(format_args!(
            "longer than {MAX_HEAD_BYTES} bytes"
        )));
    }
    // Complete, httparse has set both.
    let (Some(status), Some(version)) = (response.code, response.version) else {
        return Err(Malformed::head("no status line"));
    };
    match status {
        101 => return Err(Malformed::head("101 Switching Protocols, never asked for")),
        100..=199 => return Ok(Parsed::Interim(len)),
        0..=99 => return Err(Malformed::head(format_args!("status {status}, below 100"))),
        _ => {}
    }
    let keep_headers = !(200..300).contains(&status);
    let mut length: Option<u64> = None;
    let mut encoded = false;
    let mut chunked = false;
    let mut close = false;
    let mut keep_alive = false;
    let mut retry_after = None;
    let mut location = None;
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            for part in header.value.split(|&b| b == b',') {
                let n = content_length(part)?;
                if length.is_some_and(|seen| seen != n) {
                    return Err(Malformed::head("Content-Length given twice, differently"));
                }
                length = Some(n);
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Only the last coding says whether the body is chunked (RFC 9112 6.3).
            encoded = true;
            chunked = tokens(header.value)
                .last()
                .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case("connection") {
            for token in tokens(header.value) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if keep_headers && name.eq_ignore_ascii_case("retry-after") {
            retry_after = visible(header.value);
        } else if keep_headers && name.eq_ignore_ascii_case("location") {
            location = visible(header.value);
        }
    }
    let framing = match (status, encoded, length) {
        (204 | 304, _, _) => Framing::Empty,
        // Transfer-Encoding overrides Content-Length; a coding other than chunked last
        // ends only with the connection.
        (_, true, _) if chunked => Framing::Chunked,
        (_, true, _) => Framing::Eof,
        (_, false, Some(n)) => Framing::Length(n),
        (_, false, None) => Framing::Eof,
    };
    let persistent = match version {
        1 => !close,
        _ => keep_alive && !close,
    };
    // Both framings at once is how a response is smuggled past a proxy (RFC 9112 6.3):
    // the body is read by Transfer-Encoding, and the connection trusted no further.
    let ambiguous = encoded && length.is_some();
    // httparse reads exactly three digits, and every status from 100 up is `http`'s.
    let status = StatusCode::from_u16(status)
        .map_err(|_| Malformed::head(format_args!("status {status} out of range")))?;
    let head = Head {
        status,
        framing,
        keep_alive: persistent && framing != Framing::Eof && !ambiguous,
        retry_after,
        location,
    };
    Ok(Parsed::Final(head, len))
}

/// A Content-Length value: digits only, no sign, within a `u64`.
fn content_length(value: &[u8]) -> Result<u64, Malformed> {
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(Malformed::head("Content-Length is not a number"));
    }
    digits.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
            .ok_or_else(|| Malformed::head("Content-Length too large"))
    })
}

/// The comma-separated tokens of a list header, trimmed, empty ones left out.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// A value as text when it is visible ASCII (with spaces and tabs), as `HeaderValue::to_str`
/// accepts it; anything else is ignored like a header one cannot read.
fn visible(value: &[u8]) -> Option<Box<str>> {
    let text = std::str::from_utf8(value).ok()?;
    text.bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        .then(|| text.into())
}

/// What [`Chunked::decode`] found in its input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Body data at this range of the input, which ends where the decoder stopped.
    Data(Range<usize>),
    /// The input is used up and the body goes on.
    More,
    /// The body ended: its last chunk and trailers are read.
    End,
}

/// Where a chunked body's decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk's size in hex; `digits` so far.
    Size {
        size: u64,
        digits: usize,
    },
    /// Past the size, in its extensions, until CR.
    Extension {
        size: u64,
    },
    /// After the size line's CR.
    SizeLf {
        size: u64,
    },
    /// In a chunk's data, this much left.
    Data {
        left: u64,
    },
    /// After a chunk's data, expecting its CRLF.
    DataCr,
    DataLf,
    /// In the trailer section; `empty` while the line read so far is empty.
    Trailer {
        empty: bool,
    },
    /// After a trailer line's CR.
    TrailerLf {
        empty: bool,
    },
    Done,
}

/// A chunked body's decoder: it keeps its place between inputs, so a body may arrive split
/// at any byte. Chunk extensions and trailers are read and dropped.
#[derive(Debug)]
pub(crate) struct Chunked {
    state: State,
    /// Bytes of the current chunk-size line, or of the trailers, so far: a server sending
    /// either without end is refused, not followed forever.
    framing: usize,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            state: State::Size { size: 0, digits: 0 },
            framing: 0,
        }
    }
}

impl Chunked {
    /// Decodes from the start of `input`: how many bytes it took and what they held. Data
    /// is handed back as soon as it is found, so a caller takes it and calls again with the
    /// input after it.
    pub(crate) fn decode(&mut self, input: &[u8]) -> Result<(usize, Chunk), Malformed> {
        let mut at = 0;
        while at < input.len() {
            if let State::Data { left } = self.state {
                let rest = (input.len() - at) as u64;
                let take = left.min(rest) as usize;
                self.state = match left - take as u64 {
                    0 => State::DataCr,
                    left => State::Data { left },
                };
                return Ok((at + take, Chunk::Data(at..at + take)));
            }
            if self.state == State::Done {
                return Ok((at, Chunk::End));
            }
            let byte = input[at];
            at += 1;
            self.framing += 1;
            let cap = match self.state {
                State::Trailer { .. } | State::TrailerLf { .. } => MAX_HEAD_BYTES,
                _ => MAX_CHUNK_LINE,
            };
            if self.framing > cap {
                return Err(Malformed(format!(
                    "invalid chunked body: framing longer than {cap} bytes"
                )));
            }
            self.state = self.step(byte)?;
        }
        let chunk = match self.state {
            State::Done => Chunk::End,
            _ => Chunk::More,
        };
        Ok((at, chunk))
    }

    /// The state after one framing byte.
    fn step(&mut self, byte: u8) -> Result<State, Malformed> {
        Ok(match (self.state, byte) {
            (State::Size { size, digits }, _) if byte.is_ascii_hexdigit() => {
                let digit = u64::from((byte as char).to_digit(16).unwrap_or(0));
                let size = size
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(digit))
                    .ok_or_else(|| Malformed::chunk("the size overflows 64 bits"))?;
                State::Size {
                    size,
                    digits: digits + 1,
                }
            }
            (State::Size { digits: 0, .. }, _) => {
                return Err(Malformed::chunk("no hex digits where a size belongs"));
            }
            (State::Size { size, .. }, b';' | b' ' | b'\t') => State::Extension { size },
            (State::Size { size, .. } | State::Extension { size }, b'\r') => State::SizeLf { size },
            (State::Size { .. }, b'\n') => return Err(Malformed::chunk("LF without CR")),
            (State::Size { .. }, _) => return Err(Malformed::chunk("a size not in hex")),
            (State::Extension { .. }, b'\n') => return Err(Malformed::chunk("LF without CR")),
            (State::Extension { .. }, _) => self.state,
            (State::SizeLf { size: 0 }, b'\n') => State::Trailer { empty: true },
            (State::SizeLf { size }, b'\n') => {
                self.framing = 0;
                State::Data { left: size }
            }
            (State::SizeLf { .. }, _) => return Err(Malformed::chunk("CR without LF")),
            (State::DataCr, b'\r') => State::DataLf,
            (State::DataLf, b'\n') => State::Size { size: 0, digits: 0 },
            (State::DataCr | State::DataLf, _) => {
                return Err(Malformed(
                    "invalid chunked body: a chunk's data not followed by CRLF".into(),
                ));
            }
            (State::Trailer { empty }, b'\r') => State::TrailerLf { empty },
            (State::Trailer { .. }, b'\n') => {
                return Err(Malformed(
                    "invalid chunked body: a trailer line ends in LF without CR".into(),
                ));
            }
            (State::Trailer { .. }, _) => State::Trailer { empty: false },
            (State::TrailerLf { empty: true }, b'\n') => State::Done,
            (State::TrailerLf { empty: false }, b'\n') => State::Trailer { empty: true },
            (State::TrailerLf { .. }, _) => {
                return Err(Malformed(
                    "invalid chunked body: a trailer line's CR without LF".into(),
                ));
            }
            (State::Data { .. } | State::Done, _) => self.state,
        })
    }
}

#[cfg(test)]
mod tests;
