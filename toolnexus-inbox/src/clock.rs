//! Times as the database keeps them: milliseconds since the Unix epoch, from the inbox's
//! clock (this host's, unless a test or a simulation sets its own). Hosts that share a
//! database are expected to keep their clocks in sync (NTP); leases are minutes long, so
//! small skews do not matter.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::format_description::well_known::Rfc3339;

/// Where an inbox reads the time: every deadline it keeps (leases, expiry, escalation,
/// retries) and every time it records come from here.
#[derive(Clone)]
pub(crate) struct Clock(Option<Arc<dyn Fn() -> SystemTime + Send + Sync>>);

impl Clock {
    pub(crate) fn system() -> Clock {
        Clock(None)
    }

    pub(crate) fn custom(now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Clock {
        Clock(Some(Arc::new(now)))
    }

    /// Now, in milliseconds since the epoch.
    pub(crate) fn now_ms(&self) -> i64 {
        match &self.0 {
            Some(now) => to_ms(now()),
            None => to_ms(SystemTime::now()),
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "custom" } else { "system" })
    }
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

/// Milliseconds since the epoch as an RFC 3339 timestamp in UTC.
pub(crate) fn rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// Milliseconds since the epoch as a receipt writes a time: RFC 3339 in UTC with exactly
/// three decimals (`2026-01-02T03:04:05.678Z`).
pub(crate) fn rfc3339_millis(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .map(crate::receipt::utc_millis)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_round_trip() {
        assert_eq!(to_ms(from_ms(-2500)), -2500);
        assert_eq!(rfc3339(1500), "1970-01-01T00:00:01.5Z");
    }
}
