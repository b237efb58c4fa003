//! A scripted LLM endpoint on loopback: each request gets the next scripted reply.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One recorded request: path, lower-cased headers, JSON body (Null when not JSON).
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Script = Arc<dyn Fn(usize, &Value) -> (u16, String) + Send + Sync>;

pub struct Stub {
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    /// Replies in order; past the end, the last reply repeats.
    pub async fn json(replies: Vec<Value>) -> Stub {
        let replies: Vec<(u16, String)> =
            replies.into_iter().map(|v| (200, v.to_string())).collect();
        Self::raw(replies).await
    }

    pub async fn raw(replies: Vec<(u16, String)>) -> Stub {
        Self::script(move |n, _| replies[n.min(replies.len() - 1)].clone()).await
    }

    pub async fn script(
        f: impl Fn(usize, &Value) -> (u16, String) + Send + Sync + 'static,
    ) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let hits = Arc::new(AtomicUsize::new(0));
        let script: Script = Arc::new(f);
        let (s2, h2) = (seen.clone(), hits.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    break;
                };
                let (s3, h3, sc) = (s2.clone(), h2.clone(), script.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, s3, h3, sc).await;
                });
            }
        });
        Stub {
            base_url: format!("http://127.0.0.1:{port}"),
            seen,
            hits,
            task,
        }
    }

    /// Base URL for the openai style (`{base}/chat/completions`).
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base_url)
    }

    pub fn calls(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut sock: TcpStream,
    seen: Arc<Mutex<Vec<Seen>>>,
    hits: Arc<AtomicUsize>,
    script: Script,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        // read one request head
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default().to_string();
        let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
        let mut rest = buf.split_off(head_end + 4);
        buf.clear();
        let body: Vec<u8> = if chunked {
            read_chunked(&mut sock, &mut rest).await?
        } else {
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            while rest.len() < len {
                let mut chunk = [0u8; 8192];
                let n = sock.read(&mut chunk).await?;
                if n == 0 {
                    return Ok(());
                }
                rest.extend_from_slice(&chunk[..n]);
            }
            let tail = rest.split_off(len);
            std::mem::replace(&mut rest, tail)
        };
        buf = rest;
        let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let n = hits.fetch_add(1, Ordering::SeqCst);
        seen.lock().unwrap().push(Seen {
            path,
            headers,
            body: json.clone(),
        });
        let (status, reply) = script(n, &json);
        let ctype = if reply.starts_with("data:") || reply.starts_with("event:") {
            "text/event-stream"
        } else {
            "application/json"
        };
        let resp = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        );
        sock.write_all(resp.as_bytes()).await?;
    }
}

async fn read_chunked(sock: &mut TcpStream, rest: &mut Vec<u8>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(rest, b"\r\n") {
                break i;
            }
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(out);
            }
            rest.extend_from_slice(&chunk[..n]);
        };
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
            .unwrap_or(0);
        rest.drain(..line_end + 2);
        while rest.len() < size + 2 {
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(out);
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        out.extend_from_slice(&rest[..size]);
        rest.drain(..size + 2);
        if size == 0 {
            return Ok(out);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---- reply builders -------------------------------------------------------

/// OpenAI: one assistant turn calling tools. `calls` = (id, name, arguments object).
pub fn oa_calls(calls: &[(&str, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    json!({"id": "c1", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}, "finish_reason": "tool_calls"}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

/// OpenAI: a call whose raw `arguments` string is given verbatim (for malformed arguments).
pub fn oa_call_raw(id: &str, name: &str, raw_arguments: &str) -> Value {
    json!({"id": "c1", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": raw_arguments}}]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

pub fn oa_text(text: &str) -> Value {
    json!({"id": "c2", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 15, "completion_tokens": 4, "total_tokens": 19}})
}

/// Anthropic: one assistant turn calling tools.
pub fn an_calls(calls: &[(&str, &str, Value)]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    json!({"id": "m1", "type": "message", "role": "assistant", "model": "claude-x", "content": content, "stop_reason": "tool_use",
           "usage": {"input_tokens": 10, "output_tokens": 5}})
}

pub fn an_text(text: &str) -> Value {
    json!({"id": "m2", "type": "message", "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
           "usage": {"input_tokens": 15, "output_tokens": 4}})
}

/// The messages array of a recorded request body.
pub fn messages(seen: &Seen) -> Vec<Value> {
    seen.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// OpenAI tool-role messages of a recorded request.
pub fn tool_messages(seen: &Seen) -> Vec<Value> {
    messages(seen)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect()
}

// ---- streamed (SSE) replies ----------------------------------------------

fn sse(events: &[Value]) -> String {
    let mut out = String::new();
    for e in events {
        out.push_str(&format!("data: {e}\n\n"));
    }
    out
}

/// OpenAI SSE: text in the given pieces, then a usage chunk and [DONE].
pub fn oa_stream_text(pieces: &[&str]) -> String {
    let mut ev: Vec<Value> = pieces
        .iter()
        .map(|p| json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]}))
        .collect();
    ev.push(json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    ev.push(json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}));
    sse(&ev) + "data: [DONE]\n\n"
}

/// OpenAI SSE: one tool call whose arguments arrive in two fragments.
pub fn oa_stream_call(id: &str, name: &str, args: &Value) -> String {
    let a = args.to_string();
    let (x, y) = a.split_at(a.len() / 2);
    let ev = vec![
        json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]}),
        json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": x}}]}, "finish_reason": null}]}),
        json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": y}}]}, "finish_reason": null}]}),
        json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"id": "s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "m", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
    ];
    sse(&ev) + "data: [DONE]\n\n"
}

/// Anthropic SSE: text in pieces.
pub fn an_stream_text(pieces: &[&str]) -> String {
    let mut out = String::new();
    let mut push = |name: &str, v: Value| out.push_str(&format!("event: {name}\ndata: {v}\n\n"));
    push(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "usage": {"input_tokens": 7, "output_tokens": 0}}}),
    );
    push(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    for p in pieces {
        push(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
        );
    }
    push(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    push(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
    );
    push("message_stop", json!({"type": "message_stop"}));
    out
}

/// Anthropic SSE: one tool_use whose input arrives as two partial_json fragments.
pub fn an_stream_call(id: &str, name: &str, input: &Value) -> String {
    let a = input.to_string();
    let (x, y) = a.split_at(a.len() / 2);
    let mut out = String::new();
    let mut push = |n: &str, v: Value| out.push_str(&format!("event: {n}\ndata: {v}\n\n"));
    push(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "usage": {"input_tokens": 5, "output_tokens": 0}}}),
    );
    push(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    );
    push(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": x}}),
    );
    push(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": y}}),
    );
    push(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    push(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
    );
    push("message_stop", json!({"type": "message_stop"}));
    out
}
