//! A loopback OTLP/HTTP collector for the suite: accepts `POST /v1/traces` and
//! `POST /v1/metrics` as protobuf, decodes them with the OpenTelemetry protos, and keeps
//! what arrived in plain shapes a test asserts on, with each request's raw headers.
//!
//! It serves from a thread and runtime of its own, so a test may block (a force-flush
//! waits for the collector's answer) without starving it.
#![allow(dead_code)] // each test binary asserts on its own part

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::{span, status};
use prost::Message as _;
use serde_json::Value;

/// Attributes as key → JSON value (strings, numbers, booleans, arrays; bytes as hex).
pub type Attributes = BTreeMap<String, Value>;

/// One received span.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    /// `internal`, `server`, `client`, `producer`, `consumer` or `unspecified`.
    pub kind: &'static str,
    /// Lowercase hex, as in a `traceparent`.
    pub trace_id: String,
    pub span_id: String,
    /// `None` for a root span.
    pub parent_span_id: Option<String>,
    pub attributes: Attributes,
    pub events: Vec<Event>,
    pub links: Vec<Link>,
    /// `unset`, `ok` or `error`.
    pub status_code: &'static str,
    pub status_message: String,
    /// The attributes of the resource that sent it (`service.name`, …).
    pub resource: Attributes,
}

/// An event recorded on a span.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub attributes: Attributes,
}

/// A span link: the span it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub trace_id: String,
    pub span_id: String,
}

/// One received metric, with its data points.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub description: String,
    /// `histogram`, `sum`, `gauge`, `exponential_histogram`, `summary` or `none`.
    pub kind: &'static str,
    pub points: Vec<Point>,
    pub resource: Attributes,
}

/// A data point: its attributes and what it measured.
#[derive(Debug, Clone)]
pub struct Point {
    pub attributes: Attributes,
    /// Histograms: how many values were recorded, and their sum.
    pub count: Option<u64>,
    pub sum: Option<f64>,
    /// Sums and gauges: the value.
    pub value: Option<f64>,
}

/// One HTTP request as it arrived.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: String,
    pub path: String,
    /// Names lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body_len: usize,
}

impl RawRequest {
    /// The value of header `name`, if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metrics: Vec<Metric>,
    requests: Vec<RawRequest>,
}

/// The running collector; it stops when dropped.
pub struct Receiver {
    addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    /// Listens on a free loopback port.
    pub fn start() -> Receiver {
        let received = Arc::new(Mutex::new(Received::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, bound) = std::sync::mpsc::channel();
        let state = received.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the receiver's runtime starts");
            runtime.block_on(serve(state, ready, stopped));
        });
        let addr = bound.recv().expect("the receiver binds");
        Receiver {
            addr,
            received,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<Span> {
        self.received.lock().unwrap().spans.clone()
    }

    pub fn metrics(&self) -> Vec<Metric> {
        self.received.lock().unwrap().metrics.clone()
    }

    pub fn requests(&self) -> Vec<RawRequest> {
        self.received.lock().unwrap().requests.clone()
    }

    /// The span named `name`; panics listing what arrived when there is none.
    pub fn span(&self, name: &str) -> Span {
        let spans = self.spans();
        spans
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| {
                let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
                panic!("no span `{name}` among {names:?}")
            })
    }

    /// Waits until `done` holds for what arrived, or `timeout` passes (then returns false).
    pub fn wait_until(&self, timeout: Duration, done: impl Fn(&Receiver) -> bool) -> bool {
        toolnexus_test_support::wait::within_blocking(timeout, || done(self).then_some(()))
            .is_some()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    state: Arc<Mutex<Received>>,
    ready: std::sync::mpsc::Sender<SocketAddr>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    ready
        .send(listener.local_addr().expect("a bound address"))
        .expect("the test waits for the address");
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    state: Arc<Mutex<Received>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match req.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST)),
    };
    let mut received = state.lock().unwrap();
    received.requests.push(RawRequest {
        method: method.clone(),
        path: path.clone(),
        headers,
        body_len: body.len(),
    });
    if method != "POST" {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED));
    }
    // An export answer is the service's response message; all its fields are optional, so
    // the empty message (zero bytes) is a full success.
    match path.as_str() {
        "/v1/traces" => match ExportTraceServiceRequest::decode(body) {
            Ok(export) => received.spans.extend(spans_of(export)),
            Err(_) => return Ok(reply(StatusCode::BAD_REQUEST)),
        },
        "/v1/metrics" => match ExportMetricsServiceRequest::decode(body) {
            Ok(export) => received.metrics.extend(metrics_of(export)),
            Err(_) => return Ok(reply(StatusCode::BAD_REQUEST)),
        },
        _ => return Ok(reply(StatusCode::NOT_FOUND)),
    }
    Ok(reply(StatusCode::OK))
}

fn reply(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-protobuf"),
    );
    response
}

fn spans_of(export: ExportTraceServiceRequest) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource_spans in export.resource_spans {
        let resource = resource_spans
            .resource
            .map(|r| attributes(&r.attributes))
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for s in scope.spans {
                let status = s.status.unwrap_or_default();
                spans.push(Span {
                    kind: kind_name(s.kind),
                    name: s.name,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: (!s.parent_span_id.is_empty()).then(|| hex(&s.parent_span_id)),
                    attributes: attributes(&s.attributes),
                    events: s
                        .events
                        .iter()
                        .map(|e| Event {
                            name: e.name.clone(),
                            attributes: attributes(&e.attributes),
                        })
                        .collect(),
                    links: s
                        .links
                        .iter()
                        .map(|l| Link {
                            trace_id: hex(&l.trace_id),
                            span_id: hex(&l.span_id),
                        })
                        .collect(),
                    status_code: match status::StatusCode::try_from(status.code) {
                        Ok(status::StatusCode::Ok) => "ok",
                        Ok(status::StatusCode::Error) => "error",
                        _ => "unset",
                    },
                    status_message: status.message,
                    resource: resource.clone(),
                });
            }
        }
    }
    spans
}

fn kind_name(kind: i32) -> &'static str {
    match span::SpanKind::try_from(kind) {
        Ok(span::SpanKind::Internal) => "internal",
        Ok(span::SpanKind::Server) => "server",
        Ok(span::SpanKind::Client) => "client",
        Ok(span::SpanKind::Producer) => "producer",
        Ok(span::SpanKind::Consumer) => "consumer",
        _ => "unspecified",
    }
}

fn metrics_of(export: ExportMetricsServiceRequest) -> Vec<Metric> {
    let mut metrics = Vec::new();
    for resource_metrics in export.resource_metrics {
        let resource = resource_metrics
            .resource
            .map(|r| attributes(&r.attributes))
            .unwrap_or_default();
        for scope in resource_metrics.scope_metrics {
            for m in scope.metrics {
                let (kind, points) = match &m.data {
                    Some(metric::Data::Histogram(h)) => (
                        "histogram",
                        h.data_points
                            .iter()
                            .map(|p| Point {
                                attributes: attributes(&p.attributes),
                                count: Some(p.count),
                                sum: p.sum,
                                value: None,
                            })
                            .collect(),
                    ),
                    Some(metric::Data::Sum(s)) => ("sum", number_points(&s.data_points)),
                    Some(metric::Data::Gauge(g)) => ("gauge", number_points(&g.data_points)),
                    Some(metric::Data::ExponentialHistogram(_)) => {
                        ("exponential_histogram", Vec::new())
                    }
                    Some(metric::Data::Summary(_)) => ("summary", Vec::new()),
                    None => ("none", Vec::new()),
                };
                metrics.push(Metric {
                    name: m.name,
                    unit: m.unit,
                    description: m.description,
                    kind,
                    points,
                    resource: resource.clone(),
                });
            }
        }
    }
    metrics
}

fn number_points(
    points: &[opentelemetry_proto::tonic::metrics::v1::NumberDataPoint],
) -> Vec<Point> {
    points
        .iter()
        .map(|p| Point {
            attributes: attributes(&p.attributes),
            count: None,
            sum: None,
            value: match p.value {
                Some(number_data_point::Value::AsDouble(d)) => Some(d),
                Some(number_data_point::Value::AsInt(i)) => Some(i as f64),
                None => None,
            },
        })
        .collect()
}

fn attributes(kvs: &[KeyValue]) -> Attributes {
    kvs.iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map(value).unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn value(v: &AnyValue) -> Value {
    match &v.value {
        Some(any_value::Value::StringValue(s)) => Value::from(s.clone()),
        Some(any_value::Value::BoolValue(b)) => Value::from(*b),
        Some(any_value::Value::IntValue(i)) => Value::from(*i),
        Some(any_value::Value::DoubleValue(d)) => Value::from(*d),
        Some(any_value::Value::ArrayValue(a)) => Value::Array(a.values.iter().map(value).collect()),
        Some(any_value::Value::KvlistValue(kv)) => Value::Object(
            kv.values
                .iter()
                .map(|kv| {
                    (
                        kv.key.clone(),
                        kv.value.as_ref().map(value).unwrap_or(Value::Null),
                    )
                })
                .collect(),
        ),
        Some(any_value::Value::BytesValue(b)) => Value::from(hex(b)),
        _ => Value::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
