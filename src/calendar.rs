//! The calendar: proleptic Gregorian dates in UTC, as unix seconds and day counts.
//!
//! One place for what dates need everywhere: day counts to and from civil dates, month
//! names, and the ISO 8601 form commits are printed in. Revisions read dates with it and
//! the lexical index reads the month and year of a record's timestamp with it. Nothing here
//! reads the clock.

/// Seconds in a day (unix time has no leap seconds).
pub const SECS_PER_DAY: i64 = 86_400;

/// English month names, January first, lower-case. A query word whose stem is one of
/// theirs names that month (lexical recall).
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Whether `y` is a leap year.
pub fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days in month `m` (1..=12) of year `y`; 0 for a month out of range.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (after Howard Hinnant's
/// `days_from_civil`; Euclidean division keeps it exact for any year). `m` is 1..=12,
/// `d` is 1..=31, `|y|` well below 2^40.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let mp = i64::from((m + 9) % 12); // March = 0
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01; the
/// inverse of [`days_from_civil`]. Total over all `i64 / 86400` inputs.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The civil year and month (1-12), in UTC, of unix seconds `t` (a record's timestamp).
pub fn year_month(t: f64) -> (i64, u32) {
    let (y, m, _) = civil_from_days((t / SECS_PER_DAY as f64).floor() as i64);
    (y, m)
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SS+00:00` (UTC), a form revision dates read
/// back. Years outside 0..=9999 get an explicit sign.
pub fn format_iso8601(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(SECS_PER_DAY);
    let sod = unix_seconds.rem_euclid(SECS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y > 9999 {
        format!("+{y}")
    } else {
        format!("-{:04}", y.unsigned_abs())
    };
    format!("{year}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}+00:00")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_conversion_matches_known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        for days in (-800_000..3_000_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn leap_years_and_month_lengths() {
        assert!(is_leap(2024) && is_leap(2000) && !is_leap(1900) && !is_leap(2023));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2023, 2), 28);
        assert_eq!(days_in_month(2023, 4), 30);
        assert_eq!(days_in_month(2023, 12), 31);
        assert_eq!(days_in_month(2023, 13), 0);
        let year: u32 = (1..=12).map(|m| days_in_month(2024, m)).sum();
        assert_eq!(year, 366);
    }

    #[test]
    fn civil_dates_of_timestamps() {
        assert_eq!(year_month(0.0), (1970, 1));
        // 1 June 2023 and 15 March 2024, 12:00 UTC.
        assert_eq!(year_month(1_685_620_800.0), (2023, 6));
        assert_eq!(year_month(1_710_504_000.0), (2024, 3));
        // 29 February 2024 23:59:59 and the second after it.
        assert_eq!(year_month(1_709_251_199.0), (2024, 2));
        assert_eq!(year_month(1_709_251_200.0), (2024, 3));
        assert_eq!(year_month(-1.0), (1969, 12));
    }

    #[test]
    fn iso_examples() {
        assert_eq!(format_iso8601(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(format_iso8601(1_800_000_000), "2027-01-15T08:00:00+00:00");
        assert_eq!(format_iso8601(1_709_251_199), "2024-02-29T23:59:59+00:00");
        assert_eq!(format_iso8601(253_402_300_799), "9999-12-31T23:59:59+00:00");
        assert_eq!(
            format_iso8601(253_402_300_800),
            "+10000-01-01T00:00:00+00:00"
        );
        assert_eq!(format_iso8601(-1), "1969-12-31T23:59:59+00:00");
        // Total: extreme inputs format without panicking.
        let _ = format_iso8601(i64::MIN);
        let _ = format_iso8601(i64::MAX);
    }
}
