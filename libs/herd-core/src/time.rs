//! Wall-clock helpers: milliseconds since the epoch, the unit of every timestamp herd writes, and
//! their UTC calendar form for the few places that print a date.

use std::time::{SystemTime, UNIX_EPOCH};

/// Returns the current time in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A UTC calendar time split into its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

impl Utc {
    /// Converts milliseconds since the epoch (days-from-civil inverted, proleptic Gregorian).
    pub fn from_ms(ms: u64) -> Utc {
        let secs = ms / 1000;
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            millis: (ms % 1000) as u32,
        }
    }

    /// `YYYY-MM-DD`.
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `YYYY-MM-DDTHH-MM-SS`: the stamp of artifact file names.
    pub fn file_seconds(&self) -> String {
        format!(
            "{}T{:02}-{:02}-{:02}",
            self.date(),
            self.hour,
            self.minute,
            self.second
        )
    }

    /// `YYYY-MM-DDTHH-MM-SS-mmmZ`: the stamp of session file names.
    pub fn file_millis(&self) -> String {
        format!("{}-{:03}Z", self.file_seconds(), self.millis)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`: ISO 8601, as JavaScript's `toISOString`.
    pub fn iso(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }
}

/// The ISO 8601 time of `ms`.
pub fn iso(ms: u64) -> String {
    Utc::from_ms(ms).iso()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_conversion_matches_known_instants() {
        assert_eq!(Utc::from_ms(0).iso(), "1970-01-01T00:00:00.000Z");
        // 2026-11-29T22:47:05.635Z, the instant of the session in pi.md.
        let t = Utc::from_ms(1_795_992_425_635);
        assert_eq!(t.iso(), "2026-11-29T22:47:05.635Z");
        assert_eq!(t.file_millis(), "2026-11-29T22-47-05-635Z");
        assert_eq!(t.file_seconds(), "2026-11-29T22-47-05");
        assert_eq!(t.date(), "2026-11-29");
        // A leap day.
        assert_eq!(
            Utc::from_ms(951_782_400_000).iso(),
            "2000-02-29T00:00:00.000Z"
        );
    }
}
