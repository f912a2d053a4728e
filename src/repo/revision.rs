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

mod branch;
mod date;

pub use crate::calendar::format_iso8601;
pub use branch::{validate_branch_name, validate_new_branch_name, MAX_BRANCH_NAME_LEN};
pub use date::parse_date;

/// The largest count accepted after `~` or `^`.
pub const MAX_STEPS: u32 = 1_000_000;

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
    /// More `~`/`^`/`@{}` suffixes than [`MAX_SUFFIXES`] (each is a level of the
    /// expression, so the length of a revision is bounded, not the stack it takes).
    #[error("too many suffixes in revision {input:?}: at most {MAX_SUFFIXES} (write HEAD~N for N steps back)")]
    TooManySuffixes {
        /// The start of the revision text.
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

/// Most suffixes one revision may chain (`HEAD~~~` has three); `~N` and `^N` say any count.
pub const MAX_SUFFIXES: usize = 256;

/// The first 64 characters of `text`, for messages about a text of any length.
fn truncated(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
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
    let mut suffixes = 0usize;
    while i < end {
        suffixes += 1;
        if suffixes > MAX_SUFFIXES {
            return Err(RevParseError::TooManySuffixes {
                input: truncated(full),
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// 2027-01-15T08:00:00Z.
    const NOW: i64 = 1_800_000_000;

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
            RevParseError::NumberTooLarge { .. } | RevParseError::TooManySuffixes { .. } => {
                Kind::TooLarge
            }
            RevParseError::Unsupported { .. } => Kind::Unsupported,
        }
    }

    #[test]
    fn invalid_revisions_and_ranges() {
        use Kind::*;
        // Deep chains are refused whole, not walked (a stack frame per suffix).
        let deep = format!("HEAD{}", "~".repeat(20_000));
        let deep_range = format!("main{}", "^".repeat(MAX_SUFFIXES + 1));
        assert!(parse_rev(&format!("HEAD{}", "~".repeat(MAX_SUFFIXES)), NOW).is_ok());
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
            (&deep, TooLarge),
            (&deep_range, TooLarge),
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
