//! Server-sent events as the HTML standard frames them: lines ending in LF, CRLF or CR,
//! `data` lines joined, `event` naming the type, comments (the keep-alive pings) and other
//! fields skipped, an event dispatched at a blank line and an unfinished one dropped at the
//! end. Written here rather than taken from a crate because it is a page of code, and the
//! reader that feeds it bounds what it may buffer: it never holds more than it was given.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Event {
    /// The `event` field, empty when the event named none (a `message`).
    pub(super) kind: String,
    /// The `data` lines, joined by newlines.
    pub(super) data: String,
}

/// Why a stream is not server-sent events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Malformed {
    /// A field's name or value is not UTF-8.
    NotUtf8,
}

/// The framing state between the chunks of one stream.
#[derive(Debug, Default)]
pub(super) struct Parser {
    line: Vec<u8>,
    data: Vec<u8>,
    kind: Vec<u8>,
    has_data: bool,
    // A CR ended the last line; an LF right after it ends nothing more.
    after_cr: bool,
    // The first line, which may start with a byte order mark.
    started: bool,
}

impl Parser {
    /// Reads `bytes`, the next chunk of the stream, and appends the events it completes to
    /// `out`.
    pub(super) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) -> Result<(), Malformed> {
        for &byte in bytes {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\n' => self.end_line(out)?,
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out)?;
                }
                _ => self.line.push(byte),
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<Event>) -> Result<(), Malformed> {
        let mut line = std::mem::take(&mut self.line);
        if !std::mem::replace(&mut self.started, true) && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match name {
            b"data" => {
                if std::mem::replace(&mut self.has_data, true) {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
            }
            b"event" => self.kind = value.to_vec(),
            // `id` and `retry` matter to a browser reconnecting on its own; this client
            // resubscribes by task instead.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) -> Result<(), Malformed> {
        let kind = std::mem::take(&mut self.kind);
        let data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return Ok(());
        }
        out.push(Event {
            kind: String::from_utf8(kind).map_err(|_| Malformed::NotUtf8)?,
            data: String::from_utf8(data).map_err(|_| Malformed::NotUtf8)?,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Result<Vec<Event>, Malformed> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out)?;
        }
        Ok(out)
    }

    fn event(kind: &str, data: &str) -> Event {
        Event {
            kind: kind.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_are_framed_whatever_the_line_ends_and_chunk_bounds() {
        let whole: &[u8] =
            b"\xEF\xBB\xBF: ping\r\ndata: {\"a\":1}\r\n\r\nevent: error\rdata:x\rdata:  y\r\rdata\n\n";
        let expected = vec![
            event("", "{\"a\":1}"),
            event("error", "x\n y"),
            event("", ""),
        ];
        assert_eq!(events(&[whole]).unwrap(), expected);
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes).unwrap(), expected);
    }

    #[test]
    fn comments_other_fields_and_an_unfinished_event_dispatch_nothing() {
        let out = events(&[b": keep-alive\n\nid: 7\nretry: 10\n\ndata: half"]).unwrap();
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn a_field_that_is_not_utf8_is_malformed() {
        assert_eq!(events(&[b"data: \xFF\n\n"]), Err(Malformed::NotUtf8));
    }
}
