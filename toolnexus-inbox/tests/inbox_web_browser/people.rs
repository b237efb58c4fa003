//! Who answers in the browser: a run's three requests approved, edited and declined on one page,
//! only a named responder answering, and another person's link asked about before it switches.

use super::*;

#[tokio::test]
async fn a_runs_three_requests_are_approved_edited_and_declined_on_one_page() {
    let site = Site::start().await;
    let ids = site.purge("tmp").await;
    // A worker resumes the run once every request is answered.
    let stop = toolnexus::CancellationToken::new();
    let worker = site.inbox.worker(site.client.clone(), site.tk.clone());
    let worker = tokio::spawn(worker.run(stop.clone().cancelled_owned()));

    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");
    wait_for_text(&browser, "3 requests waiting", false).await;
    browser
        .goto(&site.request_url(&ids[1]))
        .await
        .expect("the run's page opens");
    wait_for_text(&browser, "3 requests of one run", false).await;
    assert_eq!(
        value(&browser, "#field-r2-path").await,
        "tmp/b",
        "the proposed path"
    );

    click(&browser, "#request-1 button[value=approve]").await;
    wait_for_text(&browser, "Approved.", false).await;

    // An edit that does not fit the tool's schema first: the field is named, nothing kept.
    retype(&browser, "#field-r2-path", "tmp/b-old").await;
    type_into(&browser, "#field-r2-keep_days", "-1").await;
    click(&browser, "#request-2 button[value=edit]").await;
    let error = css(&browser, "#field-r2-keep_days-error")
        .await
        .text()
        .await
        .expect("a message");
    assert!(error.contains("at least 0"), "{error}");
    assert_eq!(value(&browser, "#field-r2-path").await, "tmp/b-old");
    assert_eq!(
        site.inbox.get(&ids[1]).await.unwrap().unwrap().state,
        ParkedState::Waiting,
        "a misfit answers nothing"
    );
    retype(&browser, "#field-r2-keep_days", "3").await;
    click(&browser, "#request-2 button[value=edit]").await;
    wait_for_text(&browser, "Approved with edited arguments.", false).await;

    type_into(&browser, "#reason-r3-decline", "keep it").await;
    click(&browser, "#request-3 button[value=decline]").await;
    // The answer's own page first: reloading before it arrives would cancel the post.
    wait_for_text(&browser, "declined: “keep it”", false).await;
    wait_for_text(
        &browser,
        "finished: deleted tmp/a | deleted tmp/b-old, a copy kept 3 days",
        true,
    )
    .await;
    browser.close().await.expect("the session closes");

    stop.cancel();
    assert_eq!(worker.await.expect("the worker").resumed, 1);
    assert_eq!(
        site.model.calls(),
        2,
        "resumed once, with the three answers"
    );
    let resumed = site
        .model
        .requests()
        .last()
        .cloned()
        .expect("the resume's call");
    let results: Vec<String> = resumed
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0], "deleted tmp/a");
    assert!(
        results[1].starts_with("deleted tmp/b-old, a copy kept 3 days"),
        "the edited call ran with the edited arguments: {results:?}"
    );
    assert!(
        results[2].contains("declined") && results[2].contains("keep it"),
        "{results:?}"
    );
}

#[tokio::test]
async fn only_a_named_responder_answers_in_the_browser() {
    let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:")
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let browser = browser().await;
    // The cookie needs a page of the site first: the sign-in page, as nobody is signed in.
    browser.goto(&site.base).await.expect("the site");

    sign_in_as(&browser, "bob").await;
    browser.goto(&site.base).await.expect("the inbox opens");
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Bob"
    );
    click(&browser, ".card .prompt a").await;
    wait_for_text(&browser, "you see it read-only", false).await;
    assert!(
        browser.find(Locator::Css("form.answer")).await.is_err(),
        "Bob has no form"
    );

    // Ada opens it and gets the form; Bob, at the same browser, presses its button.
    sign_in_as(&browser, "ada").await;
    browser.refresh().await.expect("a reload");
    assert_eq!(
        css(&browser, ".viewer .who").await.text().await.unwrap(),
        "Ada"
    );
    sign_in_as(&browser, "bob").await;
    click(&browser, "form.answer button[value=approve]").await;
    wait_for_text(&browser, "Not yours to answer", false).await;
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting
    );

    // Ada herself approves, and the history names her.
    sign_in_as(&browser, "ada").await;
    browser
        .goto(&site.request_url(&id))
        .await
        .expect("the request");
    click(&browser, "form.answer button[value=approve]").await;
    wait_for_text(&browser, "by ada@example.com", false).await;
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
    browser.close().await.expect("the session closes");
}

#[tokio::test]
async fn another_persons_link_asks_before_the_browser_switches() {
    let (ada, bob) = (
        web::new_token().expect("a token"),
        web::new_token().expect("a token"),
    );
    let (a, b) = (ada.clone(), bob.clone());
    let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:")
        .await
        .unwrap();
    let people = move |page: web::InboxPageBuilder| {
        page.token_for(Person::new("ada@example.com").name("Ada"), a)
            .token_for(Person::new("bob@example.com").name("Bob"), b)
    };
    // Under a prefix, so the cookie's path is the mount's, not the host's root.
    let site = Site::serve_at(inbox, people, Mounting::Nest).await;
    site.approval("lamp").await;
    let browser = browser().await;
    let signed_in_as = |who: &str| format!("Signed in as <strong class=\"who\">{who}</strong>");
    browser
        .goto(&format!("{}?token={ada}", site.base))
        .await
        .expect("the inbox opens");
    assert_eq!(arrival(&browser, "inbox").await, site.base);
    wait_for_text(&browser, &signed_in_as("Ada"), false).await;

    // Bob's link in Ada's browser: a question, and Ada stays Ada if she says so.
    let bobs = format!("{}?kind=approval&token={bob}", site.base);
    browser.goto(&bobs).await.expect("Bob's link opens");
    wait_for_text(&browser, "Sign in as Bob?", false).await;
    click_link(&browser, "Stay signed in as Ada").await;
    let listed = format!("{}?kind=approval", site.base);
    assert_eq!(arrival(&browser, "kind=approval").await, listed);
    wait_for_text(&browser, &signed_in_as("Ada"), false).await;

    // Asked again, and the button switches: Bob now, the token out of the address bar.
    browser.goto(&bobs).await.expect("Bob's link opens");
    click(&browser, "section.switch button[type=submit]").await;
    assert_eq!(arrival(&browser, "kind=approval").await, listed);
    wait_for_text(&browser, &signed_in_as("Bob"), false).await;
    browser.close().await.expect("the session closes");
}
