//! Keeping secrets out of what is shown: error-body excerpts with the key and header values
//! masked, and base URLs without their credentials.

/// Longest body excerpt put into an error, in characters.
const EXCERPT_CHARS: usize = 300;

/// The start of a body for an error message: one line, secrets masked, truncated.
pub(crate) fn excerpt(body: &[u8], secrets: &[String]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = redact(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        secrets,
    );
    if line.is_empty() {
        return "(empty body)".to_owned();
    }
    match line.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// `text` with every secret replaced by `[redacted]`.
pub(crate) fn redact(mut text: String, secrets: &[String]) -> String {
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), "[redacted]");
        }
    }
    text
}

/// A base URL fit for `Debug` output: credentials in its user-info and query (`?key=…`,
/// as some gateways take them) are dropped.
pub(crate) fn url_for_display(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => "<not a URL>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_masks_secrets_and_truncates() {
        let body = format!("bad key sk-secret-123\n\n{}", "x".repeat(1000));
        let text = excerpt(body.as_bytes(), &["sk-secret-123".to_owned()]);
        assert!(text.starts_with("bad key [redacted] x"), "{text}");
        assert!(!text.contains("sk-secret"));
        assert_eq!(text.chars().count(), EXCERPT_CHARS + 1);
        assert_eq!(excerpt(b"  ", &[]), "(empty body)");
    }

    #[test]
    fn credentials_in_a_url_are_not_displayed() {
        let shown = url_for_display("https://user:s3cret@gw.example.com/v1?key=sk-123");
        assert_eq!(shown, "https://gw.example.com/v1");
        assert_eq!(url_for_display("nonsense s3cret"), "<not a URL>");
    }
}
