//! A sub-agent's question answered in the browser after the process that parked it was
//! killed: the example's three-level agent (planner > payments > approvals > refund) halts
//! on finance's approval of the refund, its process is SIGKILLed, and a new process on the
//! same database serves the page, where the request says which agents asked it, someone
//! outside finance may only read it, and a finance person's approval has the new process's
//! worker resume the three runs and refund once.

use std::os::unix::process::ExitStatusExt;

use super::*;

/// The example's link for `who` among its first lines (`inbox: URL` is Ada's, of finance;
/// `inbox as bob@example.com: URL` is Bob's), and the id of the run it parked, if any.
fn links(example: &Example, parks: bool) -> (String, String, Option<String>) {
    let ada = example.line(PATIENCE);
    let ada = ada
        .strip_prefix("inbox: ")
        .unwrap_or_else(|| panic!("the first line is not the link: {ada:?}"))
        .to_owned();
    let bob = example.line(PATIENCE);
    let bob = bob
        .strip_prefix("inbox as bob@example.com: ")
        .unwrap_or_else(|| panic!("the second line is not Bob's link: {bob:?}"))
        .to_owned();
    // Other lines (which model it runs on) may come before the parked run's.
    let parked = parks.then(|| loop {
        let line = example.line(PATIENCE);
        if let Some(rest) = line.strip_prefix("parked ") {
            let (id, _) = rest.split_once(':').expect("parked <id>: <prompt>");
            break id.to_owned();
        }
    });
    (ada, bob, parked)
}

#[tokio::test]
async fn a_relayed_approval_is_answered_on_the_page_of_a_new_process_after_a_kill() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-agents-{}", uuid_like()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let db = format!("sqlite://{}", dir.join("inbox.db").display());

    let mut first = Example::start(&db, &["--agents"]);
    let (_, _, parked) = links(&first, true);
    let id = parked.expect("the planner's run parked");
    // SIGKILL: no shutdown of any kind, as a crash or an OOM kill leaves it.
    first.child.kill().expect("SIGKILL the example");
    let status = first.child.wait().expect("the example ends");
    assert_eq!(status.signal(), Some(9), "{status}");

    let second = Example::start(&db, &["--agents", "--serve-only"]);
    let (ada, bob, _) = links(&second, false);

    // Bob is not of finance: he reads the request and who asked it, and cannot answer.
    let browser = browser().await;
    browser.goto(&bob).await.expect("the inbox opens");
    wait_for_text(&browser, "1 request waiting", true).await;
    click_link(&browser, "payments > approvals: Refund order A-7?").await;
    let here = arrival(&browser, &id).await;
    assert!(here.ends_with(&id), "{here}");
    let via = css(&browser, "p.via").await.text().await.expect("text");
    assert_eq!(via, "Asked by payments > approvals, for its tool refund");
    css(&browser, "p.banner.readonly").await;
    assert!(
        browser
            .find(Locator::Css("button[value=approve]"))
            .await
            .is_err(),
        "Bob may not approve"
    );
    browser.close().await.expect("the session closes");

    // Ada, of finance, approves on the new process's page.
    let browser = super::browser().await;
    browser.goto(&ada).await.expect("the inbox opens");
    wait_for_text(&browser, "1 request waiting", true).await;
    click_link(&browser, "payments > approvals: Refund order A-7?").await;
    arrival(&browser, &id).await;
    let via = css(&browser, "p.via").await.text().await.expect("text");
    assert_eq!(via, "Asked by payments > approvals, for its tool refund");
    screenshot(&browser, WIDE, "relayed-request.png", false).await;
    click(&browser, "button[value=approve]").await;
    let banner = css(&browser, "p.banner").await;
    assert_eq!(banner.text().await.expect("text"), "Approved.");
    wait_for_text(&browser, "Planner: Payments: Approvals: refunded A-7", true).await;
    browser.close().await.expect("the session closes");

    // The new process's worker ran the refund, once, and finished the planner's run.
    let mut effects = 0;
    let done = loop {
        let line = second.line(PATIENCE);
        if line == "refund took effect: A-7" {
            effects += 1;
        } else if let Some(done) = line.strip_prefix(&format!("done {id}: ")) {
            break done.to_owned();
        }
    };
    assert_eq!(done, "Planner: Payments: Approvals: refunded A-7");
    assert_eq!(effects, 1, "one refund");
    let inbox = toolnexus_inbox::Inbox::open(&db).await.expect("the inbox");
    let parked = inbox.get(&id).await.expect("the store").expect("the run");
    assert_eq!(parked.run_state, ParkedState::Done);
    assert_eq!(parked.attempts, 1, "resumed once: {parked:?}");
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}
