//! Times as the database keeps them: milliseconds since the Unix epoch, from this host's
//! clock. Hosts that share a database are expected to keep their clocks in sync (NTP);
//! leases are minutes long, so small skews do not matter.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::format_description::well_known::Rfc3339;

/// Now, in milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

pub(crate) fn to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

pub(crate) fn from_ms(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

pub(crate) fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// An RFC 3339 timestamp (a request's `expiresAt`) in milliseconds since the epoch.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(text, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_reads_to_milliseconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_rfc3339("tomorrow"), None);
        assert_eq!(to_ms(from_ms(-2500)), -2500);
    }
}
