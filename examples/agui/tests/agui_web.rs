//! The CopilotKit app of `examples/agui/web` in a real headless Chromium, served by the
//! `agui_agent` example beside its AG-UI endpoint (`--web DIR`), as a user runs them: a
//! purchase asked in the chat waits as a card with Approve, Decline and Edit; the card
//! comes from the agent's `connect` (the page keeps nothing but the thread's id), so it is
//! back after a reload, after the agent was killed (`SIGKILL`; an approval while it is
//! down is refused, the card staying) and started again on the same database, and in
//! another browser of the same person; an approval buys exactly once, a decline buys
//! nothing, an edited item is what is bought; and, with `--tokens` and `--approvers`, a
//! person who may not approve cannot, while an approver can, in her own thread or by
//! opening the asker's. The first test also takes the README's screenshot
//! (`examples/agui/web/approval-card.png`, replaced when `TOOLNEXUS_UPDATE_SCREENSHOT=1`
//! is set).
//!
//! Needs the built app (`TOOLNEXUS_TEST_AGUI_WEB`: scripts/test.sh runs `npm ci && npm
//! run build` in target/agui-web) and chromedriver (`TOOLNEXUS_TEST_WEBDRIVER`,
//! `TOOLNEXUS_TEST_CHROME_PROFILE`, started by scripts/test.sh), and the example built
//! beside this suite (`cargo test --workspace` builds it).

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use toolnexus_test_support::example_bin::Serving;
use toolnexus_test_support::{chromium, wait};

/// How long the page may take to show what a test waits for: a cold Chromium on a busy
/// two-core machine, a bundle of a few megabytes, and the agent's run behind it.
const PATIENCE: Duration = Duration::from_secs(60);

fn required_env(name: &str, what: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test.sh ({what})")
    })
}

/// The built app: `dist/` of examples/agui/web.
fn dist() -> PathBuf {
    let dist = PathBuf::from(required_env(
        "TOOLNEXUS_TEST_AGUI_WEB",
        "it builds the web app with `npm ci && npm run build` into target/agui-web/dist",
    ));
    assert!(
        dist.join("index.html").is_file(),
        "{} holds no built app: run `npm ci && npm run build` in a copy of \
         examples/agui/web (scripts/test.sh does, into target/agui-web)",
        dist.display()
    );
    dist
}

/// A directory of this test's own under the system's temp dir.
fn scratch(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("agui-web-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// The agent with the app, on `port` (0: one it picks), its threads in the SQLite file
/// `db`, until dropped.
fn agent(port: u16, db: &std::path::Path, extra: &[&str]) -> Serving {
    let (port, db, dist) = (
        port.to_string(),
        format!("sqlite://{}", db.display()),
        dist().display().to_string(),
    );
    let mut args = vec!["--port", &port, "--db", &db, "--web", &dist];
    args.extend_from_slice(extra);
    Serving::start("agui_agent", &args, "AG-UI agent at ")
}

fn port_of(url: &str) -> u16 {
    url.trim_end_matches('/')
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"))
}

/// A headless Chromium session with a profile of its own: its own local storage, so two
/// sessions are two people's browsers.
async fn browser() -> Client {
    chromium::session(1000, 720).await
}

async fn css(browser: &Client, selector: &str) -> Element {
    match browser
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(selector))
        .await
    {
        Ok(element) => element,
        Err(e) => panic!(
            "nothing matches `{selector}` ({e}); the page says:\n{}",
            text(browser).await
        ),
    }
}

/// What the page says, as a person reads it.
async fn text(browser: &Client) -> String {
    browser
        .execute("return document.body.innerText", vec![])
        .await
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Waits until the page says `what`.
async fn says(browser: &Client, what: &str) -> String {
    let said = wait::within(PATIENCE, || async {
        let now = text(browser).await;
        now.contains(what).then_some(now)
    })
    .await;
    match said {
        Some(said) => said,
        None => panic!(
            "timed out waiting for `{what}`; the page says:\n{}",
            text(browser).await
        ),
    }
}

/// Opens the app on thread `thread`, as a person with `token` when given.
async fn open(browser: &Client, url: &str, thread: &str, token: Option<&str>) {
    let fragment = token.map(|t| format!("#token={t}")).unwrap_or_default();
    browser
        .goto(&format!("{url}?thread={thread}{fragment}"))
        .await
        .expect("the app loads");
    css(browser, "textarea").await;
}

/// Types `said` into the chat and sends it.
async fn ask(browser: &Client, said: &str) {
    let input = css(browser, "textarea").await;
    input.send_keys(said).await.expect("typing into the chat");
    // Enter sends, as a person sends.
    input.send_keys("\u{E007}").await.expect("Enter");
}

/// What the page keeps in the browser's storage: the names of its keys.
async fn kept(browser: &Client) -> Vec<String> {
    let keys = browser
        .execute(
            "return [...Object.keys(localStorage), ...Object.keys(sessionStorage)].sort()",
            vec![],
        )
        .await
        .expect("the storage's keys");
    serde_json::from_value(keys).expect("a list of names")
}

/// The tokens file of two people: ann (staff) and fin (finance).
fn people(dir: &std::path::Path) -> String {
    let tokens = dir.join("tokens.txt");
    std::fs::write(
        &tokens,
        "tok-ann ann@shop.example staff\ntok-fin fin@shop.example finance\n",
    )
    .expect("the tokens file");
    tokens.display().to_string()
}

/// The approval card, once it shows `question`.
async fn card(browser: &Client, question: &str) -> Element {
    let card = css(browser, ".approval-card").await;
    says(browser, question).await;
    card
}

async fn click(browser: &Client, selector: &str) {
    css(browser, selector)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking `{selector}`: {e}"));
}

/// How many orders the conversation tells of: the model's "Bought, order …" after each.
fn orders(said: &str) -> usize {
    said.matches("Bought, order ORDER-").count()
}

/// Reloads the page and waits for the chat to be back.
async fn reload(browser: &Client) {
    browser.refresh().await.expect("a reload");
    css(browser, "textarea").await;
}

/// The page as a PNG under target/screenshots/, and, with
/// `TOOLNEXUS_UPDATE_SCREENSHOT=1`, as the README's `examples/agui/web/approval-card.png`.
async fn screenshot(browser: &Client) {
    let png = browser.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = here.join("../../target/screenshots");
    std::fs::create_dir_all(&target).expect("target/screenshots/");
    std::fs::write(target.join("agui-approval-card.png"), &png).expect("the screenshot");
    if std::env::var_os("TOOLNEXUS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(here.join("web/approval-card.png"), &png).expect("the README's");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_purchase_waits_as_a_card_that_a_reload_brings_back_and_one_approval_buys_once() {
    let dir = scratch("reload");
    let agent = agent(0, &dir.join("threads.db"), &[]);
    let browser = browser().await;
    open(&browser, &agent.url, "reload-1", None).await;
    ask(&browser, "buy a gpu").await;
    card(&browser, "Approve purchase of gpu?").await;
    css(&browser, ".approval-card button.edit").await;
    screenshot(&browser).await;

    // The page keeps the thread's id and nothing of what it holds: a reload asks the
    // agent's `connect`, which shows the conversation and the card as the agent keeps them.
    assert_eq!(kept(&browser).await, ["toolnexus-agui/current-thread"]);
    reload(&browser).await;
    card(&browser, "Approve purchase of gpu?").await;
    assert!(
        text(&browser).await.contains("buy a gpu"),
        "the conversation is back"
    );

    click(&browser, ".approval-card button.approve").await;
    let said = says(&browser, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "one approval, one order:\n{said}");
    // The agent numbers its orders from one: a purchase that ran twice would be ORDER-2.
    assert!(
        said.contains("ORDER-1: bought gpu") && !said.contains("ORDER-2"),
        "the purchase ran once:\n{said}"
    );

    // Nothing is left to approve, and a reload neither asks nor buys again.
    reload(&browser).await;
    let said = says(&browser, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "still one order:\n{said}");
    assert!(
        browser.find(Locator::Css(".approval-card")).await.is_err(),
        "no card once answered:\n{said}"
    );
    browser.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_outlives_the_agent_killed_and_started_again_on_its_database() {
    let dir = scratch("crash");
    let db = dir.join("threads.db");
    let first = agent(0, &db, &[]);
    let (url, port) = (first.url.clone(), port_of(&first.url));
    let browser = browser().await;
    open(&browser, &url, "crash-1", None).await;
    ask(&browser, "buy a gpu").await;
    card(&browser, "Approve purchase of gpu?").await;

    // Dropping the example sends it SIGKILL (`Child::kill`) and reaps it: no shutdown of
    // its own, as a crash.
    drop(first);
    // An approval while the agent is down reaches nobody: the page says so, and the card
    // stays to be answered.
    click(&browser, ".approval-card button.approve").await;
    let failed = css(&browser, "[role=alert]").await;
    let why = failed.text().await.expect("the alert's text");
    assert!(why.contains("could not be reached"), "{why}");
    css(&browser, ".approval-card button.approve:not([disabled])").await;

    // Started again on the same port and database, it shows the thread from there.
    let _second = agent(port, &db, &[]);
    reload(&browser).await;
    card(&browser, "Approve purchase of gpu?").await;
    click(&browser, ".approval-card button.approve").await;
    let said = says(&browser, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "one order after the restart:\n{said}");
    // The restarted agent numbers its orders from one: the purchase ran once, there.
    assert!(
        said.contains("ORDER-1: bought gpu") && !said.contains("ORDER-2"),
        "the purchase ran once:\n{said}"
    );
    browser.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_purchase_buys_nothing() {
    let dir = scratch("decline");
    let agent = agent(0, &dir.join("threads.db"), &[]);
    let browser = browser().await;
    open(&browser, &agent.url, "decline-1", None).await;
    ask(&browser, "buy a gpu").await;
    card(&browser, "Approve purchase of gpu?").await;
    click(&browser, ".approval-card button.decline").await;
    let said = says(&browser, "The purchase was declined.").await;
    assert!(!said.contains("ORDER-"), "nothing bought:\n{said}");
    browser.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_item_is_the_one_bought() {
    let dir = scratch("edit");
    let agent = agent(0, &dir.join("threads.db"), &[]);
    let browser = browser().await;
    open(&browser, &agent.url, "edit-1", None).await;
    ask(&browser, "buy a gpu").await;
    card(&browser, "Approve purchase of gpu?").await;
    click(&browser, ".approval-card button.edit").await;
    let item = css(&browser, ".approval-card input[name=item]").await;
    item.clear().await.expect("the field clears");
    item.send_keys("tpu").await.expect("typing the item");
    click(&browser, ".approval-card button.approve").await;
    let said = says(&browser, "Bought, order ORDER-").await;
    assert!(
        said.contains("ORDER-1: bought tpu"),
        "the edited item:\n{said}"
    );
    assert!(
        !said.contains("bought gpu"),
        "not the proposed one:\n{said}"
    );
    assert_eq!(orders(&said), 1, "one order:\n{said}");
    browser.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn someone_who_may_not_approve_cannot_while_an_approver_can() {
    let dir = scratch("people");
    let tokens = people(&dir);
    let agent = agent(
        0,
        &dir.join("threads.db"),
        &["--tokens", &tokens, "--approvers", "finance"],
    );

    // Finance's browser: the card offers the edit, and the approval buys.
    let fin = browser().await;
    open(&fin, &agent.url, "fin-1", Some("tok-fin")).await;
    ask(&fin, "buy a gpu").await;
    card(&fin, "Approve purchase of gpu?").await;
    css(&fin, ".approval-card button.edit").await;
    click(&fin, ".approval-card button.approve").await;
    let said = says(&fin, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "the approver's order:\n{said}");
    fin.close().await.expect("the session closes");

    // Another person's browser: the question alone (no Edit: she is not shown the call),
    // and her approval is refused; the card stays, and nothing is bought.
    let ann = browser().await;
    open(&ann, &agent.url, "ann-1", Some("tok-ann")).await;
    ask(&ann, "buy a tpu").await;
    card(&ann, "Approve purchase of tpu?").await;
    assert!(
        ann.find(Locator::Css(".approval-card button.edit"))
            .await
            .is_err(),
        "no Edit for someone who may not approve"
    );
    click(&ann, ".approval-card button.approve").await;
    let refused = css(&ann, "[role=alert]").await;
    let why = refused.text().await.expect("the alert's text");
    assert!(
        why.contains("may not answer"),
        "the refusal says why: {why}"
    );
    // The refused resume left the interrupt open: the card is back, answerable again.
    css(&ann, ".approval-card button.approve:not([disabled])").await;
    let said = text(&ann).await;
    assert!(!said.contains("ORDER-"), "nothing bought:\n{said}");
    ann.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_person_in_another_browser_finds_the_card_and_approves_it_once() {
    let dir = scratch("devices");
    let tokens = people(&dir);
    let agent = agent(0, &dir.join("threads.db"), &["--tokens", &tokens]);
    // Opened on no thread, the page starts one and names it in the address.
    let laptop = browser().await;
    laptop
        .goto(&format!("{}#token=tok-ann", agent.url))
        .await
        .expect("the app loads");
    ask(&laptop, "buy a gpu").await;
    card(&laptop, "Approve purchase of gpu?").await;
    let address = laptop.current_url().await.expect("the page's address");
    let thread = address
        .query_pairs()
        .find(|(name, _)| name == "thread")
        .map(|(_, thread)| thread.into_owned())
        .unwrap_or_else(|| panic!("the address names no thread: {address}"));

    // That address in a browser of its own (a fresh profile: nothing in its storage), with
    // the same token: the conversation and the card come from the agent.
    let phone = browser().await;
    open(&phone, &agent.url, &thread, Some("tok-ann")).await;
    card(&phone, "Approve purchase of gpu?").await;
    says(&phone, "buy a gpu").await;
    css(&phone, ".approval-card button.edit").await;
    click(&phone, ".approval-card button.approve").await;
    let said = says(&phone, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "one approval, one order:\n{said}");
    assert!(
        said.contains("ORDER-1: bought gpu") && !said.contains("ORDER-2"),
        "the purchase ran once:\n{said}"
    );
    phone.close().await.expect("the session closes");

    // The first browser, reloaded, shows the thread as it now stands: bought once, and
    // nothing left to approve.
    reload(&laptop).await;
    let said = says(&laptop, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "still one order:\n{said}");
    assert!(
        laptop.find(Locator::Css(".approval-card")).await.is_err(),
        "no card once answered elsewhere:\n{said}"
    );
    laptop.close().await.expect("the session closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approver_opens_someone_elses_waiting_thread_and_approves_it() {
    let dir = scratch("approver");
    let tokens = people(&dir);
    let agent = agent(
        0,
        &dir.join("threads.db"),
        &["--tokens", &tokens, "--approvers", "finance"],
    );
    let ann = browser().await;
    open(&ann, &agent.url, "asked-1", Some("tok-ann")).await;
    ask(&ann, "buy a tpu").await;
    card(&ann, "Approve purchase of tpu?").await;

    // Finance opens the address ann's thread is at: the agent shows her the question, to
    // answer, and not ann's conversation.
    let fin = browser().await;
    open(&fin, &agent.url, "asked-1", Some("tok-fin")).await;
    card(&fin, "Approve purchase of tpu?").await;
    let said = text(&fin).await;
    assert!(
        !said.contains("buy a tpu"),
        "the conversation is ann's alone:\n{said}"
    );
    // She may answer: the card offers the edit too.
    css(&fin, ".approval-card button.edit").await;
    click(&fin, ".approval-card button.approve").await;
    // Her page goes on without the card (the run's conversation is ann's), refusing
    // nothing.
    let gone = wait::within(PATIENCE, || async {
        fin.find(Locator::Css(".approval-card"))
            .await
            .is_err()
            .then_some(())
    })
    .await;
    let said = text(&fin).await;
    assert!(gone.is_some(), "the card stays after the approval:\n{said}");
    assert!(
        fin.find(Locator::Css("[role=alert]")).await.is_err(),
        "the approval is taken:\n{said}"
    );
    fin.close().await.expect("the session closes");

    // Ann's page, reloaded, shows the purchase made once and nothing left to approve.
    reload(&ann).await;
    let said = says(&ann, "Bought, order ORDER-").await;
    assert_eq!(orders(&said), 1, "one order:\n{said}");
    assert!(
        said.contains("ORDER-1: bought tpu") && !said.contains("ORDER-2"),
        "the purchase ran once:\n{said}"
    );
    assert!(
        ann.find(Locator::Css(".approval-card")).await.is_err(),
        "no card once finance approved:\n{said}"
    );
    ann.close().await.expect("the session closes");
}
