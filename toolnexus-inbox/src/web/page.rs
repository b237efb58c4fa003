//! The page shell every response shares: the HTML layout and stylesheet, the security
//! headers, and the short message pages (signed out, unknown request, already answered…).

use axum::extract::Request;
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

use super::mount::Mount;
use crate::policy::people::Person;

/// No script, no frame, no plugin, no foreign style, and forms post only back here: even
/// markup that slipped past escaping could do nothing.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The stylesheet, served from the router itself so the policy can stay `style-src 'self'`.
pub(crate) const STYLESHEET: &str = include_str!("style.css");

/// Adds the security headers to every response, error pages included.
pub(crate) async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        // Request ids must not leak to a sign-in page through Referer. Not `no-referrer`:
        // under it a browser sends `Origin: null` with the page's own form posts, which
        // the same-origin check must then refuse.
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The stylesheet response.
pub(crate) async fn stylesheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        STYLESHEET,
    )
        .into_response()
}

/// A whole page. `mount` says where the page is, so every link is relative to it and the
/// router can be mounted under any prefix. `refresh` reloads the page after that many
/// seconds, for outcomes still to come; `viewer` is who is signed in, shown at the top.
pub(crate) fn layout(
    mount: &Mount,
    title: &str,
    refresh: Option<u32>,
    viewer: Option<&Person>,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(seconds) = refresh {
                    meta http-equiv="refresh" content=(seconds);
                }
                title { (title) " · inbox" }
                link rel="stylesheet" href=(mount.to("style.css"));
            }
            body {
                header.top {
                    a.brand href=(mount.list()) { "toolnexus inbox" }
                    @if let Some(viewer) = viewer {
                        span.viewer { "Signed in as " strong.who { (viewer.display_name()) } }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// A short page that says what happened and links back to the list.
pub(crate) fn message(status: StatusCode, mount: &Mount, title: &str, text: &str) -> Response {
    let body = html! {
        section.notice {
            h1 { (title) }
            p { (text) }
            p { a href=(mount.list()) { "Back to the inbox" } }
        }
    };
    (status, layout(mount, title, None, None, body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_escapes_its_title_and_links_relatively() {
        let mount = Mount::at("/r/abc");
        let page = layout(&mount, "<script>x</script>", Some(2), None, html! {}).into_string();
        assert!(
            page.contains("&lt;script&gt;x&lt;/script&gt; · inbox"),
            "{page}"
        );
        assert!(page.contains(r#"href="../style.css""#), "{page}");
        assert!(
            page.contains(r#"<meta http-equiv="refresh" content="2">"#),
            "{page}"
        );
    }
}
