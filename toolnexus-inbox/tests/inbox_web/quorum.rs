//! A quorum on the page: each person counted once, and a delegate answering for the giver.

use super::*;

#[tokio::test]
async fn a_quorum_counts_each_person_once_and_a_delegate_answers_for_the_giver() {
    let inbox = Inbox::open("sqlite::memory:").await.unwrap();
    let site = Site::serve(inbox, |page| page.identity(page::people)).await;
    let id = site.payment(900).await;
    let (ada, bob, carol) = (as_person("ada"), as_person("bob"), as_person("carol"));

    let response = answer(&site, &ada, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(
        page.contains("1 of 2 approvals (ada@example.com)"),
        "{page}"
    );
    assert!(
        page.contains("You count toward this request already"),
        "{page}"
    );
    assert!(
        !page.contains("_forgery"),
        "no second form for Ada:\n{page}"
    );
    let (_, page) = get(&bob, &site.request_url(&id)).await;
    assert!(page.contains("you see it read-only"), "{page}");

    // Carol hands her rights to Bob on her delegation page.
    let delegate_url = format!("{}delegate", site.root);
    let (status, form) = get(&carol, &delegate_url).await;
    assert_eq!(status, StatusCode::OK, "{form}");
    let token = forgery_token(&form);
    // A week from today: within the 30 days a delegation may last.
    let day = time::OffsetDateTime::now_utc().date() + time::Duration::days(7);
    let until = day.to_string();
    let until = until.as_str();
    let ends = format!("until {}T00:00:00", day.next_day().unwrap());
    let host = site
        .root
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let given = http()
        .post(&delegate_url)
        .header(header::COOKIE, &carol)
        .header(header::ORIGIN, format!("http://{host}"))
        .form(&[
            ("_forgery", token.as_str()),
            ("to", "bob@example.com"),
            ("until", until),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(given.status(), StatusCode::SEE_OTHER);
    let (_, held) = get(&bob, &delegate_url).await;
    assert!(
        held.contains(&format!("Carol (carol@example.com) {ends}")),
        "{held}"
    );
    // A form with another person's token changes nothing.
    let forged = http()
        .post(&delegate_url)
        .header(header::COOKIE, &bob)
        .header(header::ORIGIN, format!("http://{host}"))
        .form(&[
            ("_forgery", token.as_str()),
            ("to", "dave@example.com"),
            ("until", until),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);

    // Bob now answers for Carol: the second approval, recorded as his for her.
    let response = answer(&site, &bob, &id, &[("_action", "approve")]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let parked = site.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.state, ParkedState::Answered);
    assert_eq!(
        parked.answered_by.as_deref(),
        Some("bob@example.com for carol@example.com")
    );
    let (_, page) = get(&ada, &site.request_url(&id)).await;
    assert!(
        page.contains("by bob@example.com for carol@example.com"),
        "{page}"
    );
}
