//! The transport limit of the agent loop: the requests a run of ours sends, byte for byte,
//! on one kept-alive HTTP/1.1 connection with hyper alone, each reply read into borrowed
//! structs. It builds no request, runs no tool and keeps no transcript, so no client of the
//! same wire can spend fewer instructions per run; `scripts/bench-instructions.sh` sets
//! ours and the floor beside it.
//!
//! ```sh
//! bench_loop wire weather > weather.wire      # the requests ours sends in one run
//! bench_limit run limit weather 300 --url URL --wire weather.wire
//! ```

use std::borrow::Cow;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue, CONTENT_LENGTH, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde::Deserialize;

const WARMUP: usize = 20;
const USAGE: &str = "usage: bench_limit run limit <weather|approve> <N> --url URL --wire FILE";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = start(&args) {
        eprintln!("bench_limit: {e}");
        std::process::exit(1);
    }
}

fn start(args: &[String]) -> Result<(), String> {
    let [mode, client, scenario, runs, url_flag, url, wire_flag, wire] = args else {
        return Err(USAGE.into());
    };
    if mode != "run" || client != "limit" || url_flag != "--url" || wire_flag != "--wire" {
        return Err(USAGE.into());
    }
    let runs: usize = runs.parse().map_err(|_| USAGE.to_owned())?;
    let text = std::fs::read_to_string(wire).map_err(|e| format!("{wire}: {e}"))?;
    let exchanges = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(Exchange::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if exchanges.is_empty() {
        return Err(format!("{wire} holds no request"));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut times = rt.block_on(measure(url, &exchanges, runs))?;
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{:<15} {scenario:<8} {:>10.3} {:>10.3}",
        "limit",
        at(0.5),
        at(0.95)
    );
    Ok(())
}

/// One request of a run as ours sent it: a line `{"method", "path", "headers", "body"}`.
struct Exchange {
    method: Method,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

#[derive(Deserialize)]
struct WireLine {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Exchange {
    fn parse(line: &str) -> Result<Exchange, String> {
        let wire: WireLine = serde_json::from_str(line).map_err(|e| format!("a wire line: {e}"))?;
        let method = Method::from_bytes(wire.method.as_bytes()).map_err(|e| e.to_string())?;
        let mut headers = Vec::with_capacity(wire.headers.len());
        for (name, value) in wire.headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
            // The host is this run's endpoint's, and the length is the body's own.
            if name == HOST || name == CONTENT_LENGTH {
                continue;
            }
            let value = HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            headers.push((name, value));
        }
        Ok(Exchange {
            method,
            path: wire.path,
            headers,
            body: Bytes::from(wire.body),
        })
    }
}

/// `runs` runs after a warm-up, each the whole exchange on one connection; the last reply
/// of each must be the final text.
async fn measure(url: &str, exchanges: &[Exchange], runs: usize) -> Result<Vec<Duration>, String> {
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| format!("not an http:// URL: {url}"))?;
    let host = HeaderValue::from_str(authority).map_err(|e| e.to_string())?;
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("{authority}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    for _ in 0..WARMUP {
        run(&mut sender, &host, exchanges).await?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        run(&mut sender, &host, exchanges).await?;
        times.push(start.elapsed());
    }
    Ok(times)
}

async fn run(
    sender: &mut SendRequest<Full<Bytes>>,
    host: &HeaderValue,
    exchanges: &[Exchange],
) -> Result<(), String> {
    let mut last = 0;
    for (turn, exchange) in exchanges.iter().enumerate() {
        let mut request = Request::builder()
            .method(exchange.method.clone())
            .uri(exchange.path.as_str())
            .header(HOST, host.clone());
        for (name, value) in &exchange.headers {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(exchange.body.clone()))
            .map_err(|e| e.to_string())?;
        sender.ready().await.map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("turn {turn}: HTTP {}", response.status()));
        }
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let reply: Completion<'_> = serde_json::from_slice(&body)
            .map_err(|e| format!("turn {turn}: not a chat completion: {e}"))?;
        let message = reply
            .choices
            .first()
            .map(|c| &c.message)
            .ok_or_else(|| format!("turn {turn}: no choice"))?;
        last = message.tool_calls.len();
        if turn + 1 == exchanges.len() {
            let text = message.content.as_deref().unwrap_or_default();
            if last != 0 || !text.starts_with("Done") {
                return Err(format!("turn {turn}: not the final text: {text:?}"));
            }
        } else if message.tool_calls.iter().any(|c| {
            c.id.is_empty() || c.function.name.is_empty() || c.function.arguments.is_empty()
        }) {
            return Err(format!(
                "turn {turn}: a call without its id, name or arguments"
            ));
        }
    }
    debug_assert_eq!(last, 0);
    Ok(())
}

/// An OpenAI chat completion, every string borrowed from the reply where it has no escape.
#[derive(Deserialize)]
struct Completion<'a> {
    #[serde(borrow)]
    choices: Vec<Choice<'a>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    message: Message<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Vec<Call<'a>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    function: Function<'a>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    // The arguments are JSON in a string: read as the string, as any client must.
    #[serde(borrow)]
    arguments: Cow<'a, str>,
}
