//! What a person reads at a glance, in the example's three runs answered by clicking: what to
//! click, which fields must be filled in, an approval apart from a refusal, how a run ended.

use super::*;

#[tokio::test]
async fn the_example_is_answered_in_a_browser() {
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-web-{}", uuid_like()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    // Served as a person would run it (no --exit-when-done), so the page stays up after the
    // last outcome.
    let example = Example::start(&format!("sqlite://{}", dir.join("inbox.db").display()), &[]);
    let first = example.line(PATIENCE);
    let url = first
        .strip_prefix("inbox: ")
        .unwrap_or_else(|| panic!("the first line is not the link: {first:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let mut parked = Vec::new();
    while parked.len() < 3 {
        let line = example.line(PATIENCE);
        if let Some(rest) = line.strip_prefix("parked ") {
            parked.push(rest.to_owned());
        }
    }

    let browser = browser().await;
    browser.goto(&url).await.expect("the inbox opens");
    let address = browser.current_url().await.expect("a URL").to_string();
    assert!(
        !address.contains("token"),
        "the token stays in the address bar: {address}"
    );
    wait_for_text(&browser, "3 requests waiting", true).await;

    // The approval: one click.
    click_link(&browser, "Approve purchase of gpu?").await;
    click(&browser, "button[value=approve]").await;
    wait_for_text(
        &browser,
        "The gpu purchase is approved and on its way.",
        false,
    )
    .await;

    // The form: a wrong value first, then the fix.
    click_link(&browser, "toolnexus inbox").await;
    click_link(&browser, "Where should the 2 keyboards go?").await;
    assert_eq!(
        value(&browser, "#field-parcels").await,
        "1",
        "the default is filled in"
    );
    type_into(&browser, "#field-city", "Lyon").await;
    type_into(&browser, "#field-zip", "690").await;
    retype(&browser, "#field-parcels", "2").await;
    click(&browser, "#field-express").await;
    css(&browser, "#field-carrier")
        .await
        .select_by_value("courier")
        .await
        .expect("pick");
    click(&browser, "button[value=submit]").await;
    let error = css(&browser, "#field-zip-error")
        .await
        .text()
        .await
        .expect("a message");
    assert!(error.contains("at least 5"), "{error}");
    assert_eq!(value(&browser, "#field-city").await, "Lyon");
    assert_eq!(value(&browser, "#field-parcels").await, "2");
    assert!(css(&browser, "#field-express")
        .await
        .is_selected()
        .await
        .expect("checked"));
    assert_eq!(value(&browser, "#field-carrier").await, "courier");
    retype(&browser, "#field-zip", "69001").await;
    click(&browser, "button[value=submit]").await;
    wait_for_text(&browser, "Done: ordered 2 keyboards to 69001 Lyon", false).await;

    // The README's screenshot: the sign-in waiting, the two answered runs with their outcomes.
    click_link(&browser, "toolnexus inbox").await;
    wait_for_text(&browser, "Done: ordered 2 keyboards", true).await;
    screenshot(&browser, WIDE, "inbox.png", true).await;
    screenshot(&browser, NARROW, "inbox-narrow.png", true).await;

    // The sign-in: its link is there; declined with a reason.
    click_link(
        &browser,
        "Sign in to your calendar so I can read today's meetings",
    )
    .await;
    let href = css(&browser, "p.signin a")
        .await
        .attr("href")
        .await
        .expect("an href");
    assert_eq!(
        href.as_deref(),
        Some("https://accounts.example.com/authorize?client_id=toolnexus-inbox-demo")
    );
    type_into(&browser, "#reason-cancel", "not now").await;
    click(&browser, "button[value=cancel]").await;
    wait_for_text(
        &browser,
        "Without a sign-in I cannot read your calendar.",
        false,
    )
    .await;

    // Every outcome on the list; the example saw them all and exits.
    click_link(&browser, "toolnexus inbox").await;
    let list = source(&browser).await;
    for outcome in [
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboards",
        "Without a sign-in I cannot read your calendar.",
        "cancelled: “not now”",
        "Nothing waiting",
    ] {
        assert!(
            list.contains(outcome),
            "`{outcome}` missing from the list:\n{list}"
        );
    }
    browser.close().await.expect("the session closes");

    let mut done = Vec::new();
    while done.len() < 3 {
        let line = example.line(PATIENCE);
        if line.starts_with("done ") {
            done.push(line);
        }
    }
    let done = done.join("\n");
    for (id_and_prompt, text) in parked.iter().zip([
        "The gpu purchase is approved and on its way.",
        "Done: ordered 2 keyboards to 69001 Lyon in 2 parcel(s), express, by Courier.",
        "Without a sign-in I cannot read your calendar.",
    ]) {
        let id = id_and_prompt.split(':').next().expect("an id");
        assert!(
            done.contains(&format!("done {id}: {text}")),
            "{id}: {text} in\n{done}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_page_says_what_to_click_what_to_fill_and_how_it_ended() {
    let site = Site::start().await;
    let approval = site.approval("gpu").await;
    let booking = site.booking().await;
    let sign_in = site.sign_in().await;
    let browser = browser().await;
    browser
        .goto(&format!("{}?token={}", site.base, site.token))
        .await
        .expect("the inbox opens");

    // Every waiting card has a visible "Answer" action, at both widths.
    for size in [NARROW, WIDE] {
        browser
            .set_window_size(size.0, size.1)
            .await
            .expect("resize");
        let actions = browser
            .find_all(Locator::Css(".card a.action"))
            .await
            .expect("the actions");
        assert_eq!(actions.len(), 3, "one action per waiting request");
        for action in &actions {
            assert!(action.is_displayed().await.expect("displayed"));
            assert_eq!(action.text().await.expect("text"), "Answer");
            let (_, _, width, height) = action.rectangle().await.expect("a box");
            assert!(
                width > 30.0 && height > 15.0,
                "{width}×{height} is hard to hit"
            );
        }
    }
    // Clicking the action opens that request; so does a click anywhere else on the card.
    let card = format!(".card:has(a[href$=\"{approval}\"])");
    click(&browser, &format!("{card} a.action")).await;
    let here = arrival(&browser, &approval).await;
    assert!(here.ends_with(&approval), "{here}");
    browser.back().await.expect("back");
    click(&browser, &card).await;
    let here = arrival(&browser, &approval).await;
    assert!(here.ends_with(&approval), "the card is not a link: {here}");

    // A checkbox is never required: unchecked is an answer.
    browser
        .goto(&site.request_url(&booking))
        .await
        .expect("the form");
    let breakfast = css(&browser, "#field-breakfast").await;
    assert_eq!(
        breakfast.attr("type").await.expect("type").as_deref(),
        Some("checkbox")
    );
    assert_eq!(breakfast.attr("required").await.expect("attr"), None);
    let label = css(&browser, "label[for=field-breakfast]").await;
    assert!(
        label.find(Locator::Css(".req")).await.is_err(),
        "the checkbox is marked required"
    );
    screenshot(&browser, WIDE, "form.png", false).await;

    // The reason's label sits above its input, not against it.
    browser
        .goto(&site.request_url(&sign_in))
        .await
        .expect("the sign-in");
    let label = rect(&browser, "label[for=reason-cancel]").await;
    let input = rect(&browser, "#reason-cancel").await;
    assert!(
        label.1 + label.3 <= input.1,
        "the label {label:?} runs into its input {input:?}"
    );
    type_into(&browser, "#reason-cancel", "not now").await;
    click(&browser, "button[value=cancel]").await;
    let refused = css(&browser, "p.banner").await;
    assert_eq!(refused.text().await.expect("text"), "Sign-in cancelled.");
    assert_eq!(
        refused.attr("class").await.expect("class").as_deref(),
        Some("banner refused")
    );
    let refused_colours = (
        style(&browser, "p.banner", "background-color").await,
        style(&browser, "p.banner", "color").await,
    );
    screenshot(&browser, WIDE, "refused.png", false).await;
    screenshot(&browser, NARROW, "refused-narrow.png", false).await;

    // An approval's banner reads and looks otherwise.
    browser
        .goto(&site.request_url(&approval))
        .await
        .expect("the approval");
    click(&browser, "button[value=approve]").await;
    let approved = css(&browser, "p.banner").await;
    assert_eq!(approved.text().await.expect("text"), "Approved.");
    let approved_colours = (
        style(&browser, "p.banner", "background-color").await,
        style(&browser, "p.banner", "color").await,
    );
    assert_ne!(
        refused_colours.0, approved_colours.0,
        "a refusal and an approval share one background"
    );
    assert_ne!(refused_colours.1, approved_colours.1, "and one colour");
    browser.close().await.expect("the session closes");
}
