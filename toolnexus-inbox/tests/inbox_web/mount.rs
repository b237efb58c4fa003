//! The page mounted under a prefix, nested or as a service, and at the root: every link
//! and redirect stays under where it is served.

use super::*;

#[tokio::test]
async fn the_page_works_nested_under_a_prefix() {
    let site = Site::mounted(Mounting::Nest).await;
    list_open_and_answer_under_the_mount(&site).await;
}

#[tokio::test]
async fn the_page_works_as_a_nested_service_under_a_prefix() {
    let site = Site::mounted(Mounting::NestService).await;
    list_open_and_answer_under_the_mount(&site).await;

    // `nest_service` also routes the prefix with its slash: the sign-in keeps it, and the
    // list's links from there lead to the same pages.
    let id = site.approval("desk").await;
    let link = format!("{}?token={}", site.root, site.token);
    let response = http().get(&link).send().await.expect("the page answers");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&link, &response), site.root);
    let cookie = set_cookie(response.headers());
    let cookie = cookie.split(';').next().expect("a cookie pair");
    let (status, list) = get(cookie, &site.root).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_links_stay_under(&site, &site.root, &list);
    let card = link_to(&list, "Buy desk?").expect("a card for the request");
    assert_eq!(resolve(&site.root, &card), site.request_url(&id));
}

#[tokio::test]
async fn the_page_works_nested_under_a_prefix_written_with_its_slash() {
    let site = Site::mounted(Mounting::NestSlash).await;
    list_open_and_answer_under_the_mount(&site).await;
}

#[tokio::test]
async fn at_the_root_the_links_and_redirects_are_the_same_as_ever() {
    let site = Site::mounted(Mounting::Root).await;
    list_open_and_answer_under_the_mount(&site).await;
}
