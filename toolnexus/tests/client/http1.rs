//! The client's own HTTP/1.1 exchange against hand-made servers: replies split byte by
//! byte, interim heads, chunked bodies with extensions and trailers, connections the server
//! keeps or closes, and hostile replies (an endless head, an endless body, an absurd length,
//! garbage), each a clear error within the caps, never a hang or a panic.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolnexus::{ClientError, LlmClient};

use crate::support::*;

/// What a server does in answer to one request.
enum Act {
    /// Writes these bytes at once.
    Write(Vec<u8>),
    /// Writes these bytes one write a byte, so the client reads them split everywhere.
    Trickle(Vec<u8>),
    /// Writes these bytes, then this unit again and again until the client hangs up.
    Endless(Vec<u8>, Vec<u8>),
    /// Closes the connection.
    Close,
}

/// How a server answers: given the connection's number (from 1), the request's number on it
/// (from 1) and its body.
type Script = fn(usize, usize, &[u8]) -> Vec<Act>;

/// A loopback server playing `script`, counting the connections it accepts.
struct Server {
    base_url: String,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    async fn start(script: Script) -> Server {
        let (base_url, accepted) =
            raw_endpoint(move |stream, connection| play(stream, connection, script)).await;
        Server { base_url, accepted }
    }

    /// Runs the `echo` flow, which must end with `done` on this many connections.
    async fn done_on(&self, connections: usize) {
        let result = self.client().run("echo x", &echo_toolkit()).await;
        let result = result.unwrap_or_else(|e| panic!("{}: {e}", self.base_url));
        assert_eq!(result.text, "done");
        assert_eq!(self.accepted(), connections, "connections accepted");
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn client(&self) -> LlmClient {
        client_of(&self.base_url)
    }

    fn client_capped(&self, limit: usize) -> LlmClient {
        LlmClient::builder()
            .base_url(&self.base_url)
            .model("gpt-4o-mini")
            .api_key("test-key")
            .retries(0)
            .max_response_bytes(limit)
            .build()
            .unwrap()
    }
}

async fn play(mut stream: TcpStream, connection: usize, script: Script) {
    for request in 1.. {
        let Some(body) = read_request(&mut stream).await else {
            return;
        };
        for act in script(connection, request, &body) {
            let written = match act {
                Act::Write(bytes) => stream.write_all(&bytes).await,
                Act::Trickle(bytes) => trickle(&mut stream, &bytes).await,
                Act::Endless(start, unit) => {
                    let _ = stream.write_all(&start).await;
                    while stream.write_all(&unit).await.is_ok() {}
                    return;
                }
                Act::Close => return,
            };
            if written.is_err() {
                return;
            }
        }
    }
}

async fn trickle(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    for byte in bytes.chunks(1) {
        stream.write_all(byte).await?;
        stream.flush().await?;
        tokio::task::yield_now().await;
    }
    Ok(())
}

/// A request's body, read after its head by its Content-Length; `None` once the client
/// closed the connection.
async fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut seen = Vec::new();
    let head_end = loop {
        if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut piece = [0u8; 4096];
        let n = stream.read(&mut piece).await.ok().filter(|&n| n > 0)?;
        seen.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |n| n.trim().parse().unwrap());
    let mut body = seen.split_off(head_end);
    while body.len() < length {
        let mut piece = vec![0u8; length - body.len()];
        let n = stream.read(&mut piece).await.ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&piece[..n]);
    }
    Some(body)
}

/// The `echo` flow's reply to `request` with a Content-Length, after `status_line`.
fn sized(status_line: &str, request: &[u8]) -> Vec<u8> {
    let reply = echo_flow_reply(request);
    format!(
        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
        reply.len()
    )
    .into_bytes()
}

/// The `echo` flow's reply to `request` in chunks of seven bytes, each with an extension,
/// and trailers, after two interim heads.
fn chunked(request: &[u8]) -> Vec<u8> {
    let mut bytes = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n\
        HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
        .to_vec();
    for piece in echo_flow_reply(request).as_bytes().chunks(7) {
        bytes.extend_from_slice(format!("{:X};piece=\"x\"\r\n", piece.len()).as_bytes());
        bytes.extend_from_slice(piece);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"0\r\nx-checksum: none\r\n\r\n");
    bytes
}

async fn network_error(server: &Server) -> String {
    let err = server
        .client()
        .run("echo x", &echo_toolkit())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Network(_)), "{err:?}");
    err.to_string()
}

/// Plays each script to a client of its own, whose run must fail with a network error
/// saying what the script's pair says.
async fn each_a_network_error_saying(scripts: impl IntoIterator<Item = (Script, &'static str)>) {
    for (script, says) in scripts {
        let server = Server::start(script).await;
        let said = network_error(&server).await;
        assert!(said.contains(says), "{said}");
    }
}

#[tokio::test]
async fn a_reply_split_at_every_byte_with_interim_heads_chunks_and_trailers_is_read() {
    let server = Server::start(|_, _, body| vec![Act::Trickle(chunked(body))]).await;
    // Both turns on one kept-alive connection.
    server.done_on(1).await;
}

#[tokio::test]
async fn a_connection_the_server_will_close_or_ends_a_body_with_is_not_reused() {
    let scripts: [Script; 4] = [
        |_, _, body| vec![Act::Write(sized("HTTP/1.0 200 OK", body))],
        |_, _, body| {
            let mut reply = sized("HTTP/1.1 200 OK", body);
            reply.splice(17..17, b"Connection: close\r\n".iter().copied());
            vec![Act::Write(reply)]
        },
        |_, _, body| {
            let reply = echo_flow_reply(body);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n";
            vec![
                Act::Write(format!("{head}{reply}").into_bytes()),
                Act::Close,
            ]
        },
        // Bytes past the reply were never asked for.
        |_, _, body| {
            let mut reply = sized("HTTP/1.1 200 OK", body);
            reply.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
            vec![Act::Write(reply)]
        },
    ];
    for script in scripts {
        // One connection a turn.
        Server::start(script).await.done_on(2).await;
    }
}

#[tokio::test]
async fn a_reused_connection_closed_before_any_reply_byte_sends_again_on_a_fresh_one() {
    // The first connection answers its first request, then closes on the second unanswered,
    // as a server closing an idle connection just as a request arrives does.
    let server = Server::start(|connection, request, body| match (connection, request) {
        (1, 2) => vec![Act::Close],
        _ => vec![Act::Write(sized("HTTP/1.1 200 OK", body))],
    })
    .await;
    server.done_on(2).await;
}

#[tokio::test]
async fn a_fresh_connection_closed_before_any_reply_byte_is_a_network_error() {
    let server = Server::start(|_, _, _| vec![Act::Close]).await;
    let said = network_error(&server).await;
    assert!(
        said.contains("the connection closed before the response"),
        "{said}"
    );
    assert_eq!(
        server.accepted(),
        1,
        "a fresh connection is not tried again"
    );
}

#[tokio::test]
async fn a_reply_breaking_off_mid_body_is_a_network_error() {
    let server = Server::start(|_, _, body| {
        let mut reply = sized("HTTP/1.1 200 OK", body);
        reply.truncate(reply.len() - 5);
        vec![Act::Write(reply), Act::Close]
    })
    .await;
    let said = network_error(&server).await;
    assert!(
        said.contains("the connection closed before the body ended"),
        "{said}"
    );
}

#[tokio::test]
async fn garbage_and_broken_framing_are_network_errors_naming_what_was_wrong() {
    let scripts: [(Script, &str); 4] = [
        (
            |_, _, _| vec![Act::Write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n".to_vec())],
            "invalid HTTP response head: ",
        ),
        (
            |_, _, _| {
                vec![Act::Write(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 12x\r\n\r\n".to_vec(),
                )]
            },
            "invalid HTTP response head: Content-Length is not a number",
        ),
        (
            |_, _, _| {
                let reply = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5zz\r\n";
                vec![Act::Write(reply.to_vec())]
            },
            "invalid chunk size line: a size not in hex",
        ),
        (
            |_, _, _| {
                let reply =
                    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1234567890abcdef0\r\n";
                vec![Act::Write(reply.to_vec())]
            },
            "invalid chunk size line: the size overflows 64 bits",
        ),
    ];
    each_a_network_error_saying(scripts).await;
}

#[tokio::test]
async fn an_endless_head_is_refused_at_its_caps() {
    let scripts: [(Script, &str); 2] = [
        (
            |_, _, _| {
                let start = b"HTTP/1.1 200 OK\r\nx-pad: ".to_vec();
                vec![Act::Endless(start, vec![b'a'; 4096])]
            },
            "invalid HTTP response head: longer than 65536 bytes",
        ),
        (
            |_, _, _| {
                let start = b"HTTP/1.1 200 OK\r\n".to_vec();
                vec![Act::Endless(start, b"x-pad: a\r\n".to_vec())]
            },
            "invalid HTTP response head: too many headers",
        ),
    ];
    each_a_network_error_saying(scripts).await;
}

#[tokio::test]
async fn endless_or_oversized_bodies_stop_at_the_size_cap() {
    let limit = 64 * 1024;
    let scripts: [Script; 4] = [
        |_, _, _| {
            let start = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            let mut unit = b"400\r\n".to_vec();
            unit.resize(unit.len() + 0x400, b'a');
            unit.extend_from_slice(b"\r\n");
            vec![Act::Endless(start, unit)]
        },
        |_, _, _| {
            let start = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
            vec![Act::Endless(start, vec![b'a'; 4096])]
        },
        |_, _, _| {
            let start = b"HTTP/1.1 200 OK\r\ncontent-length: 1000000000000000000\r\n\r\n".to_vec();
            vec![Act::Endless(start, vec![b'a'; 4096])]
        },
        // A body ended by the connection, one byte over the cap.
        |_, _, _| {
            let start = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
            let mut body = start;
            body.resize(body.len() + 64 * 1024 + 1, b'a');
            vec![Act::Write(body), Act::Close]
        },
    ];
    for (i, script) in scripts.into_iter().enumerate() {
        let server = Server::start(script).await;
        let client = server.client_capped(limit);
        let err = client.run("echo x", &echo_toolkit()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::ResponseTooLarge { limit: l } if l == limit),
            "script {i}: {err:?}"
        );
    }
}
