//! Git-style revision expressions (`main~2^2@{yesterday}`, `A..B`) and dates.
//!
//! This module only parses; resolving names against a store happens elsewhere. It never
//! reads the clock or the environment: "now" (unix seconds, UTC) is always a parameter.
//!
//! Date rules ([`parse_date`], also used inside `@{...}`), all UTC unless an offset is given:
//! - `YYYY-MM-DD`: that day at **23:59:59 UTC** (unlike git), so `main@{2026-11-01}` is
//!   the last commit made on or before Nov 1.
//! - `YYYY-MM-DDTHH:MM[:SS]` (or a space instead of `T`), optionally followed by `Z` or
//!   `+HH:MM` / `-HH:MM`; the output of [`format_iso8601`] round-trips.
//! - `@UNIX` (unix seconds), `now`, `today` (00:00:00 UTC of now's day), `yesterday`
//!   (now - 86400).
//! - `N unit(s) ago` or `N.unit(s).ago` for second, minute, hour, day, week,
//!   month (= 30 days) and year (= 365 days).
//!
//! Keywords and units are case-insensitive; surrounding whitespace is ignored. Results
//! before the unix epoch are rejected.

use thiserror::Error;

/// The largest count accepted after `~` or `^`.
pub const MAX_STEPS: u32 = 1_000_000;

/// The longest accepted branch name, in bytes.
pub const MAX_BRANCH_NAME_LEN: usize = 100;

const SECS_PER_DAY: i64 = 86_400;

/// A parsed revision expression (resolution against a store happens elsewhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevExpr {
    /// A branch name, `HEAD`, or a (prefix of a) hex commit id: resolved later, in that order.
    Name(String),
    /// `REV~N`: the N-th first-parent ancestor (`~` alone = `~1`).
    Ancestor(Box<RevExpr>, u32),
    /// `REV^N`: the N-th parent (`^` alone = `^1`, `^0` = the commit itself).
    Parent(Box<RevExpr>, u32),
    /// `REV@{DATE}`: the last commit at or before that time (unix seconds, already
    /// resolved using `now`) on REV's first-parent chain.
    AtTime(Box<RevExpr>, i64),
}

/// `A..B` (commits reachable from B but not from A) or a single revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevRange {
    /// A single revision.
    Single(RevExpr),
    /// `from..to`: commits reachable from `to` but not from `from`.
    Range {
        /// The excluded side (`A` in `A..B`; `HEAD` when empty).
        from: RevExpr,
        /// The included side (`B` in `A..B`; `HEAD` when empty).
        to: RevExpr,
    },
}

/// Why a revision, range, date or branch name was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RevParseError {
    /// The revision text was empty.
    #[error("empty revision")]
    Empty,
    /// The text does not follow the revision grammar.
    #[error("bad revision {input:?} at byte {at}: {why}")]
    BadSyntax {
        /// The whole text being parsed.
        input: String,
        /// Byte offset of the problem in `input`.
        at: usize,
        /// What was wrong.
        why: &'static str,
    },
    /// A date (standalone or inside `@{...}`) could not be understood.
    #[error("bad date {input:?}: {why}")]
    BadDate {
        /// The date text.
        input: String,
        /// What was wrong.
        why: String,
    },
    /// A name is not a valid branch name.
    #[error("bad branch name {name:?}: {why}")]
    BadBranchName {
        /// The rejected name.
        name: String,
        /// Which rule it breaks.
        why: &'static str,
    },
    /// A number is out of range (`~`/`^` counts above 1000000, or date arithmetic overflow).
    #[error("number too large in {input:?}")]
    NumberTooLarge {
        /// The text containing the number.
        input: String,
    },
    /// Valid git syntax that this tool deliberately does not support.
    #[error("unsupported revision syntax in {input:?}: {what}")]
    Unsupported {
        /// The whole text being parsed.
        input: String,
        /// The unsupported feature.
        what: &'static str,
    },
}

/// Parses a single revision such as `main~2^2@{yesterday}`, `@`, or `abc123^2`.
///
/// Suffixes chain left to right; `@{DATE}` may appear at most once and applies to
/// everything before it. `@` alone means `HEAD`. Dates resolve against `now`.
pub fn parse_rev(text: &str, now: i64) -> Result<RevExpr, RevParseError> {
    if text.is_empty() {
        return Err(RevParseError::Empty);
    }
    parse_rev_at(text, 0, text.len(), now)
}

/// Parses `A..B` (an empty side means `HEAD`) or a single revision. `A...B` is rejected
/// as unsupported.
pub fn parse_range(text: &str, now: i64) -> Result<RevRange, RevParseError> {
    if text.is_empty() {
        return Err(RevParseError::Empty);
    }
    let Some(split) = find_top_level_dots(text, 0) else {
        return parse_rev_at(text, 0, text.len(), now).map(RevRange::Single);
    };
    if text.as_bytes().get(split + 2) == Some(&b'.') {
        return Err(RevParseError::Unsupported {
            input: text.to_owned(),
            what: "`A...B` (symmetric difference) is not supported; use `A..B`",
        });
    }
    if let Some(second) = find_top_level_dots(text, split + 2) {
        return Err(bad_syntax(text, second, "more than one `..` in a range"));
    }
    let side = |start: usize, end: usize| {
        if start == end {
            Ok(RevExpr::Name("HEAD".to_owned()))
        } else {
            parse_rev_at(text, start, end, now)
        }
    };
    Ok(RevRange::Range {
        from: side(0, split)?,
        to: side(split + 2, text.len())?,
    })
}

/// Parses a date (see the module docs for the accepted forms) to unix seconds (UTC).
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

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SS+00:00` (UTC), the output format that
/// [`parse_date`] reads back. Years outside 0..=9999 get an explicit sign.
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

/// Checks a branch name (git check-ref-format in spirit, simplified).
///
/// 1..=100 bytes; no whitespace or control characters; none of `~ ^ : ? * [ \`, `@{`,
/// `..` or `//`; no leading `-` or `/`; no path component starting with `.` or ending in
/// `.lock`; no trailing `.` or `/`; not `HEAD` or `@`. `/` and non-ASCII letters are fine.
pub fn validate_branch_name(name: &str) -> Result<(), RevParseError> {
    let fail = |why: &'static str| {
        Err(RevParseError::BadBranchName {
            name: name.to_owned(),
            why,
        })
    };
    if name.is_empty() {
        return fail("empty");
    }
    if name.len() > MAX_BRANCH_NAME_LEN {
        return fail("longer than 100 bytes");
    }
    if name == "HEAD" || name == "@" {
        return fail("reserved name");
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return fail("contains whitespace or a control character");
    }
    if name.chars().any(|c| "~^:?*[\\".contains(c)) {
        return fail("contains one of `~ ^ : ? * [ \\`");
    }
    if name.contains("@{") {
        return fail("contains `@{`");
    }
    if name.contains("..") {
        return fail("contains `..`");
    }
    if name.contains("//") {
        return fail("contains `//`");
    }
    if name.starts_with('-') {
        return fail("starts with `-`");
    }
    if name.starts_with('/') {
        return fail("starts with `/`");
    }
    if name.ends_with('/') {
        return fail("ends with `/`");
    }
    if name.ends_with('.') {
        return fail("ends with `.`");
    }
    if name.split('/').any(|c| c.starts_with('.')) {
        return fail("starts with `.` (or has a component that does)");
    }
    if name.split('/').any(|c| c.ends_with(".lock")) {
        return fail("ends with `.lock` (or has a component that does)");
    }
    Ok(())
}

fn bad_syntax(input: &str, at: usize, why: &'static str) -> RevParseError {
    RevParseError::BadSyntax {
        input: input.to_owned(),
        at,
        why,
    }
}

/// Finds the first `..` at or after `from` that is not inside `@{...}`.
fn find_top_level_dots(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from;
    while i < b.len() {
        if b[i] == b'@' && b.get(i + 1) == Some(&b'{') {
            // Skip to just past the closing brace (or give up: parse_rev reports it).
            match b[i..].iter().position(|&c| c == b'}') {
                Some(p) => i += p + 1,
                None => return None,
            }
        } else if b[i] == b'.' && b.get(i + 1) == Some(&b'.') {
            return Some(i);
        } else {
            i += 1;
        }
    }
    None
}

/// Parses decimal ASCII digits with overflow checking.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?
            .checked_add(u64::from(d.wrapping_sub(b'0')))
    })
}

/// Parses the revision `full[start..end]`; errors quote `full` with absolute offsets.
fn parse_rev_at(full: &str, start: usize, end: usize, now: i64) -> Result<RevExpr, RevParseError> {
    let b = full.as_bytes();
    // The base name runs up to the first `~`, `^` or `@{` (all ASCII, so slicing is safe).
    let mut i = start;
    while i < end && b[i] != b'~' && b[i] != b'^' && !(b[i] == b'@' && b.get(i + 1) == Some(&b'{'))
    {
        i += 1;
    }
    let base = &full[start..i];
    if base.is_empty() {
        return Err(bad_syntax(
            full,
            start,
            "missing revision name before the suffix",
        ));
    }
    if let Some(p) = base.find("..") {
        return Err(bad_syntax(
            full,
            start + p,
            "a range `A..B` is not allowed here; expected a single revision",
        ));
    }
    let mut expr = match base {
        "HEAD" | "@" => RevExpr::Name("HEAD".to_owned()),
        _ => {
            validate_branch_name(base)?;
            RevExpr::Name(base.to_owned())
        }
    };
    let mut seen_at = false;
    while i < end {
        match b[i] {
            c @ (b'~' | b'^') => {
                i += 1;
                if c == b'^' && i < end && b[i] == b'{' {
                    return Err(RevParseError::Unsupported {
                        input: full.to_owned(),
                        what: "`^{...}` peeling is not supported",
                    });
                }
                let digits_start = i;
                while i < end && b[i].is_ascii_digit() {
                    i += 1;
                }
                let n = if digits_start == i {
                    1
                } else {
                    parse_decimal(&b[digits_start..i])
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|&n| n <= MAX_STEPS)
                        .ok_or_else(|| RevParseError::NumberTooLarge {
                            input: full.to_owned(),
                        })?
                };
                expr = if c == b'~' {
                    RevExpr::Ancestor(Box::new(expr), n)
                } else {
                    RevExpr::Parent(Box::new(expr), n)
                };
            }
            b'@' if b.get(i + 1) == Some(&b'{') => {
                if seen_at {
                    return Err(bad_syntax(full, i, "`@{...}` may appear only once"));
                }
                seen_at = true;
                let open = i + 2;
                let Some(close) = b[open..end].iter().position(|&c| c == b'}') else {
                    return Err(bad_syntax(full, i, "unterminated `@{`"));
                };
                let close = open + close;
                let when = parse_date(&full[open..close], now)?;
                expr = RevExpr::AtTime(Box::new(expr), when);
                i = close + 1;
            }
            _ => {
                return Err(bad_syntax(
                    full,
                    i,
                    "expected `~`, `^`, `@{` or the end after a suffix",
                ))
            }
        }
    }
    Ok(expr)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
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
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
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
fn civil_from_days(days: i64) -> (i64, u32, u32) {
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
    use proptest::prelude::*;

    /// 2027-01-15T08:00:00Z.
    const NOW: i64 = 1_800_000_000;
    const TODAY: i64 = NOW - 8 * 3600;

    fn name(s: &str) -> RevExpr {
        RevExpr::Name(s.to_owned())
    }
    fn anc(e: RevExpr, n: u32) -> RevExpr {
        RevExpr::Ancestor(Box::new(e), n)
    }
    fn par(e: RevExpr, n: u32) -> RevExpr {
        RevExpr::Parent(Box::new(e), n)
    }
    fn at(e: RevExpr, t: i64) -> RevExpr {
        RevExpr::AtTime(Box::new(e), t)
    }
    fn range(from: RevExpr, to: RevExpr) -> RevRange {
        RevRange::Range { from, to }
    }

    #[test]
    fn golden_revisions() {
        let head = || name("HEAD");
        let cases: Vec<(&str, RevExpr)> = vec![
            ("main", name("main")),
            ("HEAD", head()),
            ("@", head()),
            ("@~2", anc(head(), 2)),
            ("@^", par(head(), 1)),
            ("HEAD~0", anc(head(), 0)),
            ("HEAD~", anc(head(), 1)),
            ("HEAD~~", anc(anc(head(), 1), 1)),
            ("HEAD^^2", par(par(head(), 1), 2)),
            ("abc123^2", par(name("abc123"), 2)),
            ("abc123", name("abc123")),
            ("main^", par(name("main"), 1)),
            ("main^0", par(name("main"), 0)),
            ("main~007", anc(name("main"), 7)),
            ("main~1000000", anc(name("main"), 1_000_000)),
            ("agent/alice~1", anc(name("agent/alice"), 1)),
            ("été/ü", name("été/ü")),
            ("main@x", name("main@x")),
            (
                "main~2^2~1@{yesterday}",
                at(anc(par(anc(name("main"), 2), 2), 1), NOW - 86_400),
            ),
            (
                "main@{2026-01-01}~3",
                anc(at(name("main"), 1_767_311_999), 3),
            ),
            ("main@{2026-11-01}", at(name("main"), 1_793_577_599)),
            ("@@{now}^2", par(at(head(), NOW), 2)),
            (
                "feature/x@{@1700000000}",
                at(name("feature/x"), 1_700_000_000),
            ),
            ("main@{2 days ago}", at(name("main"), NOW - 2 * 86_400)),
            ("main@{ 1.week.ago }", at(name("main"), NOW - 7 * 86_400)),
        ];
        for (input, want) in cases {
            assert_eq!(parse_rev(input, NOW), Ok(want), "input {input:?}");
        }
    }

    #[test]
    fn golden_ranges() {
        let head = || name("HEAD");
        let cases: Vec<(&str, RevRange)> = vec![
            ("main", RevRange::Single(name("main"))),
            ("@~1", RevRange::Single(anc(head(), 1))),
            ("a..b", range(name("a"), name("b"))),
            ("..b", range(head(), name("b"))),
            ("a..", range(name("a"), head())),
            ("..", range(head(), head())),
            ("@..@~1", range(head(), anc(head(), 1))),
            (
                "main~2..dev^2",
                range(anc(name("main"), 2), par(name("dev"), 2)),
            ),
            (
                "main@{1.day.ago}..main",
                range(at(name("main"), NOW - 86_400), name("main")),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse_range(input, NOW), Ok(want), "input {input:?}");
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
    fn iso_examples() {
        assert_eq!(format_iso8601(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(format_iso8601(NOW), "2027-01-15T08:00:00+00:00");
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

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Empty,
        Syntax,
        Date,
        Branch,
        TooLarge,
        Unsupported,
    }

    fn kind(e: &RevParseError) -> Kind {
        match e {
            RevParseError::Empty => Kind::Empty,
            RevParseError::BadSyntax { .. } => Kind::Syntax,
            RevParseError::BadDate { .. } => Kind::Date,
            RevParseError::BadBranchName { .. } => Kind::Branch,
            RevParseError::NumberTooLarge { .. } => Kind::TooLarge,
            RevParseError::Unsupported { .. } => Kind::Unsupported,
        }
    }

    #[test]
    fn invalid_revisions_and_ranges() {
        use Kind::*;
        let revs: Vec<(&str, Kind)> = vec![
            ("", Empty),
            ("main~x", Syntax),
            ("~3", Syntax),
            ("^", Syntax),
            ("@{now}", Syntax),
            ("main@{", Syntax),
            ("main@{now", Syntax),
            ("main@{garbage}", Date),
            ("main@{}", Date),
            ("main@{2023-02-29}", Date),
            ("main@{now}@{now}", Syntax),
            ("main@{now}x", Syntax),
            ("main~99999999999", TooLarge),
            ("main~1000001", TooLarge),
            ("main^99999999999999999999999", TooLarge),
            ("main@{99999999999999999999 years ago}", TooLarge),
            ("a..b", Syntax),
            ("main^{commit}", Unsupported),
            ("-x", Branch),
            ("a b", Branch),
            ("x.lock", Branch),
            ("a//b", Branch),
            ("a/", Branch),
            ("a\u{1}b", Branch),
            ("main:path", Branch),
            (" main", Branch),
        ];
        for (input, want) in revs {
            let got = parse_rev(input, NOW).expect_err(input);
            assert_eq!(kind(&got), want, "input {input:?}: {got}");
        }
        let ranges: Vec<(&str, Kind)> = vec![
            ("", Empty),
            ("a...b", Unsupported),
            ("...", Unsupported),
            ("a..b..c", Syntax),
            ("a..~3", Syntax),
            ("main~x..b", Syntax),
            ("a..b c", Branch),
            ("a..main@{garbage}", Date),
        ];
        for (input, want) in ranges {
            let got = parse_range(input, NOW).expect_err(input);
            assert_eq!(kind(&got), want, "input {input:?}: {got}");
        }
        // Offsets in range errors point into the whole text.
        assert_eq!(
            parse_range("a..b~x", NOW),
            Err(RevParseError::BadSyntax {
                input: "a..b~x".to_owned(),
                at: 5,
                why: "expected `~`, `^`, `@{` or the end after a suffix",
            })
        );
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

    #[test]
    fn invalid_branch_names() {
        let long = "a".repeat(101);
        let bad = [
            "",
            "-x",
            "a..b",
            "a b",
            "x.lock",
            "a/x.lock/b",
            "HEAD",
            "@",
            "a//b",
            "a/",
            "/a",
            ".a",
            "a/.b",
            "a.",
            "a\u{1}b",
            "a\u{7f}b",
            "a\tb",
            "a\nb",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a@{b",
            &long,
        ];
        for name in bad {
            assert!(
                matches!(
                    validate_branch_name(name),
                    Err(RevParseError::BadBranchName { .. })
                ),
                "{name:?}"
            );
        }
        let good = [
            "main",
            "agent/alice",
            "feature/x-1_2",
            "v1.2",
            "héllo/wörld",
            "a@b",
            "HEADS",
            "a.lockx",
            &"a".repeat(100),
        ];
        for name in good {
            assert_eq!(validate_branch_name(name), Ok(()), "{name:?}");
        }
    }

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

    proptest! {
        #[test]
        fn iso_round_trip(t in 0i64..=253_402_300_799) {
            let s = format_iso8601(t);
            prop_assert_eq!(s.len(), 25);
            prop_assert_eq!(parse_date(&s, 0), Ok(t));
            prop_assert_eq!(parse_rev(&format!("main@{{{s}}}"), 0), Ok(at(name("main"), t)));
        }

        #[test]
        fn never_panics_on_arbitrary_strings(s in ".*", now in any::<i64>()) {
            let _ = parse_rev(&s, now);
            let _ = parse_range(&s, now);
            let _ = parse_date(&s, now);
            let _ = validate_branch_name(&s);
        }

        #[test]
        fn never_panics_on_revision_like_strings(
            s in "[main~^@{}. 0-9HEADTZ:+-/a-f]{0,40}",
            now in any::<i64>(),
        ) {
            let _ = parse_rev(&s, now);
            let _ = parse_range(&s, now);
            let _ = parse_date(&s, now);
            let _ = validate_branch_name(&s);
        }

        #[test]
        fn valid_branch_names_parse_as_names(s in "[a-z][a-z0-9/_-]{0,30}") {
            if validate_branch_name(&s).is_ok() {
                prop_assert_eq!(parse_rev(&s, NOW), Ok(name(&s)));
            }
        }
    }
}
