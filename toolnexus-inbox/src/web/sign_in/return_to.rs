//! Where a sign-in lands once it is done: the page the person was on, as a path relative
//! to the router's root (`r/abc`, `delegate`, `?from=50`, empty for the list). It travels
//! in the sign-in link, which anyone can write, so it is read as hostile: only one of the
//! page's own routes, with a plain query, is taken; anything else lands on the list, and
//! never on another site (no scheme, no `//`, no `\`, no `..`, no control character).

/// The longest return path kept: a request page with a query is far shorter.
const MAX_LEN: usize = 1024;

/// `raw` when it is a place on the page to return to, else `None`.
pub(crate) fn checked(raw: &str) -> Option<&str> {
    if raw.len() > MAX_LEN {
        return None;
    }
    let (path, query) = match raw.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (raw, None),
    };
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    let route = match segments.as_slice() {
        [] | ["delegate"] => true,
        // `.` and `..` are the directory and its parent to a browser, not request ids.
        ["r", id] => !matches!(*id, "" | "." | "..") && id.bytes().all(path_byte),
        _ => false,
    };
    let query_ok = query.is_none_or(|q| q.bytes().all(|b| path_byte(b) || b"&=+/".contains(&b)));
    (route && query_ok).then_some(raw)
}

/// A byte a segment may hold as written: unreserved, percent-encoded, or a sub-delimiter
/// that means nothing to a browser resolving a relative reference.
fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~%!$'()*,;:@".contains(&b)
}

/// The return path of a request for `path` (the router's view, `/r/abc`) with `query`.
pub(crate) fn of(path: &str, query: Option<&str>) -> String {
    let path = path.trim_start_matches('/');
    match query {
        Some(query) if !query.is_empty() => format!("{path}?{query}"),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_own_routes_are_kept() {
        for good in [
            "",
            "r/abc",
            "r/call_1-x.y~z",
            "r/a%2Fb",
            "delegate",
            "?from=50",
            "?agent=shop&kind=approval&mine=1",
            "r/abc?x=1",
        ] {
            assert_eq!(checked(good), Some(good), "{good:?}");
        }
    }

    #[test]
    fn anything_that_could_leave_the_page_is_not() {
        for bad in [
            "https://evil.example/",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "/r/abc",
            "r/../../x",
            "r/..",
            "r/.",
            "r/abc/def",
            "r/",
            "javascript:alert(1)",
            "r/a b",
            "r/a\tb",
            "r/a\nb",
            "sign-in",
            "sign-in/callback?code=x",
            "style.css",
            "delegate/x",
            "?x=<script>",
            "?x=1#frag",
            "r/abc#x",
        ] {
            assert_eq!(checked(bad), None, "{bad:?}");
        }
        assert_eq!(checked(&format!("r/{}", "a".repeat(2000))), None);
    }

    #[test]
    fn a_request_path_becomes_its_return_path() {
        assert_eq!(of("/", None), "");
        assert_eq!(of("/r/abc", Some("x=1")), "r/abc?x=1");
        assert_eq!(of("/delegate", Some("")), "delegate");
    }
}
