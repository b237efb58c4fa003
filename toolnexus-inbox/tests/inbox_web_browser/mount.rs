//! The page mounted under a prefix of a host's app, with `nest` and with `nest_service`,
//! clicked through.

use super::*;

#[tokio::test]
async fn the_page_nested_under_a_prefix_is_clicked_through() {
    clicked_through_under(Mounting::Nest).await;
}

#[tokio::test]
async fn the_page_as_a_nested_service_under_a_prefix_is_clicked_through() {
    clicked_through_under(Mounting::NestService).await;
}
