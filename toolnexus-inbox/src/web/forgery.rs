//! Refusing forged answers: a POST must come from this inbox's own pages. Two independent
//! checks, either of which stops a cross-site form: the browser's own statement of where
//! the request comes from (`Sec-Fetch-Site`, `Origin`), and the anti-forgery token each
//! answer form carries, bound to the request it answers (see `secret`).

use axum::http::header::{self, HeaderMap};

/// The form field carrying the anti-forgery token.
pub(crate) const TOKEN_FIELD: &str = "_forgery";

/// Whether the headers show a request from this same origin, or from no browser page at
/// all (a script or curl, which has no ambient cookie to abuse and must still pass the
/// token checks).
pub(crate) fn same_origin(headers: &HeaderMap) -> bool {
    // A browser sends each of these once; several are a forgery attempt, never ours.
    if headers.get_all("sec-fetch-site").iter().count() > 1
        || headers.get_all(header::ORIGIN).iter().count() > 1
    {
        return false;
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        // `none` is a navigation the person started themselves (address bar, bookmark).
        if !matches!(site.to_str(), Ok("same-origin" | "none")) {
            return false;
        }
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(host)) = (
        origin.to_str(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
    ) else {
        return false;
    };
    // An opaque origin is the string `null`: never ours.
    match origin.split_once("://") {
        Some(("http" | "https", authority)) => authority.eq_ignore_ascii_case(host),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn own_origin_and_headerless_clients_pass() {
        assert!(same_origin(&headers(&[])));
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin"),
        ])));
    }

    #[test]
    fn other_origins_are_refused() {
        for (origin, site) in [
            ("http://evil.example", "cross-site"),
            ("http://127.0.0.1:9999", "same-site"),
            ("null", "cross-site"),
        ] {
            let mut map = headers(&[("host", "127.0.0.1:8080")]);
            map.insert("origin", HeaderValue::from_static(origin));
            assert!(!same_origin(&map), "{origin}");
            let mut only_site = headers(&[("host", "127.0.0.1:8080")]);
            only_site.insert("sec-fetch-site", HeaderValue::from_static(site));
            assert!(!same_origin(&only_site), "{site}");
        }
        assert!(!same_origin(&headers(&[(
            "origin",
            "http://127.0.0.1:8080"
        )])));
    }
}
