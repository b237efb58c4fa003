//! A provider on HTTPS, as every hosted one is: the client verifies its certificate
//! against the roots the platform gives (here the suite's own authority, named by
//! `SSL_CERT_FILE`), speaks HTTP/2 when the server offers it by ALPN — every run, however
//! many at once and from a cold start, on one connection — and HTTP/1.1 otherwise, with a connection per request
//! in flight; a server whose certificate no trusted authority issued gets no request.
//! Its own test binary: it sets the process's trusted roots before any client loads them.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use toolnexus::{ClientError, LlmClient, RunStatus};

mod common;
use common::{client_of, echo_flow_reply, echo_toolkit};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// Makes the suite's authority the only one this process trusts, once, before any client
/// of it loads the platform's roots.
fn trust_the_suites_authority() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: every test of this binary calls this first and waits on `ONCE` while it
        // runs, so no thread of the tests reads the environment meanwhile.
        unsafe { std::env::set_var("SSL_CERT_FILE", fixture("ca.pem")) };
    });
}

/// A Chat Completions endpoint on HTTPS scripting the `echo` flow, offering `alpn`, with
/// the certificate `cert` (`server` or `stranger`); it counts the connections that finish
/// a TLS handshake and records each request's HTTP version.
struct Provider {
    base_url: String,
    handshakes: Arc<AtomicUsize>,
    versions: Arc<Mutex<Vec<Version>>>,
}

impl Provider {
    async fn start(cert: &str, alpn: &[&[u8]]) -> Provider {
        trust_the_suites_authority();
        let chain = CertificateDer::pem_file_iter(fixture(&format!("{cert}.pem")))
            .expect("the certificate reads")
            .collect::<Result<Vec<_>, _>>()
            .expect("the certificate parses");
        let key =
            PrivateKeyDer::from_pem_file(fixture(&format!("{cert}.key"))).expect("the key reads");
        #[allow(deprecated)]
        let ring = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(ring)
            .with_safe_default_protocol_versions()
            .expect("the provider's versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("the certificate and key match");
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let provider = Provider {
            base_url: format!("https://{addr}/v1"),
            handshakes: Arc::default(),
            versions: Arc::default(),
        };
        let (handshakes, versions) = (provider.handshakes.clone(), provider.versions.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, handshakes, versions) =
                    (acceptor.clone(), handshakes.clone(), versions.clone());
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake: nothing to serve.
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    handshakes.fetch_add(1, Ordering::SeqCst);
                    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
                    let io = TokioIo::new(tls);
                    let service = service_fn(move |request| answer(request, versions.clone()));
                    // A connection the client drops mid-way ends here; the test reads the counts.
                    let _ = if h2 {
                        http2::Builder::new(TokioExecutor::new())
                            .serve_connection(io, service)
                            .await
                    } else {
                        http1::Builder::new().serve_connection(io, service).await
                    };
                });
            }
        });
        provider
    }

    fn client(&self) -> LlmClient {
        client_of(&self.base_url)
    }

    fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    fn versions(&self) -> Vec<Version> {
        self.versions.lock().unwrap().clone()
    }
}

async fn answer(
    request: Request<Incoming>,
    versions: Arc<Mutex<Vec<Version>>>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    versions.lock().unwrap().push(request.version());
    let body = request.into_body().collect().await?.to_bytes();
    let reply = echo_flow_reply(&body);
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(reply)))
        .unwrap())
}

/// Runs the `echo` flow `n` times at once on `client`, each to its end.
async fn runs_at_once(client: &LlmClient, n: usize) {
    let toolkit = echo_toolkit();
    let runs = (0..n).map(|_| client.run("echo x", &toolkit).into_future());
    for result in futures::future::join_all(runs).await {
        let result = result.unwrap();
        assert_eq!(
            (result.status, result.text.as_str()),
            (RunStatus::Done, "done")
        );
    }
}

#[tokio::test]
async fn a_provider_offering_http2_serves_every_run_at_once_on_one_connection() {
    let provider = Provider::start("server", &[b"h2", b"http/1.1"]).await;
    let client = provider.client();

    // A cold client's first eight runs at once: one connects, the others wait to learn
    // that it speaks HTTP/2, and all eight go over it side by side.
    runs_at_once(&client, 8).await;
    assert_eq!(
        provider.handshakes(),
        1,
        "one connection for the first burst"
    );
    runs_at_once(&client, 8).await;
    assert_eq!(provider.handshakes(), 1, "one connection for every run");
    let versions = provider.versions();
    assert_eq!(versions.len(), 2 * 16, "two turns a run");
    assert!(
        versions.iter().all(|v| *v == Version::HTTP_2),
        "{versions:?}"
    );
}

#[tokio::test]
async fn a_provider_on_http1_gets_a_connection_per_request_in_flight_taken_again() {
    let provider = Provider::start("server", &[b"http/1.1"]).await;
    let client = provider.client();

    for batch in 0..2 {
        runs_at_once(&client, 4).await;
        assert_eq!(provider.handshakes(), 4, "after batch {batch}");
    }
    let versions = provider.versions();
    assert!(
        versions.iter().all(|v| *v == Version::HTTP_11),
        "{versions:?}"
    );
}

#[tokio::test]
async fn a_certificate_no_trusted_authority_issued_gets_no_request() {
    let provider = Provider::start("stranger", &[b"h2", b"http/1.1"]).await;
    let err = provider
        .client()
        .run("echo x", &echo_toolkit())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Network(_)), "{err:?}");
    let said = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(said.contains("could not connect"), "{said}");
    assert_eq!(provider.handshakes(), 0);
    assert!(provider.versions().is_empty());
}
