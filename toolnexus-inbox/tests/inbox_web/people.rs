//! Who sees and answers what: a run's requests together, people not allowed, identities
//! forwarded by a trusted proxy, receipts, webhooks, filters, deliveries, anonymous tokens.

use super::*;

#[tokio::test]
async fn a_runs_requests_are_answered_together_on_one_page() {
    let site = Site::start().await;
    let ids = site.purge("tmp").await;
    let id = &ids[0];
    let cookie = session(&site).await;

    // Any of the run's requests opens the run's page, with all three.
    let (status, page) = get(&cookie, &site.request_url(&ids[1])).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("3 requests of one run"), "{page}");
    for n in 1..=3 {
        let section = request_section(&page, n);
        assert!(section.contains(r#"value="approve""#), "{section}");
        assert!(section.contains(r#"value="edit""#), "{section}");
        assert!(
            section.contains(&format!(r#"id="reason-r{n}-decline""#)),
            "{section}"
        );
    }
    let second = request_section(&page, 2);
    assert!(
        second.contains(r#"id="field-r2-path" name="f.path" value="tmp/b""#),
        "the edit form is filled with the proposed arguments: {second}"
    );
    assert!(second.contains(r#"id="field-r2-keep_days""#), "{second}");
    let tokens: Vec<String> = (1..=3)
        .map(|n| forgery_token(request_section(&page, n)))
        .collect();
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("3 requests waiting"), "{list}");
    assert!(list.contains("one of 3 requests of its run"), "{list}");

    // A request's token answers that request only.
    let (status, _) = post_form(
        &site,
        &cookie,
        &ids[0],
        &[("_forgery", tokens[1].as_str()), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // An edit that does not fit the tool's schema: the page again, the field named.
    let (status, page) = post_form(
        &site,
        &cookie,
        &ids[1],
        &[
            ("_forgery", tokens[1].as_str()),
            ("_action", "edit"),
            ("f.path", "tmp/b2"),
            ("f.keep_days", "-1"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let second = request_section(&page, 2);
    assert!(
        second.contains(r#"id="field-r2-keep_days-error""#),
        "{second}"
    );
    assert!(second.contains("at least 0"), "{second}");
    assert!(
        second.contains(r#"value="tmp/b2""#),
        "what was typed stays: {second}"
    );
    assert_eq!(state_of(&site, &ids[1]).await, ParkedState::Waiting);

    for (n, fields) in [
        (0, vec![("_action", "approve")]),
        (
            1,
            vec![
                ("_action", "edit"),
                ("f.path", "tmp/b2"),
                ("f.keep_days", "3"),
            ],
        ),
        (2, vec![("_action", "decline"), ("_reason", "keep it")]),
    ] {
        let mut form = vec![("_forgery", tokens[n].as_str())];
        form.extend(fields);
        let response = post(&site, &cookie, &ids[n])
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            response.headers()[header::LOCATION],
            id.as_str(),
            "back to the run"
        );
    }
    let edited = site.inbox.get(&ids[1]).await.unwrap().unwrap().answer;
    assert_eq!(
        edited,
        Some(Answer::ok(&ids[1]).with_args(json!({"path": "tmp/b2", "keep_days": 3})))
    );
    let (_, page) = get(&cookie, &site.request_url(id)).await;
    assert!(page.contains("Approved with edited arguments."), "{page}");
    assert!(page.contains("keep_days</span> 3"), "{page}");
    assert!(page.contains("declined: “keep it”"), "{page}");
    assert!(page.contains("Waiting for a worker"), "{page}");

    site.resume_all().await;
    assert_eq!(
        site.model.calls(),
        2,
        "one call to halt, one after the three answers"
    );
    let (_, page) = get(&cookie, &site.request_url(&ids[2])).await;
    assert!(
        page.contains("finished: deleted tmp/a | deleted tmp/b2, a copy kept 3 days"),
        "{page}"
    );
    assert!(!page.contains(r#"http-equiv="refresh""#), "{page}");
}

#[tokio::test]
async fn a_person_not_allowed_sees_the_request_read_only_and_is_refused() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let (bob, ada) = (as_person("bob"), as_person("ada"));

    let (status, page) = get(&bob, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Signed in as <strong class=\"who\">Bob</strong>"),
        "{page}"
    );
    assert!(page.contains("you see it read-only"), "{page}");
    assert!(!page.contains("_forgery"), "no form for Bob:\n{page}");

    // Even with Ada's form token, Bob's answer is refused and changes nothing.
    let (_, adas_page) = get(&ada, &site.request_url(&id)).await;
    let token = forgery_token(&adas_page);
    let (status, page) = post_form(
        &site,
        &bob,
        &id,
        &[("_forgery", &token), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("Not yours to answer"), "{page}");
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
    assert_eq!(
        site.inbox.audit(&id).await.unwrap().len(),
        1,
        "only the parking"
    );

    // Ada may: her answer is recorded as hers, and the history says so.
    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(page.contains("History"), "{page}");
    assert!(page.contains("answered</strong>"), "{page}");
    assert!(page.contains("by ada@example.com"), "{page}");
}

#[tokio::test]
async fn a_forwarded_identity_counts_only_from_the_trusted_proxy() {
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    let elsewhere = std::net::IpAddr::from([10, 9, 9, 9]);
    for (proxy, trusted) in [(loopback, true), (elsewhere, false)] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let site = Site::serve(inbox, |page| {
            page.trusted_proxy([proxy])
                .trust_proxy_headers([web::ProxyHeader::Email, web::ProxyHeader::User])
        })
        .await;
        let id = site.approval("lamp").await;
        let forwarded = || {
            http()
                .get(&site.base)
                .header("x-forwarded-email", "ada@example.com")
                .header("x-forwarded-user", "ada")
        };
        let (status, page) = body(forwarded().send().await.unwrap()).await;
        if trusted {
            assert_eq!(status, StatusCode::OK, "{page}");
            assert!(
                page.contains("Signed in as <strong class=\"who\">ada</strong>"),
                "{page}"
            );
            let page = body(
                http()
                    .get(site.request_url(&id))
                    .header("x-forwarded-email", "ada@example.com")
                    .send()
                    .await
                    .unwrap(),
            )
            .await
            .1;
            let token = forgery_token(&page);
            let response = post(&site, "", &id)
                .header("x-forwarded-email", "ada@example.com")
                .form(&[("_forgery", token.as_str()), ("_action", "approve")])
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::SEE_OTHER);
            let parked = site.inbox.get(&id).await.unwrap().unwrap();
            assert_eq!(parked.answered_by.as_deref(), Some("ada@example.com"));
        } else {
            // Not from the proxy: the headers are anyone's, so nobody is signed in.
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{page}");
            assert!(!page.contains("ada"), "{page}");
            assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
        }
    }
}

#[tokio::test]
async fn forwarded_headers_are_read_only_when_trusted_by_name() {
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    use web::ProxyHeader::{Email, Groups};
    // Bob is in sales; his groups header says finance, which may answer the refund.
    let as_finance = |url: &str| {
        http()
            .get(url)
            .header("x-forwarded-email", "bob@example.com")
            .header("x-forwarded-groups", "finance")
            .send()
    };
    for (headers, may_answer) in [
        (vec![], None),
        (vec![Email], Some(false)),
        (vec![Email, Groups], Some(true)),
    ] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let trusted = headers.clone();
        let site = Site::serve(inbox, move |page| {
            page.trusted_proxy([loopback]).trust_proxy_headers(trusted)
        })
        .await;
        let id = site.refund(40).await;
        let (status, page) = body(as_finance(&site.request_url(&id)).await.unwrap()).await;
        match may_answer {
            // The proxy's address alone trusts nothing it forwards.
            None => {
                assert_eq!(status, StatusCode::UNAUTHORIZED, "{headers:?}: {page}");
                assert!(!page.contains("bob"), "{page}");
            }
            Some(may) => {
                assert_eq!(status, StatusCode::OK, "{headers:?}: {page}");
                assert!(page.contains("bob@example.com"), "{page}");
                assert_eq!(page.contains("_forgery"), may, "{headers:?}: {page}");
                assert_eq!(!page.contains("you see it read-only"), may, "{page}");
            }
        }
    }
}

#[tokio::test]
async fn receipts_are_shown_only_to_who_may_answer_or_answered() {
    let key = toolnexus_inbox::receipt::ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = Inbox::builder("sqlite::memory:")
        .receipt_key(key)
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.refund(40).await;
    let (ada, bob, carol) = (as_person("ada"), as_person("bob"), as_person("carol"));
    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    let receipt = parked.votes[0]
        .receipt
        .clone()
        .expect("the inbox signed the vote");

    // Ada answered it and Carol, in finance, may: both see the receipt.
    for who in [&ada, &carol] {
        let (_, page) = get(who, &site.request_url(&id)).await;
        assert!(page.contains(&receipt.signature), "{who}: {page}");
    }
    // Bob may not answer it: he sees that it was approved, and by whom, not the receipt
    // nor what the vote said, nor the call.
    let call = r#"refund({&quot;amount&quot;:40})"#;
    let (_, page) = get(&carol, &site.request_url(&id)).await;
    assert!(page.contains(call), "{page}");
    let (_, list) = get(&carol, &site.base).await;
    assert!(list.contains(call), "{list}");
    let (_, list) = get(&bob, &site.base).await;
    assert!(list.contains("Refund 40 euros?"), "{list}");
    assert!(!list.contains(call), "{list}");
    let (status, page) = get(&bob, &site.request_url(&id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Approved."), "{page}");
    assert!(page.contains("answered</strong>"), "{page}");
    assert!(page.contains("by ada@example.com"), "{page}");
    assert!(!page.contains(&receipt.signature), "{page}");
    assert!(!page.contains(&receipt.key), "{page}");
    assert!(!page.contains("receipts"), "{page}");
    assert!(!page.contains("refund("), "{page}");

    // A quorum's first approval: its receipt is Ada's and finance's to see, not Bob's.
    let payment = site.payment(900).await;
    let response = answer(&site, &ada, &payment, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&payment).await.unwrap().unwrap();
    assert_eq!(parked.state, ParkedState::Waiting);
    let first = parked.votes[0].receipt.clone().expect("the vote's receipt");
    for (who, sees) in [(&ada, true), (&carol, true), (&bob, false)] {
        let (_, page) = get(who, &site.request_url(&payment)).await;
        assert!(page.contains("1 of 2 approvals"), "{who}: {page}");
        assert_eq!(page.contains(&first.signature), sees, "{who}: {page}");
    }
}

#[tokio::test]
async fn a_webhook_tells_of_an_answer_with_the_inboxs_receipts_never_its_callers() {
    let key = toolnexus_inbox::receipt::ReceiptKey::ephemeral_for_tests().unwrap();
    let hook = toolnexus_inbox::Webhook::new("http://127.0.0.1:9/never")
        .name("ops")
        .events([toolnexus_inbox::Event::Answered]);
    let inbox = Inbox::builder("sqlite::memory:")
        .receipt_key(key)
        .webhook(hook)
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let (first, second) = (site.refund(40).await, site.refund(50).await);
    let ada = toolnexus_inbox::Person::new("ada@example.com");
    site.inbox
        .answer_as(Answer::ok(&first), ada.clone())
        .await
        .unwrap();
    let signed = site.inbox.get(&first).await.unwrap().unwrap().votes[0]
        .receipt
        .clone()
        .expect("the inbox signed the vote");

    // A caller hands in a receipt of its own (another request's, its signature altered):
    // the answer is taken, and the webhook never repeats the receipt.
    let mut attached = signed.clone();
    attached.signature = format!("{}-attached-by-the-caller", signed.signature);
    let mut answer = Answer::ok(&second);
    answer.receipts = vec![attached.clone(), signed.clone()];
    site.inbox.answer_as(answer, ada).await.unwrap();
    let told = site.inbox.deliveries(&second).await.unwrap();
    let body = &told
        .iter()
        .find(|d| d.request.as_deref() == Some(second.as_str()))
        .expect("the answer is told")
        .body;
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["data"]["answer"]["ok"], true, "{body}");
    assert!(!body.contains(&attached.signature), "{body}");
    assert!(!body.contains(&signed.signature), "{body}");
    // The one receipt it carries is the inbox's, for this answer.
    let receipts: Vec<toolnexus::Receipt> =
        serde_json::from_value(json["data"]["answer"]["receipts"].clone()).unwrap();
    assert_eq!(receipts.len(), 1, "{body}");
    assert_eq!(receipts[0].statement.request, second);
    let public = site.inbox.receipt_public_key().unwrap();
    toolnexus_inbox::receipt::verify(&receipts[0], &public).unwrap();
}

#[tokio::test]
async fn the_list_filters_by_agent_kind_and_who_may_answer() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let refund = site.refund(40).await;
    let lamp = site.approval("lamp").await;
    let booking = site.booking().await;
    let shown = |page: &str, id: &str| page.contains(&format!("r/{id}\""));
    let (bob, ada) = (as_person("bob"), as_person("ada"));

    let (status, page) = get(&bob, &format!("{}?mine=1", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Signed in as"), "{page}");
    assert!(
        !shown(&page, &refund) && shown(&page, &lamp) && shown(&page, &booking),
        "{page}"
    );
    assert!(page.contains(r#"name="mine" value="1" checked"#), "{page}");

    let (_, page) = get(&ada, &format!("{}?mine=1", site.base)).await;
    assert!(shown(&page, &refund) && shown(&page, &lamp), "{page}");

    let (_, page) = get(&ada, &format!("{}?kind=input", site.base)).await;
    assert!(shown(&page, &booking) && !shown(&page, &lamp), "{page}");
    assert!(
        page.contains(r#"<option value="input" selected>"#),
        "{page}"
    );

    let (_, page) = get(&ada, &format!("{}?agent=default&kind=approval", site.base)).await;
    assert!(
        shown(&page, &refund) && shown(&page, &lamp) && !shown(&page, &booking),
        "{page}"
    );
    let (_, page) = get(&ada, &format!("{}?agent=elsewhere", site.base)).await;
    assert!(page.contains("Nothing waiting"), "{page}");
}

#[tokio::test]
async fn a_runs_page_shows_who_was_told_and_how_delivery_went() {
    // One webhook takes every notification; the other is down.
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_url = format!("http://{}/hook", up.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { StatusCode::NO_CONTENT }),
    );
    tokio::spawn(async move { axum::serve(up, app).await });
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down_url = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let inbox = Inbox::builder("sqlite::memory:")
        .webhook(toolnexus_inbox::Webhook::new(&up_url).name("team chat"))
        .webhook(
            toolnexus_inbox::Webhook::new(&down_url)
                .name("pager")
                .retries(1, Duration::from_secs(1)),
        )
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page).await;
    let cookie = session(&site).await;
    let id = site.approval("lamp").await;

    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(page.contains("<h2>Notifications</h2>"), "{page}");
    assert!(
        page.contains("run.parked</strong> to team chat: waiting to be sent"),
        "{page}"
    );
    assert_eq!(site.inbox.deliver_due().await.unwrap(), 1);
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    assert!(
        page.contains("run.parked</strong> to team chat: delivered"),
        "{page}"
    );
    assert!(
        page.contains("run.parked</strong> to pager: given up (1 attempt)"),
        "{page}"
    );
    assert!(page.contains("could not connect"), "{page}");
    assert!(
        page.contains("notification failed</strong>"),
        "the trail says so: {page}"
    );
}

#[tokio::test]
async fn an_unnamed_token_holder_is_recorded_as_such() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);
    let response = post(&site, &cookie, &id)
        .form(&[("_forgery", token.as_str()), ("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.answered_by.as_deref(), Some(web::TOKEN_HOLDER));
    let trail = site.inbox.audit(&id).await.unwrap();
    let answered = trail
        .iter()
        .find(|e| e.kind == AuditKind::Answered)
        .unwrap();
    assert_eq!(answered.actor.as_deref(), Some(web::TOKEN_HOLDER));
    let (_, list) = get(&cookie, &site.base).await;
    assert!(
        list.contains(&format!("approved by {}", web::TOKEN_HOLDER)),
        "{list}"
    );
}
