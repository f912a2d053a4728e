//! Dates as revisions read them (`main@{yesterday}`, `--since 2026-01-01`): the rules are
//! in the documentation of [the revision module](super); the calendar arithmetic is
//! [`crate::calendar`]'s.

use super::{parse_decimal, RevParseError};
use crate::calendar::{days_from_civil, days_in_month, SECS_PER_DAY};

/// Parses a date (see [the revision module](super) for the accepted forms) to unix seconds
/// (UTC).
///
/// A bare `YYYY-MM-DD` means 23:59:59 UTC of that day; `today` means 00:00:00 UTC of
/// now's day; month = 30 days and year = 365 days in relative dates. Results before
/// 1970-01-01T00:00:00Z are rejected.
pub fn parse_date(text: &str, now: i64) -> Result<i64, RevParseError> {
    let t = text.trim();
    let bad = |why: &str| RevParseError::BadDate {
        input: text.to_owned(),
        why: why.to_owned(),
    };
    let too_large = || RevParseError::NumberTooLarge {
        input: text.to_owned(),
    };
    if t.is_empty() {
        return Err(bad("empty date"));
    }
    let secs = if t.eq_ignore_ascii_case("now") {
        now
    } else if t.eq_ignore_ascii_case("today") {
        now.checked_sub(now.rem_euclid(SECS_PER_DAY))
            .ok_or_else(too_large)?
    } else if t.eq_ignore_ascii_case("yesterday") {
        now.checked_sub(SECS_PER_DAY).ok_or_else(too_large)?
    } else if let Some(digits) = t.strip_prefix('@') {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("expected `@` followed by decimal unix seconds"));
        }
        parse_decimal(digits.as_bytes())
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(too_large)?
    } else if t.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && t.as_bytes().get(4) == Some(&b'-')
    {
        parse_absolute(t).map_err(|why| RevParseError::BadDate {
            input: text.to_owned(),
            why,
        })?
    } else {
        parse_relative(text, t, now)?
    };
    if secs < 0 {
        return Err(bad("before the unix epoch (1970-01-01T00:00:00Z)"));
    }
    Ok(secs)
}

/// Reads exactly `n` ASCII digits at `b[at..]`.
fn digits_at(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(n)?)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter()
        .try_fold(0u32, |acc, &d| Some(acc * 10 + u32::from(d - b'0')))
}

/// Parses `YYYY-MM-DD[(T| )HH:MM[:SS][Z|(+|-)HH:MM]]`.
fn parse_absolute(t: &str) -> Result<i64, String> {
    let b = t.as_bytes();
    let shape = "expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM|-HH:MM], @UNIX, \
                 now, today, yesterday or `N units ago`";
    let (Some(y), Some(b'-'), Some(m), Some(b'-'), Some(d)) = (
        digits_at(b, 0, 4),
        b.get(4),
        digits_at(b, 5, 2),
        b.get(7),
        digits_at(b, 8, 2),
    ) else {
        return Err(shape.to_owned());
    };
    let y = i64::from(y);
    if !(1..=12).contains(&m) {
        return Err(format!("month {m} is out of range 1-12"));
    }
    if d == 0 || d > days_in_month(y, m) {
        return Err(format!("day {d} does not exist in {y:04}-{m:02}"));
    }
    let days = days_from_civil(y, m, d);
    if b.len() == 10 {
        return Ok(days * SECS_PER_DAY + SECS_PER_DAY - 1);
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return Err(shape.to_owned());
    }
    let (Some(hh), Some(b':'), Some(mm)) = (digits_at(b, 11, 2), b.get(13), digits_at(b, 14, 2))
    else {
        return Err(shape.to_owned());
    };
    let mut i = 16;
    let mut ss = 0;
    if b.get(i) == Some(&b':') {
        ss = digits_at(b, i + 1, 2).ok_or_else(|| shape.to_owned())?;
        i += 3;
    }
    if hh > 23 || mm > 59 || ss > 59 {
        return Err(format!("time {hh:02}:{mm:02}:{ss:02} is out of range"));
    }
    let offset = match &b[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] => {
            let (Some(oh), Some(b':'), Some(om), 6) = (
                digits_at(b, i + 1, 2),
                b.get(i + 3),
                digits_at(b, i + 4, 2),
                b.len() - i,
            ) else {
                return Err("expected a UTC offset like +HH:MM or -HH:MM".to_owned());
            };
            if oh > 23 || om > 59 {
                return Err(format!("UTC offset {oh:02}:{om:02} is out of range"));
            }
            let o = i64::from(oh * 3600 + om * 60);
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return Err(shape.to_owned()),
    };
    Ok(days * SECS_PER_DAY + i64::from(hh * 3600 + mm * 60 + ss) - offset)
}

/// Parses `N unit(s) ago` / `N.unit(s).ago` relative to `now`.
fn parse_relative(input: &str, t: &str, now: i64) -> Result<i64, RevParseError> {
    let bad = |why: &str| RevParseError::BadDate {
        input: input.to_owned(),
        why: why.to_owned(),
    };
    let too_large = || RevParseError::NumberTooLarge {
        input: input.to_owned(),
    };
    let words: Vec<&str> = t
        .split(|c: char| c == '.' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let [count, unit, ago] = words[..] else {
        return Err(bad(
            "expected YYYY-MM-DD[THH:MM[:SS]], @UNIX, now, today, yesterday or `N units ago`",
        ));
    };
    if !ago.eq_ignore_ascii_case("ago") {
        return Err(bad("relative dates must end in `ago`"));
    }
    if !count.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("expected a decimal count before the unit"));
    }
    let n = parse_decimal(count.as_bytes())
        .and_then(|n| i64::try_from(n).ok())
        .ok_or_else(too_large)?;
    let lower = unit.to_ascii_lowercase();
    let singular = lower.strip_suffix('s').unwrap_or(&lower);
    let unit_secs: i64 = match singular {
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => SECS_PER_DAY,
        "week" => 7 * SECS_PER_DAY,
        "month" => 30 * SECS_PER_DAY,
        "year" => 365 * SECS_PER_DAY,
        _ => {
            return Err(bad(
                "unknown unit (use second, minute, hour, day, week, month or year)",
            ))
        }
    };
    n.checked_mul(unit_secs)
        .and_then(|d| now.checked_sub(d))
        .ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2027-01-15T08:00:00Z.
    const NOW: i64 = 1_800_000_000;
    const TODAY: i64 = NOW - 8 * 3600;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Date,
        TooLarge,
        Other,
    }

    fn kind(e: &RevParseError) -> Kind {
        match e {
            RevParseError::BadDate { .. } => Kind::Date,
            RevParseError::NumberTooLarge { .. } => Kind::TooLarge,
            _ => Kind::Other,
        }
    }

    #[test]
    fn golden_dates() {
        let cases: Vec<(&str, i64)> = vec![
            ("1970-01-01", 86_399),
            ("1970-01-01T00:00:00Z", 0),
            ("1970-01-01T00:00:00+00:00", 0),
            ("2000-02-29", 951_868_799),
            ("2024-02-29", 1_709_251_199),
            ("2026-01-01", 1_767_311_999),
            ("2026-11-01", 1_793_577_599),
            ("2026-03-15T12:34:56", 1_773_578_096),
            ("2026-03-15 12:34:56", 1_773_578_096),
            ("2026-03-15t12:34:56z", 1_773_578_096),
            ("2026-03-15T12:34", 1_773_578_040),
            ("2026-03-15T12:34Z", 1_773_578_040),
            ("2026-03-15T12:34:56+05:30", 1_773_558_296),
            ("2026-03-15T12:34:56-08:00", 1_773_606_896),
            ("2100-03-01T00:00:00Z", 4_107_542_400),
            ("9999-12-31T23:59:59+00:00", 253_402_300_799),
            ("9999-12-31", 253_402_300_799),
            ("@0", 0),
            ("@1700000000", 1_700_000_000),
            ("now", NOW),
            ("NOW", NOW),
            (" now ", NOW),
            ("today", TODAY),
            ("yesterday", NOW - 86_400),
        ];
        for (input, want) in cases {
            assert_eq!(parse_date(input, NOW), Ok(want), "input {input:?}");
        }
    }

    #[test]
    fn leap_days() {
        assert!(parse_date("2024-02-29", NOW).is_ok());
        assert!(parse_date("2000-02-29", NOW).is_ok());
        for bad in ["2023-02-29", "1900-02-29", "2100-02-29", "2024-02-30"] {
            assert!(
                matches!(parse_date(bad, NOW), Err(RevParseError::BadDate { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn relative_dates() {
        let cases: Vec<(&str, i64)> = vec![
            ("1 second ago", 1),
            ("30 seconds ago", 30),
            ("1.minute.ago", 60),
            ("5 minutes ago", 300),
            ("2.hours.ago", 7_200),
            ("1 day ago", 86_400),
            ("3.days.ago", 3 * 86_400),
            ("1 week ago", 7 * 86_400),
            ("2.weeks.ago", 14 * 86_400),
            ("1 month ago", 30 * 86_400),
            ("6.months.ago", 180 * 86_400),
            ("1 year ago", 365 * 86_400),
            ("2 Years Ago", 730 * 86_400),
            ("0 days ago", 0),
            ("1 days ago", 86_400),
        ];
        for (input, delta) in cases {
            assert_eq!(parse_date(input, NOW), Ok(NOW - delta), "input {input:?}");
        }
    }

    #[test]
    fn today_at_midnight_and_epoch() {
        assert_eq!(parse_date("today", 0), Ok(0));
        assert_eq!(parse_date("today", 86_399), Ok(0));
        assert_eq!(parse_date("today", 86_400), Ok(86_400));
    }

    #[test]
    fn invalid_dates() {
        use Kind::*;
        let cases: Vec<(&str, Kind)> = vec![
            ("", Date),
            ("   ", Date),
            ("garbage", Date),
            ("2026-13-01", Date),
            ("2026-00-10", Date),
            ("2026-04-31", Date),
            ("2026-01-00", Date),
            ("2026-1-1", Date),
            ("2026-01-01Z", Date),
            ("2026-01-01T24:00", Date),
            ("2026-01-01T10:60", Date),
            ("2026-01-01T10:00:60", Date),
            ("2026-01-01T10", Date),
            ("2026-01-01T10:00+25:00", Date),
            ("2026-01-01T10:00+0100", Date),
            ("2026-01-01T10:00:00.5", Date),
            ("1969-12-31", Date),
            ("@", Date),
            ("@abc", Date),
            ("@-5", Date),
            ("@99999999999999999999", TooLarge),
            ("99999999999999999999 years ago", TooLarge),
            ("9999999999999999 years ago", TooLarge),
            ("3 fortnights ago", Date),
            ("3 days", Date),
            ("ago", Date),
            ("x days ago", Date),
            ("-3 days ago", Date),
            ("100 years ago", Date), // before the epoch
        ];
        for (input, want) in cases {
            let got = parse_date(input, NOW).expect_err(input);
            assert_eq!(kind(&got), want, "input {input:?}: {got}");
        }
        assert!(matches!(
            parse_date("yesterday", i64::MIN),
            Err(RevParseError::NumberTooLarge { .. })
        ));
        assert!(parse_date("today", i64::MIN).is_err());
    }
}
