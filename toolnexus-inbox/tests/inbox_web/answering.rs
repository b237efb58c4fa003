//! A request answered on its page: approvals, refused and forged answers, unknown and
//! expired requests, forms and their checks, sign-ins, and model-made text kept inert.

use super::*;

#[tokio::test]
async fn an_approval_is_answered_once_and_its_outcome_shown() {
    let site = Site::start_as("tester").await;
    let id = site.approval("gpu").await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"value="approve""#) && page.contains(r#"value="decline""#),
        "{page}"
    );
    assert!(
        page.contains("buy({&quot;item&quot;:&quot;gpu&quot;})"),
        "{page}"
    );
    let token = forgery_token(&page);

    let response = post(&site, &cookie, &id)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], id.as_str());
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answer, Some(Answer::ok(&id)));
    assert_eq!(parked.answered_by.as_deref(), Some("tester"));

    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains(r#"<p class="banner">Approved."#), "{page}");
    assert!(page.contains("Waiting for a worker"), "{page}");
    assert!(page.contains(r#"http-equiv="refresh""#), "{page}");
    assert!(!page.contains("<form"), "{page}");

    // The first answer won: a second one, from the page loaded before, is a conflict.
    let (status, page) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "decline")],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(page.contains("Already answered"), "{page}");
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answer, Some(Answer::ok(&id)));

    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("finished: bought gpu"), "{page}");
    assert!(!page.contains(r#"http-equiv="refresh""#), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("Nothing waiting"), "{list}");
    assert!(list.contains("Recently answered"), "{list}");
    assert!(list.contains("finished: bought gpu"), "{list}");
    assert!(list.contains("approved by tester"), "{list}");
}

#[tokio::test]
async fn answers_not_from_the_page_are_refused() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let other = site.approval("cpu").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    let (_, other_page) = get(&cookie, &site.request_url(&other)).await;
    let other_token = forgery_token(&other_page);
    let approve = |t: &str| {
        vec![
            ("_forgery".to_owned(), t.to_owned()),
            ("_action".to_owned(), "approve".to_owned()),
        ]
    };

    // No session: the page never sees it.
    let anonymous = http()
        .post(site.request_url(&id))
        .form(&approve(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    // Another origin, told by either header.
    for (name, value) in [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let response = http()
            .post(site.request_url(&id))
            .header(header::COOKIE, &cookie)
            .header(name, value)
            .form(&approve(&token))
            .send()
            .await
            .unwrap();
        let (status, page) = body(response).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {value}");
        assert!(page.contains("came from another site"), "{page}");
    }

    // No token, a wrong one, another request's.
    for fields in [
        vec![("_action".to_owned(), "approve".to_owned())],
        approve("00ff"),
        approve(&other_token),
    ] {
        let (status, page) = body(
            post(&site, &cookie, &id)
                .form(&fields)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{fields:?}");
        assert!(page.contains("anti-forgery token"), "{page}");
    }

    // A button this request does not have, and a body that is no form.
    let (status, _) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "signed-in")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, page) = body(
        post(&site, &cookie, &id)
            .header(header::CONTENT_TYPE, "application/json")
            .body(r#"{"_action":"approve"}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("Unreadable answer"), "{page}");

    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn unknown_and_expired_requests_say_so() {
    let site = Site::start().await;
    let cookie = session(&site).await;
    let (status, page) = get(&cookie, &site.request_url("no-such-id")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("No such request"), "{page}");
    let (status, _) = post_form(
        &site,
        &cookie,
        "no-such-id",
        &[("_forgery", "00"), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let id = site.stale(Duration::ZERO).await;
    let (status, page) = get(&cookie, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("This request expired"), "{page}");
    assert!(!page.contains("<form"), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("expired"), "{list}");

    // A page loaded before the deadline, answered after it: too late.
    let id = site.stale(Duration::from_secs(60)).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    site.clock.advance(Duration::from_secs(61));
    let (status, page) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", token.as_str()), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("Request expired"), "{page}");
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn a_form_is_rendered_from_its_schema_and_checked_on_the_server() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    for needle in [
        r#"name="f.guest""#,
        r#"<p class="help" id="field-guest-help">Who the room is for</p>"#,
        r#"inputmode="numeric""#,
        r#"type="checkbox""#,
        r#"<option value="double">double</option>"#,
        r#"inputmode="decimal""#,
        "novalidate",
    ] {
        assert!(page.contains(needle), "`{needle}` missing in:\n{page}");
    }
    // guest, nights and room are marked required; budget is not, and neither is the
    // breakfast checkbox, since leaving it unchecked answers `false`.
    assert_eq!(page.matches(r#"title="required""#).count(), 3, "{page}");

    // Typed values that do not parse are caught before the store, all at once.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada <Lovelace>"),
                ("f.nights", "two"),
                ("f.room", "double"),
                ("f.budget", "cheap"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("Enter a whole number"), "{page}");
    assert!(page.contains("Enter a number"), "{page}");
    assert!(
        page.contains(r#"value="Ada &lt;Lovelace&gt;""#),
        "the value typed is kept: {page}"
    );
    assert!(
        page.contains(r#"<option value="double" selected>"#),
        "{page}"
    );

    // Values that parse but do not fit the schema are the store's to refuse.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada"),
                ("f.nights", "30"),
                ("f.room", "double"),
                ("f.breakfast", "true"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let error_at = page
        .find(r#"id="field-nights-error""#)
        .expect("an error on nights");
    assert!(
        page[error_at..].starts_with(r#"id="field-nights-error" role="alert">Must be at most 14"#),
        "{page}"
    );
    assert!(
        page.contains(r#"name="f.breakfast" value="true" checked"#),
        "{page}"
    );
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);

    let response = answer(
        &site,
        &cookie,
        &id,
        &[
            ("_action", "submit"),
            ("f.guest", "Ada"),
            ("f.nights", "3"),
            ("f.room", "single"),
            ("f.budget", ""),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        parked.answer.unwrap().data,
        Some(json!({"guest": "Ada", "nights": 3, "breakfast": false, "room": "single"}))
    );
    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("finished: booked 3 nights in Lyon for Ada"),
        "{page}"
    );
}

#[tokio::test]
async fn a_form_shows_every_field_problem_in_one_round() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    // `nights` reads as a number but is out of the form's range; `budget` does not read at
    // all: both are shown at once, each at its field.
    let (status, page) = body(
        answer(
            &site,
            &cookie,
            &id,
            &[
                ("_action", "submit"),
                ("f.guest", "Ada"),
                ("f.nights", "30"),
                ("f.room", "double"),
                ("f.budget", "cheap"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    for field in ["nights", "budget"] {
        assert!(
            page.contains(&format!(r#"id="field-{field}-error" role="alert""#)),
            "no error at `{field}`: {page}"
        );
    }
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn declining_a_form_skips_its_checks_and_keeps_the_reason() {
    let site = Site::start().await;
    let id = site.booking().await;
    let cookie = session(&site).await;
    let response = answer(
        &site,
        &cookie,
        &id,
        &[
            ("_action", "decline"),
            ("_reason", "no trip after all"),
            ("f.nights", "many"),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(
        parked.answer,
        Some(Answer::refuse(&id, Refusal::Declined).with_note("no trip after all"))
    );
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("declined: “no trip after all”"), "{page}");
}

#[tokio::test]
async fn a_sign_in_links_its_address_and_can_be_cancelled() {
    let site = Site::start().await;
    let id = site.sign_in().await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains(r#"<a href="https://login.example.com/authorize?app=inbox-tests" target="_blank" rel="noopener noreferrer">"#),
        "{page}"
    );
    assert!(page.contains("I have signed in"), "{page}");
    let response = answer(
        &site,
        &cookie,
        &id,
        &[("_action", "cancel"), ("_reason", "wrong account")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    // The button's code and the person's words, apart: whoever reads the code (an MCP
    // server waiting on this sign-in) sees a cancel, whatever was typed.
    assert_eq!(
        parked.answer,
        Some(Answer::refuse(&id, Refusal::Cancelled).with_note("wrong account"))
    );
    site.resume_all().await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains(r#"<p class="banner refused">Sign-in cancelled."#),
        "{page}"
    );
    assert!(!page.contains("Answered."), "{page}");
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("cancelled: “wrong account”"), "{list}");
    assert!(list.contains("finished: declined/expired: "), "{list}");
}

#[tokio::test]
async fn model_made_text_and_addresses_stay_inert() {
    let site = Site::start().await;
    let id = site
        .lure(
            "<script>alert('x')</script><img src=x onerror=alert(1)> Sign in",
            "javascript:alert(document.cookie)",
        )
        .await;
    let spaced = site.lure("Spaced", " javascript:alert(1)").await;
    let cookie = session(&site).await;
    for url in [
        site.base.clone(),
        site.request_url(&id),
        site.request_url(&spaced),
    ] {
        let (status, page) = get(&cookie, &url).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("href=\"javascript"), "{page}");
        assert!(!page.contains("href=\" javascript"), "{page}");
    }
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("is not a web address"), "{page}");
    assert!(
        page.contains("<code>javascript:alert(document.cookie)</code>"),
        "{page}"
    );
}

#[tokio::test]
async fn ids_that_need_escaping_round_trip() {
    let site = Site::start().await;
    let cookie = session(&site).await;
    let id = site.named("a/b?c d").await;
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains(r#"href="r/a%2Fb%3Fc%20d""#), "{list}");
    let (status, page) = get(&cookie, &format!("{}r/a%2Fb%3Fc%20d", site.base)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains(r#"action="a%2Fb%3Fc%20d""#), "{page}");
    let token = forgery_token(&page);
    let response = http()
        .post(format!("{}r/a%2Fb%3Fc%20d", site.base))
        .header(header::COOKIE, &cookie)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "a%2Fb%3Fc%20d");
    assert_eq!(
        site.inbox.get(&id).await.unwrap().unwrap().answer,
        Some(Answer::ok(&id))
    );
}
