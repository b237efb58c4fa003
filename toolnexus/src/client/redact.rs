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

/// `text` with every standalone occurrence of a secret replaced by `[redacted]`.
///
/// A key or header value shows up in a body as a token of its own (quoted, after
/// `Bearer `, between separators); the same letters inside a longer word are not the
/// secret, and masking them would garble the text (`k` in `MockLlm`).
pub(crate) fn redact(text: String, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text, |text, secret| mask_standalone(&text, secret))
}

/// Whether `text` holds `secret` as a standalone token.
pub(crate) fn reveals(text: &str, secret: &str) -> bool {
    standalone(text, secret).next().is_some()
}

fn mask_standalone(text: &str, secret: &str) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut kept = 0;
    for at in standalone(text, secret) {
        masked.push_str(&text[kept..at]);
        masked.push_str("[redacted]");
        kept = at + secret.len();
    }
    masked.push_str(&text[kept..]);
    masked
}

/// Where `secret` starts in `text` with no token character right before or after it.
fn standalone<'t>(text: &'t str, secret: &'t str) -> impl Iterator<Item = usize> + 't {
    let token = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let matches = if secret.is_empty() {
        None
    } else {
        Some(text.match_indices(secret))
    };
    matches.into_iter().flatten().filter_map(move |(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + secret.len()..].chars().next();
        let bounded = !before.is_some_and(token) && !after.is_some_and(token);
        bounded.then_some(at)
    })
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
    fn a_short_key_is_masked_only_where_it_stands_alone() {
        let secrets = ["k".to_owned()];
        let text = redact("MockLlm: key \"k\" (Bearer k) k".to_owned(), &secrets);
        assert_eq!(
            text,
            "MockLlm: key \"[redacted]\" (Bearer [redacted]) [redacted]"
        );
        assert!(reveals("key=k;", "k") && !reveals("kk", "k") && !reveals("x", ""));
    }

    #[test]
    fn credentials_in_a_url_are_not_displayed() {
        let shown = url_for_display("https://user:s3cret@gw.example.com/v1?key=sk-123");
        assert_eq!(shown, "https://gw.example.com/v1");
        assert_eq!(url_for_display("nonsense s3cret"), "<not a URL>");
    }
}
