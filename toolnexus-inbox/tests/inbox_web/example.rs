//! The `inbox` example program: its outcomes printed, two people with their own links,
//! its options; and a form the page cannot show.

use super::*;

#[tokio::test]
async fn the_example_prints_each_outcome_and_exits_when_done() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("inbox.db").display());
    let example = Example::start(&db, &["--exit-when-done"]);
    let limit = Duration::from_secs(30);
    let first = example.line(limit);
    let (base, cookie) = example_session(&first).await;
    let mut ids = Vec::new();
    while ids.len() < 3 {
        if let Some(rest) = example.line(limit).strip_prefix("parked ") {
            ids.push(rest.split(':').next().unwrap().to_owned());
        }
    }
    let answers: [&[(&str, &str)]; 3] = [
        &[("_action", "approve")],
        &[
            ("_action", "submit"),
            ("f.city", "Paris"),
            ("f.zip", "75001"),
            ("f.carrier", "post"),
        ],
        &[("_action", "cancel")],
    ];
    for (id, fields) in ids.iter().zip(answers) {
        assert_eq!(
            answer_at(&base, &cookie, id, fields).await,
            StatusCode::SEE_OTHER
        );
    }
    let mut done = Vec::new();
    while done.len() < 3 {
        let line = example.line(limit);
        if line.starts_with("done ") {
            done.push(line);
        }
    }
    let mut example = example;
    let status = example.child.wait().unwrap();
    assert!(status.success(), "{status}");
    for (id, text) in ids.iter().zip([
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboards to 75001 Paris in 1 parcel(s), standard, by Post.",
        "Without a sign-in I cannot read your calendar.",
    ]) {
        let line = format!("done {id}: {text}");
        assert!(done.contains(&line), "`{line}` missing from {done:#?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_examples_two_people_sign_in_with_their_own_links() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-people-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("inbox.db").display());
    let example = Example::start(&db, &[]);
    let limit = Duration::from_secs(30);
    let (base, ada) = example_session(&example.line(limit)).await;
    let second = example.line(limit);
    let bobs_link = second
        .strip_prefix("inbox as bob@example.com: ")
        .unwrap_or_else(|| panic!("the second line is Bob's link: {second:?}"));
    let (_, bob) = example_session(&format!("inbox: {bobs_link}")).await;
    assert_ne!(ada, bob);
    let mut purchase = None;
    while purchase.is_none() {
        let line = example.line(limit);
        if let Some(rest) = line.strip_prefix("parked ")
            && rest.ends_with("Buy a gpu for the lab.")
        {
            purchase = rest.split(':').next().map(str::to_owned);
        }
    }
    let purchase = purchase.unwrap();

    let (_, list) = get(&bob, &base).await;
    assert!(
        list.contains("Signed in as <strong class=\"who\">Bob</strong>"),
        "{list}"
    );
    // Purchases are finance's: Bob sees this one, read-only, and his answer is refused.
    let (status, page) = get(&bob, &format!("{base}r/{purchase}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("you see it read-only"), "{page}");
    assert!(!page.contains("_forgery"), "no form for Bob:\n{page}");
    let (_, adas_page) = get(&ada, &format!("{base}r/{purchase}")).await;
    assert!(
        adas_page.contains("Signed in as <strong class=\"who\">Ada</strong>"),
        "{adas_page}"
    );
    let refused = http()
        .post(format!("{base}r/{purchase}"))
        .header(header::COOKIE, &bob)
        .form(&[
            ("_forgery", forgery_token(&adas_page).as_str()),
            ("_action", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        answer_at(&base, &ada, &purchase, &[("_action", "approve")]).await,
        StatusCode::SEE_OTHER
    );
    let done = format!("done {purchase}: The gpu purchase is approved and on its way.");
    while example.line(limit) != done {}
    drop(example);
    let inbox = toolnexus_inbox::Inbox::open(&db).await.unwrap();
    let row = inbox.get(&purchase).await.unwrap().unwrap();
    assert_eq!(row.answered_by.as_deref(), Some("ada@example.com"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_example_refuses_unknown_options() {
    let mut example = Example::start("sqlite::memory:", &["--colour"]);
    let status = example.child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
}

#[tokio::test]
async fn a_form_the_page_cannot_show_can_only_be_declined() {
    let site = Site::start().await;
    let id = site.nested().await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("cannot be shown here"), "{page}");
    assert!(page.contains("field `to`"), "{page}");
    assert!(!page.contains(r#"value="submit""#), "{page}");
    let token = forgery_token(&page);
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "submit")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "decline")],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(state_of(&site, &id).await, ParkedState::Answered);
}
