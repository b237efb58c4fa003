//! An inbox page served in-process on loopback for the page's tests: a SQLite inbox, a
//! scripted model whose runs park one request each (an approval, a form, a sign-in, and
//! requests with hostile or expired content) or three gated deletes at once, and the
//! page's router on an ephemeral port.
#![allow(dead_code)] // each test file uses part of it

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    auth_required, pending, tool, Answer, Answered, Approval, LlmClient, NativeTool, RunStatus,
    ToolResult, Toolkit,
};
use toolnexus_inbox::web::{InboxPage, InboxPageBuilder};
use toolnexus_inbox::{web, Inbox, Person};
use toolnexus_test_support::clock::TestClock;

/// A purchase needs a yes
#[tool]
async fn buy(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("bought {item}")),
        _ => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    }
}

/// A refund only finance, or Ada, may approve
#[tool]
async fn refund(amount: u32, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("refunded {amount}")),
        _ => pending!(
            kind = "approval",
            prompt = format!("Refund {amount} euros?"),
            data = json!({"responders": ["ada@example.com", "group:finance"]})
        ),
    }
}

/// A payment two distinct people of finance must approve
#[tool(approval(prompt = "Pay {amount} euros?", responders = ["group:finance"], quorum = 2))]
async fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

/// The cookie the tests sign in with as one person or another ([`people`]).
pub const PERSON_COOKIE: &str = "test_person";

/// The host's sign-in the tests control: cookie `test_person=ada` is Ada (in finance),
/// `test_person=bob` is Bob (in sales), `test_person=carol` is Carol (in finance); anything
/// else is nobody.
pub fn people(parts: &axum::http::request::Parts) -> Option<Person> {
    let cookies = parts
        .headers
        .get(axum::http::header::COOKIE)?
        .to_str()
        .ok()?;
    let who = cookies
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == PERSON_COOKIE)?
        .1;
    match who {
        "ada" => Some(
            Person::new("ada@example.com")
                .name("Ada")
                .groups(["finance"]),
        ),
        "bob" => Some(Person::new("bob@example.com").name("Bob").groups(["sales"])),
        "carol" => Some(
            Person::new("carol@example.com")
                .name("Carol")
                .groups(["finance"]),
        ),
        _ => None,
    }
}

/// A room booking.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Booking {
    /// Who the room is for
    pub guest: String,
    /// Nights to stay, one to fourteen
    #[schemars(range(min = 1, max = 14))]
    pub nights: u32,
    /// Breakfast included
    pub breakfast: bool,
    /// Room size
    pub room: Room,
    /// Budget per night, in euros
    pub budget: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Room {
    Single,
    Double,
}

/// Books a hotel room; asks for the guest's details
#[tool]
async fn book(city: String, details: Option<Answered<Booking>>) -> ToolResult {
    match details {
        Some(d) => ToolResult::ok(format!(
            "booked {} nights in {city} for {}",
            d.nights, d.guest
        )),
        None => pending!(
            kind = "input",
            prompt = format!("Who stays in {city}?"),
            answer = Booking
        ),
    }
}

/// Reads the mailbox after a sign-in
#[tool]
async fn mail(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok("2 new messages"),
        _ => auth_required!(url = "https://login.example.com/authorize?app=inbox-tests"),
    }
}

/// Asks with text and an address a model made up
#[tool]
async fn lure(text: String, url: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok("lured"),
        None => pending!(kind = "authorization", prompt = text, url = url),
    }
}

/// Asks for a form no page can show (a nested object)
#[tool]
async fn nested(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok("nested"),
        None => pending!(
            kind = "input",
            prompt = "Where exactly?",
            data = json!({"schema": {"type": "object",
                                     "properties": {"to": {"type": "object"}},
                                     "required": ["to"]}})
        ),
    }
}

/// Asks under an id of its own choosing
#[tool]
async fn named(id: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok("named"),
        None => pending!(kind = "approval", prompt = "Named?", id = id),
    }
}

/// Asks with a deadline
#[tool]
async fn stale(expires_at: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::ok("in time"),
        None => pending!(
            kind = "approval",
            prompt = "Approve before the deadline?",
            expires_at = expires_at
        ),
    }
}

/// `delete(path, keep_days?)`, behind a declared approval (see `Site::serve`): reports what
/// it deleted, with the arguments it ran with.
fn delete() -> impl toolnexus::Tool {
    NativeTool::of(
        "delete",
        "Deletes a file",
        json!({"type": "object",
               "properties": {"path": {"type": "string", "minLength": 1},
                              "keep_days": {"type": "integer", "minimum": 0,
                                            "description": "Days to keep a copy"}},
               "required": ["path"]}),
        |args, _ctx| async move {
            let path = args["path"].as_str().unwrap_or("?");
            match args["keep_days"].as_i64() {
                Some(days) => format!("deleted {path}, a copy kept {days} days"),
                None => format!("deleted {path}"),
            }
        },
    )
}

/// The model: each prompt names the tool to call and its arguments as JSON after a `|`
/// (`purge | {"dir": …}` deletes three files of the directory in one turn); once the
/// results are in, it reports them all.
fn script(req: &RecordedRequest) -> Reply {
    if let Some(out) = tool_outputs(req) {
        return Reply::text(format!("finished: {out}"));
    }
    let asked = req
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let (tool, args) = asked.split_once('|').unwrap_or((asked, "{}"));
    let args: serde_json::Value =
        serde_json::from_str(args).unwrap_or_else(|e| panic!("bad args {args:?}: {e}"));
    if tool.trim() == "purge" {
        let dir = args["dir"].as_str().unwrap_or("tmp").to_owned();
        return Reply::tool_calls(["a", "b", "c"].map(|file| {
            let path = format!("{dir}/{file}");
            (format!("call_{file}"), "delete", json!({ "path": path }))
        }));
    }
    Reply::tool_call("call_1", tool.trim(), args)
}

/// The results of the last turn's calls, in call order, joined by ` | `.
fn tool_outputs(req: &RecordedRequest) -> Option<String> {
    let messages = req.messages();
    let results: Vec<&str> = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    if results.is_empty() {
        return None;
    }
    Some(results.into_iter().rev().collect::<Vec<_>>().join(" | "))
}

/// Where the host serves the page's router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mounting {
    /// The router is the whole app.
    Root,
    /// `Router::nest("/inbox", …)` in a host app with a home page of its own at `/`.
    Nest,
    /// `Router::nest_service("/inbox", …)` in the same host app.
    NestService,
    /// `Router::nest("/inbox/", …)`, the prefix written with its slash.
    NestSlash,
}

/// What the host app's own home page says, so a test sees when a link left the inbox.
pub const HOST_HOME: &str = "the host's own home page";

/// The page on loopback, and what is behind it.
pub struct Site {
    /// The list's address: `http://127.0.0.1:PORT/`, or `http://127.0.0.1:PORT/inbox`
    /// when mounted under the host's prefix.
    pub base: String,
    /// The router's root, where its routes (`r/{id}`, `style.css`) sit below:
    /// `http://127.0.0.1:PORT/` or `http://127.0.0.1:PORT/inbox/`.
    pub root: String,
    pub token: String,
    pub inbox: Inbox,
    pub client: LlmClient,
    pub tk: Toolkit,
    pub model: MockLlm,
    /// The time of the inbox [`start`](Self::start) opened, which the test moves on (one
    /// given to [`serve`](Self::serve) keeps its own clock).
    pub clock: TestClock,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Site {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Site {
    /// The page with its defaults on an in-memory SQLite inbox.
    pub async fn start() -> Site {
        Site::on_clock(|page| page).await
    }

    /// The page with its defaults on an in-memory SQLite inbox, served as `mounting` says.
    pub async fn mounted(mounting: Mounting) -> Site {
        let clock = TestClock::default();
        let inbox = Inbox::builder("sqlite::memory:")
            .clock(clock.reader())
            .open()
            .await
            .expect("an inbox");
        let mut site = Site::serve_at(inbox, |page| page, mounting).await;
        site.clock = clock;
        site
    }

    /// The page on an in-memory SQLite inbox, its token's holder answering as `user`.
    pub async fn start_as(user: &str) -> Site {
        Site::on_clock(|page| page.user(user)).await
    }

    /// The page on an in-memory SQLite inbox reading the site's clock, with options
    /// `configure` adds.
    pub async fn on_clock(configure: impl FnOnce(InboxPageBuilder) -> InboxPageBuilder) -> Site {
        let clock = TestClock::default();
        let inbox = Inbox::builder("sqlite::memory:")
            .clock(clock.reader())
            .open()
            .await
            .expect("an inbox");
        let mut site = Site::serve(inbox, configure).await;
        site.clock = clock;
        site
    }

    /// The page for `inbox`, with options `configure` adds.
    pub async fn serve(
        inbox: Inbox,
        configure: impl FnOnce(InboxPageBuilder) -> InboxPageBuilder,
    ) -> Site {
        Site::serve_at(inbox, configure, Mounting::Root).await
    }

    /// The page for `inbox`, with options `configure` adds, served as `mounting` says.
    pub async fn serve_at(
        inbox: Inbox,
        configure: impl FnOnce(InboxPageBuilder) -> InboxPageBuilder,
        mounting: Mounting,
    ) -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        Site::serve_on(listener, inbox, configure, mounting).await
    }

    /// The page for `inbox` on `listener` (bound already, so its address can go into the
    /// page's settings), with options `configure` adds, served as `mounting` says.
    pub async fn serve_on(
        listener: tokio::net::TcpListener,
        inbox: Inbox,
        configure: impl FnOnce(InboxPageBuilder) -> InboxPageBuilder,
        mounting: Mounting,
    ) -> Site {
        let model = MockLlm::with_fn(script)
            .await
            .expect("the scripted model starts");
        let client = LlmClient::builder()
            .base_url(model.base_url())
            .model("scripted")
            .api_key("test-key")
            .build()
            .expect("a client");
        let tk = Toolkit::builder()
            .tool(Buy)
            .tool(Book)
            .tool(Mail)
            .tool(Lure)
            .tool(Stale)
            .tool(Named)
            .tool(Nested)
            .tool(Refund)
            .tool(Pay)
            .tool(delete())
            .approval(Approval::tools(["delete"]))
            .build()
            .expect("a toolkit");
        let token = web::new_token().expect("a token");
        let host = format!("http://{}/", listener.local_addr().expect("an address"));
        let page = configure(InboxPage::builder(inbox.clone()).token(token.clone())).router();
        let home = axum::Router::new().route("/", axum::routing::get(|| async { HOST_HOME }));
        let (app, base, root) = match mounting {
            Mounting::Root => (page, host.clone(), host),
            Mounting::Nest => (
                home.nest("/inbox", page),
                format!("{host}inbox"),
                format!("{host}inbox/"),
            ),
            Mounting::NestSlash => (
                home.nest("/inbox/", page),
                format!("{host}inbox/"),
                format!("{host}inbox/"),
            ),
            Mounting::NestService => (
                home.nest_service("/inbox", page),
                format!("{host}inbox"),
                format!("{host}inbox/"),
            ),
        };
        // The peer's address, for the trusted-proxy tests.
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the page serves");
        });
        Site {
            base,
            root,
            token,
            inbox,
            client,
            tk,
            model,
            clock: TestClock::default(),
            server,
        }
    }

    /// Runs `prompt` (`tool | {json args}`) until it halts, parks it, and returns the id.
    pub async fn park(&self, prompt: &str) -> String {
        let run = self.client.run(prompt, &self.tk).await.expect("the run");
        assert_eq!(
            run.status,
            RunStatus::Pending,
            "{prompt} did not halt: {}",
            run.text
        );
        self.inbox.park(&run).await.expect("parked")
    }

    pub async fn approval(&self, item: &str) -> String {
        self.park(&format!("buy | {}", json!({ "item": item })))
            .await
    }

    /// A refund whose approval names Ada and finance as its responders.
    pub async fn refund(&self, amount: u32) -> String {
        self.park(&format!("refund | {}", json!({ "amount": amount })))
            .await
    }

    /// A payment two people of finance must approve.
    pub async fn payment(&self, amount: u32) -> String {
        self.park(&format!("pay | {}", json!({ "amount": amount })))
            .await
    }

    pub async fn booking(&self) -> String {
        self.park(r#"book | {"city": "Lyon"}"#).await
    }

    pub async fn sign_in(&self) -> String {
        self.park("mail").await
    }

    pub async fn lure(&self, text: &str, url: &str) -> String {
        self.park(&format!("lure | {}", json!({ "text": text, "url": url })))
            .await
    }

    /// An input whose form the page cannot render.
    pub async fn nested(&self) -> String {
        self.park("nested").await
    }

    /// An approval parked under `id`.
    pub async fn named(&self, id: &str) -> String {
        self.park(&format!("named | {}", json!({ "id": id }))).await
    }

    /// An approval that expires `after` from now, as the site's clock reads it.
    pub async fn stale(&self, after: Duration) -> String {
        let at = time::OffsetDateTime::from(self.clock.now()) + after;
        let at = at
            .format(&time::format_description::well_known::Rfc3339)
            .expect("a timestamp");
        self.park(&format!("stale | {}", json!({ "expires_at": at })))
            .await
    }

    /// A run halted on three gated deletes in `dir`: its request ids, the first of them the
    /// run's.
    pub async fn purge(&self, dir: &str) -> Vec<String> {
        let id = self
            .park(&format!("purge | {}", json!({ "dir": dir })))
            .await;
        let parked = self
            .inbox
            .get(&id)
            .await
            .expect("the store")
            .expect("parked");
        assert_eq!(parked.requests.len(), 3, "the three deletes wait");
        parked.requests
    }

    /// The page of request `id`, below the router's root.
    pub fn request_url(&self, id: &str) -> String {
        format!("{}r/{id}", self.root)
    }

    /// Resumes every answered run, as a worker would.
    pub async fn resume_all(&self) {
        while self
            .inbox
            .resume_next(&self.client, &self.tk)
            .await
            .expect("a resume")
            .is_some()
        {}
    }
}

/// The example binary, started with its options; its standard output arrives line by line.
pub struct Example {
    pub child: Child,
    lines: mpsc::Receiver<String>,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Example {
    pub fn start(db: &str, options: &[&str]) -> Example {
        let mut command = super::example_bin::command("inbox");
        let mut child = command
            .args(["--port", "0", "--db", db])
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stdout = child.stdout.take().expect("a piped stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Example { child, lines }
    }

    /// The next line of its standard output, waiting up to `limit` for it.
    pub fn line(&self, limit: Duration) -> String {
        self.lines
            .recv_timeout(limit)
            .expect("the example printed a line in time")
    }
}
