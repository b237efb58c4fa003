//! The list of waiting requests a page at a time, and a database gone away shown as a page.

use super::*;

#[tokio::test]
async fn a_long_queue_is_listed_a_page_at_a_time() {
    let inbox = Inbox::open("sqlite::memory:").await.expect("an inbox");
    let site = Site::serve(inbox, |page| page.page_size(2)).await;
    let mut ids = Vec::new();
    for item in ["anvil", "bell", "chisel", "drill", "easel"] {
        ids.push(site.approval(item).await);
    }
    site.inbox
        .answer(Answer::ok(&ids[0]))
        .await
        .expect("answered");
    site.resume_all().await;
    let cookie = session(&site).await;

    let (status, first) = get(&cookie, &site.base).await;
    assert_eq!(status, StatusCode::OK);
    assert!(first.contains("4 requests waiting"), "{first}");
    assert!(first.contains("Showing 1–2 of 4"), "{first}");
    assert!(first.contains("Buy bell?") && first.contains("Buy chisel?"));
    assert!(!first.contains("Buy drill?") && !first.contains("Buy easel?"));
    // The decided run shows below the first page only.
    assert!(first.contains("Recently answered") && first.contains("Buy anvil?"));
    assert_eq!(link_to(&first, "First page"), None);
    let more = link_to(&first, "More: 3–4 of 4").unwrap_or_else(|| panic!("{first}"));

    let (status, second) = get(&cookie, &format!("{}{more}", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(second.contains("4 requests waiting"), "{second}");
    assert!(second.contains("Showing 3–4 of 4"), "{second}");
    assert!(second.contains("Buy drill?") && second.contains("Buy easel?"));
    assert!(!second.contains("Buy bell?") && !second.contains("Recently answered"));
    assert_eq!(link_to(&second, "More"), None, "{second}");
    assert_eq!(link_to(&second, "First page").as_deref(), Some("./"));

    let (status, beyond) = get(&cookie, &format!("{}?from=40", site.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(beyond.contains("No more waiting requests."), "{beyond}");
    assert!(link_to(&beyond, "First page").is_some(), "{beyond}");

    let (status, nonsense) = get(&cookie, &format!("{}?from=ten", site.base)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(nonsense.contains("No such page"), "{nonsense}");
}

#[tokio::test]
async fn a_short_queue_has_no_paging() {
    let site = Site::start().await;
    site.approval("anvil").await;
    let cookie = session(&site).await;
    let (_, list) = get(&cookie, &site.base).await;
    assert!(list.contains("1 request waiting"), "{list}");
    assert!(
        !list.contains("Showing") && link_to(&list, "More").is_none(),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_gone_away_is_a_503_page_not_a_crash() {
    let name = format!(
        "toolnexus_inbox_web_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let url = pg::create_database(&name).await;
    let inbox = Inbox::builder(url)
        .connect_timeout(Duration::from_secs(1))
        .open()
        .await
        .expect("the inbox opens");
    let site = Site::serve(inbox, |page| page).await;
    let id = site.approval("anvil").await;
    let cookie = session(&site).await;
    let (_, page) = get(&cookie, &site.request_url(&id)).await;
    let token = forgery_token(&page);

    pg::drop_database(&name).await;

    for url in [site.base.clone(), site.request_url(&id)] {
        let response = fetch(&cookie, &url).await;
        assert_secure_headers(response.headers());
        let (status, text) = body(response).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{url}: {text}");
        assert!(text.contains("cannot be reached right now"), "{text}");
    }
    let (status, text) = post_form(
        &site,
        &cookie,
        &id,
        &[("_forgery", &token), ("_action", "approve")],
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
}
