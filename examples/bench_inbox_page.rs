//! How fast the inbox page is, over real HTTP on loopback against a SQLite file: the list
//! with 1,000 waiting requests (as served, a page at a time, and all on one page), and an
//! answer posted from a request's page.
//!
//! ```sh
//! cargo run --release --example bench_inbox_page            # 1,000 waiting, 300 samples
//! cargo run --release --example bench_inbox_page -- 5000 100
//! ```
//! Each figure is the time from sending the request to the last byte of the response, as a
//! browser would wait for it; the forgery token a POST needs is read from the request's page
//! beforehand, outside the timing.

mod failure;
use failure::Failure;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{pending, tool, Answer, LlmClient, RunStatus, ToolResult, Toolkit};
use toolnexus_inbox::{web, Inbox};

/// Asks a person to approve buying an item
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        _ => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

/// Every run asks to approve a purchase of its own numbered item.
fn script() -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
    let runs = AtomicUsize::new(0);
    move |_| {
        let n = runs.fetch_add(1, Ordering::Relaxed);
        Reply::tool_call(
            "call_1",
            "approve_purchase",
            json!({ "item": format!("gpu #{n}") }),
        )
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms ({} samples)",
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.9)),
        ms(percentile(&samples, 0.99)),
        samples.len()
    );
}

fn forgery_token(page: &str) -> Option<String> {
    let marker = r#"name="_forgery" value=""#;
    let at = page.find(marker)? + marker.len();
    page[at..].split('"').next().map(str::to_owned)
}

/// Serves `app` on a loopback port and signs in: its base URL, the session cookie, and the
/// server task.
async fn serve(
    http: &reqwest::Client,
    app: axum::Router,
    token: &str,
) -> Result<
    (String, String, tokio::task::JoinHandle<std::io::Result<()>>),
    Box<dyn std::error::Error>,
> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}/", listener.local_addr()?);
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let signed_in = http.get(format!("{base}?token={token}")).send().await?;
    let cookie = signed_in
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .ok_or("no session cookie")?
        .to_owned();
    Ok((base, cookie, server))
}

/// `samples` loads of the list (after a warm-up), and the page's size in bytes.
async fn time_list(
    http: &reqwest::Client,
    base: &str,
    cookie: &str,
    samples: usize,
) -> Result<(Vec<Duration>, usize), Box<dyn std::error::Error>> {
    let mut times = Vec::with_capacity(samples);
    let mut size = 0;
    for i in 0..samples + 20 {
        let t = Instant::now();
        let page = http
            .get(base)
            .header("cookie", cookie)
            .send()
            .await?
            .text()
            .await?;
        // The first few warm the connection and the database's cache.
        if i >= 20 {
            times.push(t.elapsed());
        }
        size = page.len();
    }
    Ok((times, size))
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let waiting: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let samples: usize = args.next().map_or(Ok(300), |a| a.parse())?;

    let dir = std::env::temp_dir().join(format!("toolnexus-bench-inbox-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let inbox = Inbox::open(&format!("sqlite://{}", dir.join("inbox.db").display())).await?;
    let model = MockLlm::with_fn(script()).await?;
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model("scripted")
        .api_key("k")
        .build()?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
    let started = Instant::now();
    let mut ids = Vec::with_capacity(waiting);
    for _ in 0..waiting {
        let run = client.run("buy a gpu", &tk).await?;
        assert_eq!(run.status, RunStatus::Pending);
        ids.push(inbox.park(&run).await?);
    }
    println!(
        "parked {waiting} runs in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let token = web::new_token()?;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    // The list as served (a page of the default size), and with every waiting request on
    // one page, to show what paging saves.
    let (base, cookie, server) =
        serve(&http, web::router(inbox.clone(), token.clone()), &token).await?;
    let whole = web::InboxPage::builder(inbox.clone())
        .token(token.clone())
        .page_size(waiting.max(1))
        .router();
    let (whole_base, whole_cookie, whole_server) = serve(&http, whole, &token).await?;
    let list = time_list(&http, &base, &cookie, samples).await?;
    report(
        &format!(
            "GET / with {waiting} waiting, {} a page ({} KiB)",
            web::DEFAULT_PAGE_SIZE,
            list.1 / 1024
        ),
        list.0,
    );
    let list = time_list(&http, &whole_base, &whole_cookie, samples).await?;
    report(
        &format!(
            "GET / with {waiting} waiting, all on one page ({} KiB)",
            list.1 / 1024
        ),
        list.0,
    );
    whole_server.abort();

    let mut answers = Vec::with_capacity(samples);
    for id in ids.iter().take(samples.min(waiting)) {
        let url = format!("{base}r/{id}");
        let page = http
            .get(&url)
            .header("cookie", &cookie)
            .send()
            .await?
            .text()
            .await?;
        let token = forgery_token(&page).ok_or("no forgery token on the page")?;
        let t = Instant::now();
        let response = http
            .post(&url)
            .header("cookie", &cookie)
            .form(&[("_forgery", token.as_str()), ("_action", "approve")])
            .send()
            .await?;
        let status = response.status();
        response.bytes().await?;
        answers.push(t.elapsed());
        assert_eq!(
            status,
            reqwest::StatusCode::SEE_OTHER,
            "the answer was not taken"
        );
    }
    report("POST r/{id} (approve)", answers);

    server.abort();
    drop(inbox);
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}
