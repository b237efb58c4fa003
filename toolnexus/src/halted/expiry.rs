//! A request's deadline (`expiresAt`), read one way by every host that keeps one.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Request;

/// A request whose `expiresAt` is not an RFC 3339 date-time. A deadline that cannot be
/// read is refused, never taken for no deadline: the request was meant to expire, and
/// read as having no deadline it would wait forever.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExpiryError {
    /// The id of the request.
    pub request: String,
    /// Its `expiresAt`, as written.
    pub value: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for ExpiryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "request `{}` expires at `{}`, which is not an RFC 3339 date-time such as \
             `2026-07-28T17:00:00Z`: {}",
            self.request, self.value, self.reason
        )
    }
}

impl std::error::Error for ExpiryError {}

impl Request {
    /// When this request expires: `None` when it has no `expiresAt`; the time its
    /// `expiresAt` names when that is an RFC 3339 date-time (`2026-07-28T17:00:00Z`,
    /// `2026-07-28T19:00:00.250+02:00`: a date, `T`, a time with seconds and any fraction,
    /// then `Z` or an offset); [`ExpiryError`] for anything else. Every host that keeps a
    /// request's deadline reads it here, so a date one host refuses is refused by all.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use toolnexus::Request;
    ///
    /// let due = Request::new("approval", "Pay?").with_expires_at("1970-01-01T01:00:01+01:00");
    /// assert_eq!(due.expiry(), Ok(Some(UNIX_EPOCH + Duration::from_secs(1))));
    /// assert_eq!(Request::new("approval", "Pay?").expiry(), Ok(None));
    ///
    /// let vague = Request::new("approval", "Pay?").with_id("r1").with_expires_at("tomorrow");
    /// let refused = vague.expiry().unwrap_err();
    /// assert_eq!((refused.request.as_str(), refused.value.as_str()), ("r1", "tomorrow"));
    /// ```
    pub fn expiry(&self) -> Result<Option<SystemTime>, ExpiryError> {
        let Some(text) = &self.expires_at else {
            return Ok(None);
        };
        rfc3339(text).map(Some).map_err(|reason| ExpiryError {
            request: self.id.clone(),
            value: text.clone(),
            reason,
        })
    }
}

/// An RFC 3339 date-time (section 5.6, `T` and `Z` in either case) as a time.
fn rfc3339(text: &str) -> Result<SystemTime, &'static str> {
    let b = text.as_bytes();
    let num = |at: usize, len: usize| -> Option<i64> {
        let digits = b.get(at..at + len)?;
        digits.iter().try_fold(0i64, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let at = |i: usize, c: u8| b.get(i).is_some_and(|x| x.eq_ignore_ascii_case(&c));
    const SHAPE: &str = "it is not shaped YYYY-MM-DDTHH:MM:SS, then an optional fraction, \
                         then Z or an offset";
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 2),
        num(8, 2),
        num(11, 2),
        num(14, 2),
        num(17, 2),
    ) else {
        return Err(SHAPE);
    };
    if !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':')) {
        return Err(SHAPE);
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            // Digits past the ninth are below a nanosecond.
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return Err("its fraction of a second has no digits");
        }
        for _ in (i - start)..9 {
            nanos *= 10;
        }
    }
    let offset = if at(i, b'Z') && i + 1 == b.len() {
        0
    } else {
        let sign = match b.get(i) {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(SHAPE),
        };
        let (Some(h), Some(m)) = (num(i + 1, 2), num(i + 4, 2)) else {
            return Err(SHAPE);
        };
        if !at(i + 3, b':') || i + 6 != b.len() {
            return Err(SHAPE);
        }
        if h > 23 || m > 59 {
            return Err("its offset is not a time of day");
        }
        sign * (h * 3600 + m * 60)
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return Err("its date is not a day of the calendar");
    }
    // A leap second (`:60`) is the last instant of the minute before it.
    if hour > 23 || minute > 59 || second > 60 {
        return Err("its time is not a time of day");
    }
    let (second, nanos) = match second {
        60 => (59, 999_999_999),
        s => (s, nanos),
    };
    let secs =
        days_from_epoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let time = match u64::try_from(secs) {
        Ok(after) => UNIX_EPOCH.checked_add(Duration::new(after, nanos)),
        Err(_) => UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))
            .and_then(|t| t.checked_add(Duration::from_nanos(u64::from(nanos)))),
    };
    time.ok_or("it is beyond the times this host can hold")
}

fn days_in(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_epoch(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let of_cycle = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_cycle - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64, nanos: u32) -> SystemTime {
        match u64::try_from(secs) {
            Ok(s) => UNIX_EPOCH + Duration::new(s, nanos),
            Err(_) => {
                UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
                    + Duration::from_nanos(nanos.into())
            }
        }
    }

    #[test]
    fn reads_the_forms_rfc_3339_allows() {
        for (text, secs, nanos) in [
            ("1970-01-01T00:00:00Z", 0, 0),
            ("1970-01-01t00:00:00z", 0, 0),
            ("2026-07-28T17:00:00Z", 1_785_258_000, 0),
            ("2026-07-28T19:00:00+02:00", 1_785_258_000, 0),
            ("2026-07-28T12:30:00-04:30", 1_785_258_000, 0),
            ("2026-07-28T17:00:00.25Z", 1_785_258_000, 250_000_000),
            (
                "2026-07-28T17:00:00.1234567891Z",
                1_785_258_000,
                123_456_789,
            ),
            ("2024-02-29T00:00:00Z", 1_709_164_800, 0),
            ("2016-12-31T23:59:60Z", 1_483_228_799, 999_999_999),
            ("1969-12-31T23:59:59.5Z", -1, 500_000_000),
        ] {
            assert_eq!(rfc3339(text), Ok(at(secs, nanos)), "{text}");
        }
    }

    #[test]
    fn refuses_what_is_no_date_time() {
        for text in [
            "",
            "tomorrow",
            "2026-07-28",
            "2026-07-28 17:00:00Z",
            "2026-07-28T17:00Z",
            "2026-07-28T17:00:00",
            "2026-07-28T17:00:00.Z",
            "2026-07-28T17:00:00+0200",
            "2026-07-28T17:00:00+02:00 ",
            "2026-07-28T17:00:00ZZ",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-07-28T24:00:00Z",
            "2026-07-28T17:60:00Z",
            "2026-07-28T17:00:61Z",
            "2026-07-28T17:00:00+24:00",
            "+2026-07-28T17:00:00Z",
            "２026-07-28T17:00:00Z",
        ] {
            assert!(rfc3339(text).is_err(), "{text:?}");
        }
    }
}
