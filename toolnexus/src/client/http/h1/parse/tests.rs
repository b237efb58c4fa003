use super::*;

fn head_of(bytes: &[u8]) -> (Head, usize) {
    match parse_head(bytes) {
        Ok(Parsed::Final(head, len)) => (head, len),
        other => panic!("not a final head: {other:?}"),
    }
}

fn error_of(bytes: &[u8]) -> String {
    match parse_head(bytes) {
        Err(e) => e.to_string(),
        Ok(parsed) => panic!("parsed: {parsed:?}"),
    }
}

/// Feeds `body` to a decoder in pieces cut at `cuts`, as reads would bring them, keeping
/// what a piece left unused for the next: the data and whether the body ended.
fn decode_in_pieces(body: &[u8], cuts: &[usize]) -> Result<(Vec<u8>, bool), Malformed> {
    let mut decoder = Chunked::default();
    let mut data = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut start = 0;
    for end in cuts.iter().copied().chain([body.len()]) {
        pending.extend_from_slice(&body[start..end]);
        start = end;
        loop {
            let (used, chunk) = decoder.decode(&pending)?;
            match chunk {
                Chunk::Data(range) => {
                    assert_eq!(range.end, used);
                    data.extend_from_slice(&pending[range]);
                    pending.drain(..used);
                }
                Chunk::More => {
                    assert_eq!(used, pending.len());
                    pending.clear();
                    break;
                }
                Chunk::End => {
                    pending.drain(..used);
                    assert!(pending.is_empty(), "bytes past the body: {pending:?}");
                    return Ok((data, true));
                }
            }
        }
    }
    Ok((data, false))
}

const CHUNKED: &[u8] =
    b"5;name=value;flag\r\nhello\r\n0B\r\n, world!!!!\r\n1 ; spaced\r\n.\r\n0\r\nx-checksum: 1\r\nx-more: 2\r\n\r\n";

#[test]
fn a_head_is_partial_until_its_last_byte_then_whole() {
    let reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
    let head_len = reply.len() - 2;
    for cut in 0..head_len {
        assert_eq!(
            parse_head(&reply[..cut]).unwrap(),
            Parsed::Partial,
            "cut at {cut}"
        );
    }
    let (head, len) = head_of(reply);
    assert_eq!(len, head_len);
    assert_eq!(head.status, 200);
    assert_eq!(head.framing, Framing::Length(2));
    assert!(head.keep_alive);
    assert_eq!((head.retry_after, head.location), (None, None));
}

#[test]
fn interim_replies_are_skipped_to_the_final_one() {
    let reply = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n";
    let Ok(Parsed::Interim(first)) = parse_head(reply) else {
        panic!("100 is not interim");
    };
    let Ok(Parsed::Interim(second)) = parse_head(&reply[first..]) else {
        panic!("103 is not interim");
    };
    let (head, len) = head_of(&reply[first + second..]);
    assert_eq!(head.status, 201);
    assert_eq!(first + second + len, reply.len());
    assert!(error_of(b"HTTP/1.1 101 Switching Protocols\r\n\r\n").contains("101"));
}

#[test]
fn connection_reuse_follows_the_version_and_the_connection_header() {
    let cases: [(&[u8], bool); 7] = [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", true),
        (
            b"HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n",
            false,
        ),
        (
            b"HTTP/1.1 200 OK\r\nconnection: upgrade, close\r\ncontent-length: 0\r\n\r\n",
            false,
        ),
        (b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", false),
        (
            b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n",
            true,
        ),
        // Without a length the body ends with the connection, which cannot then be reused.
        (b"HTTP/1.1 200 OK\r\n\r\n", false),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n",
            false,
        ),
    ];
    for (reply, reusable) in cases {
        let (head, _) = head_of(reply);
        assert_eq!(
            head.keep_alive,
            reusable,
            "{}",
            String::from_utf8_lossy(reply)
        );
    }
}

#[test]
fn the_framing_follows_rfc_9112() {
    let cases: [(&[u8], Framing); 7] = [
        (
            b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n",
            Framing::Length(12),
        ),
        (
            b"HTTP/1.1 200 OK\r\ncontent-length: 7, 7\r\n\r\n",
            Framing::Length(7),
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\ncontent-length: 3\r\n\r\n",
            Framing::Chunked,
        ),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\n",
            Framing::Eof,
        ),
        (b"HTTP/1.1 200 OK\r\n\r\n", Framing::Eof),
        (
            b"HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n",
            Framing::Empty,
        ),
        (
            b"HTTP/1.1 304 Not Modified\r\ntransfer-encoding: chunked\r\n\r\n",
            Framing::Empty,
        ),
    ];
    for (reply, framing) in cases {
        assert_eq!(
            head_of(reply).0.framing,
            framing,
            "{}",
            String::from_utf8_lossy(reply)
        );
    }
    let huge = head_of(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000000000000000\r\n\r\n");
    assert_eq!(huge.0.framing, Framing::Length(1_000_000_000_000_000_000));
}

#[test]
fn a_bad_content_length_is_an_error() {
    for value in ["-1", "+5", "5 5", "0x10", "", "99999999999999999999999"] {
        let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {value}\r\n\r\n");
        assert!(
            error_of(reply.as_bytes()).contains("Content-Length"),
            "{value}"
        );
    }
    let twice = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n";
    assert!(error_of(twice).contains("twice"));
}

#[test]
fn retry_after_and_location_are_kept_only_off_success() {
    let (limited, _) =
        head_of(b"HTTP/1.1 429 Too Many\r\nretry-after: 7\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(limited.retry_after.as_deref(), Some("7"));
    let (moved, _) =
        head_of(b"HTTP/1.1 308 Moved\r\nLocation: /v2/chat\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(moved.location.as_deref(), Some("/v2/chat"));
    let (ok, _) =
        head_of(b"HTTP/1.1 200 OK\r\nretry-after: 7\r\nlocation: /x\r\ncontent-length: 0\r\n\r\n");
    assert_eq!((ok.retry_after, ok.location), (None, None));
}

#[test]
fn garbage_and_oversized_heads_are_errors_naming_what_was_wrong() {
    for garbage in [
        &b"SSH-2.0-OpenSSH_9.6\r\n\r\n"[..],
        b"HTTP/2 200\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 099 Low\r\n\r\n",
        b"\x16\x03\x01\x02\x00",
    ] {
        let said = error_of(garbage);
        assert!(said.starts_with("invalid HTTP response head: "), "{said}");
    }
    let mut endless = b"HTTP/1.1 200 OK\r\nx-pad: ".to_vec();
    endless.resize(MAX_HEAD_BYTES, b'a');
    assert_eq!(
        parse_head(&endless[..MAX_HEAD_BYTES - 1]).unwrap(),
        Parsed::Partial
    );
    assert!(error_of(&endless).contains("longer than 65536 bytes"));
    let many: String = (0..=MAX_HEADERS).map(|i| format!("x-{i}: v\r\n")).collect();
    let reply = format!("HTTP/1.1 200 OK\r\n{many}\r\n");
    assert!(error_of(reply.as_bytes()).starts_with("invalid HTTP response head: "));
}

#[test]
fn a_chunked_body_decodes_the_same_split_at_every_byte() {
    let whole = decode_in_pieces(CHUNKED, &[]).unwrap();
    assert_eq!(whole, (b"hello, world!!!!.".to_vec(), true));
    for cut in 0..=CHUNKED.len() {
        assert_eq!(
            decode_in_pieces(CHUNKED, &[cut]).unwrap(),
            whole,
            "cut at {cut}"
        );
    }
    let every: Vec<usize> = (1..CHUNKED.len()).collect();
    assert_eq!(decode_in_pieces(CHUNKED, &every).unwrap(), whole);
}

#[test]
fn a_chunked_body_cut_short_is_not_ended() {
    for end in 0..CHUNKED.len() {
        let (_, ended) = decode_in_pieces(&CHUNKED[..end], &[]).unwrap();
        assert!(!ended, "ended after {end} bytes");
    }
}

#[test]
fn broken_chunk_framing_is_an_error_naming_it() {
    let cases: [(&[u8], &str); 8] = [
        (b"10000000000000000\r\n", "overflows 64 bits"),
        (b"ffffffffffffffff0\r\n", "overflows 64 bits"),
        (b"\r\n", "no hex digits"),
        (b"5x\r\nhello\r\n0\r\n\r\n", "not in hex"),
        (b"5\nhello\r\n0\r\n\r\n", "LF without CR"),
        (b"5\rhello\r\n0\r\n\r\n", "CR without LF"),
        (b"5\r\nhelloX\r\n0\r\n\r\n", "not followed by CRLF"),
        (b"0\r\nx-t: 1\n\r\n", "LF without CR"),
    ];
    for (body, said) in cases {
        let error = decode_in_pieces(body, &[]).unwrap_err().to_string();
        assert!(
            error.contains(said),
            "{}: {error}",
            String::from_utf8_lossy(body)
        );
    }
    let mut endless = b"5;".to_vec();
    endless.resize(MAX_CHUNK_LINE + 1, b'x');
    let error = decode_in_pieces(&endless, &[]).unwrap_err().to_string();
    assert!(error.contains("framing longer than"), "{error}");
    let zeros = vec![b'0'; MAX_CHUNK_LINE + 1];
    let error = decode_in_pieces(&zeros, &[]).unwrap_err().to_string();
    assert!(error.contains("framing longer than"), "{error}");
    let mut trailers = b"0\r\n".to_vec();
    while trailers.len() <= MAX_HEAD_BYTES {
        trailers.extend_from_slice(b"x-t: 1\r\n");
    }
    let error = decode_in_pieces(&trailers, &[]).unwrap_err().to_string();
    assert!(error.contains("framing longer than"), "{error}");
}
