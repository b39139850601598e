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

/// The milliseconds since the epoch of an [`iso`] time (`YYYY-MM-DDTHH:MM:SS.mmmZ`), or `None`
/// for any other shape.
pub fn parse_iso(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[23] != b'Z' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' || b[19] != b'.' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let digits = text.get(from..to)?;
        digits
            .bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second, millis) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 59 {
        return None;
    }
    // Howard Hinnant's days_from_civil, the inverse of `Utc::from_ms`.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(secs * 1000 + millis).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_conversion_matches_known_instants() {
        assert_eq!(Utc::from_ms(0).iso(), "1970-01-01T00:00:00.000Z");
        // 2026-11-29T22:47:05.635Z, the instant a recorded Pi session file is named after.
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
        for ms in [0, 951_782_400_000, 1_795_992_425_635, 4_102_444_799_999] {
            assert_eq!(parse_iso(&iso(ms)), Some(ms));
        }
        for bad in [
            "t",
            "2026-11-29T22:47:05Z",
            "2026-13-29T22:47:05.635Z",
            "2026-11-29 22:47:05.635Z",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
