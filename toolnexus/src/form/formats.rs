//! The string formats a form may ask for (`email`, `uri`, `date`, `date-time`) and how a
//! value is held against each. The checks catch typos a person makes in a form; they are
//! not full RFC parsers (an address is not proven to exist).

/// Whether a form renderer understands `format`.
pub(super) fn is_known(format: &str) -> bool {
    matches!(format, "email" | "uri" | "date" | "date-time")
}

/// Why `text` does not have `format`, if it does not; an unknown format holds anything.
pub(super) fn check(format: &str, text: &str) -> Result<(), &'static str> {
    let (fits, reason) = match format {
        "email" => (is_email(text), "must be an email address"),
        "uri" => (is_uri(text), "must be a URI such as https://…"),
        "date" => (is_date(text), "must be a date (YYYY-MM-DD)"),
        "date-time" => (is_date_time(text), "must be a date and time (RFC 3339)"),
        _ => (true, ""),
    };
    if fits {
        Ok(())
    } else {
        Err(reason)
    }
}

fn is_email(text: &str) -> bool {
    match text.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

fn is_uri(text: &str) -> bool {
    match text.split_once(':') {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// `YYYY-MM-DD`, a day that exists (leap years included).
fn is_date(text: &str) -> bool {
    is_date_bytes(text.as_bytes())
}

fn is_date_bytes(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10]))
    else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339: `YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)`.
fn is_date_time(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 20 || !is_date_bytes(&b[..10]) || !matches!(b[10], b'T' | b't') {
        return false;
    }
    let time = &b[11..];
    if time[2] != b':' || time[5] != b':' {
        return false;
    }
    let in_range = |part: &[u8], max: u32| digits(part).is_some_and(|n| n <= max);
    // 60 seconds: a leap second.
    if !(in_range(&time[0..2], 23) && in_range(&time[3..5], 59) && in_range(&time[6..8], 60)) {
        return false;
    }
    let mut rest = &time[8..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            in_range(&[*h1, *h2], 23) && in_range(&[*m1, *m2], 59)
        }
        _ => false,
    }
}

fn digits(part: &[u8]) -> Option<u32> {
    part.iter().try_fold(0u32, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_must_exist() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2026-13-01"));
        assert!(!is_date("31/01/2026"));
        assert!(!is_date("2026-1-01"));
    }

    #[test]
    fn date_times_follow_rfc_3339() {
        assert!(is_date_time("2026-01-31T10:00:00Z"));
        assert!(is_date_time("2026-01-31t10:00:00.123+05:30"));
        assert!(!is_date_time("2026-01-31T24:00:00Z"));
        assert!(!is_date_time("2026-01-31T10:00:00"));
        assert!(!is_date_time("2026-01-31T10:00:00.Z"));
        assert!(!is_date_time("tomorrow"));
        assert!(!is_date_time("2026-01-31T10:00:00+5:30"));
    }

    #[test]
    fn emails_and_uris() {
        assert!(check("email", "a@b.example").is_ok());
        assert!(check("email", "nobody").is_err());
        assert!(check("uri", "https://x.example/a").is_ok());
        assert!(check("uri", "no uri").is_err());
        assert!(check("color", "anything").is_ok());
    }
}
