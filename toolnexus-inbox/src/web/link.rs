//! Which URLs the page links to: a request's `url` is model-influenced, so only a plain
//! `http:` or `https:` address ever becomes a link; anything else (`javascript:`, `data:`,
//! a scheme hidden behind spaces or control characters) is shown as inert text.

/// `url` when it is safe to put in an `href`.
pub(crate) fn web_link(url: &str) -> Option<&str> {
    // Browsers strip leading spaces and drop tabs and newlines anywhere in a URL before
    // reading its scheme, so any such character makes the scheme check unreliable.
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &url[8..]
    } else if lower.starts_with("http://") {
        &url[7..]
    } else {
        return None;
    };
    // A host must follow: `http:///x` or `http://` alone is not an address.
    match rest.chars().next() {
        Some('/' | '\\' | '?' | '#') | None => None,
        Some(_) => Some(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_addresses_are_linked() {
        for url in [
            "https://login.example/auth?x=1",
            "http://127.0.0.1:9/cb",
            "HTTPS://A.B",
        ] {
            assert_eq!(web_link(url), Some(url));
        }
    }

    #[test]
    fn everything_else_is_not() {
        for url in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "http:///evil",
            "https://",
            "https:\\\\evil",
            "//evil.example",
            "ftp://files.example",
            "https://ok.example/\u{0}",
            "",
        ] {
            assert_eq!(web_link(url), None, "{url:?}");
        }
    }
}
