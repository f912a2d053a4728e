//! What a record and a query say besides their words: who speaks, when it happened, whether
//! the text talks about time, whether it asks. Read from the texts (a record's content and
//! timestamp, the query's text) and the record's actor, which the index keeps.
//!
//! - A record's speaker is a leading `Name:` (one to three capitalised words) of its
//!   content: the record is then a turn of a conversation. A leading bracketed date
//!   (`[8 May 2023] ...`) may come before it. A record without one is spoken by its actor
//!   (the agent that wrote it, which the index keeps), when it has one.
//! - A record's event time is that leading date when there is one, else its timestamp (which
//!   `remember --event-time` and `import` set to the caller's time).
//! - A text holds a time expression when it names a relative day (`yesterday`, `ago`,
//!   `last week`), a weekday, a month, a year or a count of days to years.
//! - A turn is a question when its text ends with `?` (bracketed notes after it aside).

use crate::calendar::{days_from_civil, days_in_month, MONTHS, SECS_PER_DAY};

/// The longest leading `Name:` read as a speaker, in bytes.
const SPEAKER_MAX: usize = 40;

/// The longest leading `[date]`, in bytes.
const LEADING_DATE_MAX: usize = 48;

/// What a record's content says besides its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordSignals<'a> {
    /// The leading `Name:` of a conversation turn, as written.
    pub speaker: Option<&'a str>,
    /// The first day (unix seconds at midnight UTC) of a leading bracketed date.
    pub leading_date: Option<i64>,
    /// Whether the text names a time (see the module documentation).
    pub time_expression: bool,
    /// Whether the record is a turn that asks (ends with `?`).
    pub question: bool,
}

/// A record's content split the way the signals read it, without reading its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts<'a> {
    /// The text inside a leading `[...]` (a date, when it names one).
    pub bracket: Option<&'a str>,
    /// The leading `Name:` of a conversation turn, as written.
    pub speaker: Option<&'a str>,
    /// The rest: what the record says.
    pub text: &'a str,
}

impl<'a> Parts<'a> {
    /// Splits a record's content: a leading `[...]`, then a leading `Name:`.
    pub fn of(content: &'a str) -> Self {
        let mut rest = content.trim_start();
        let mut bracket = None;
        if let Some((inside, after)) = leading_bracket(rest) {
            bracket = Some(inside);
            rest = after.trim_start();
        }
        let (speaker, text) = match leading_speaker(rest) {
            Some((name, text)) => (Some(name), text),
            None => (None, rest),
        };
        Parts {
            bracket,
            speaker,
            text,
        }
    }

    /// The first day of a leading bracketed date (unix seconds at its midnight).
    pub fn leading_date(&self) -> Option<i64> {
        self.bracket.and_then(find_day)
    }

    /// Whether the record is a turn that asks (ends with `?`).
    pub fn question(&self) -> bool {
        self.speaker.is_some() && ends_with_question(self.text)
    }
}

/// Reads the signals of a record's content.
pub fn read_record(content: &str) -> RecordSignals<'_> {
    let p = Parts::of(content);
    RecordSignals {
        speaker: p.speaker,
        leading_date: p.leading_date(),
        time_expression: has_time_expression(p.text),
        question: p.question(),
    }
}

/// The text inside a leading `[...]` and what follows it.
fn leading_bracket(s: &str) -> Option<(&str, &str)> {
    let inner = s.strip_prefix('[')?;
    let end = inner.find(']').filter(|&e| e <= LEADING_DATE_MAX)?;
    Some((&inner[..end], &inner[end + 1..]))
}

/// A leading `Name:` (one to three words, each a capital letter then letters, `'`, `-` or
/// `.`) followed by a space or the end: the name and the text after it.
fn leading_speaker(s: &str) -> Option<(&str, &str)> {
    let head = &s.as_bytes()[..s.len().min(SPEAKER_MAX + 1)];
    let colon = head.iter().position(|&b| b == b':').filter(|&c| c > 0)?;
    let (name, after) = (&s[..colon], &s[colon + 1..]);
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    let words: Vec<&str> = name.split(' ').collect();
    let word_ok = |w: &str| {
        let mut c = w.chars();
        c.next().is_some_and(char::is_uppercase)
            && c.all(|c| c.is_alphabetic() || matches!(c, '\'' | '-' | '.'))
    };
    (words.len() <= 3 && words.iter().all(|w| word_ok(w))).then(|| (name, after.trim_start()))
}

/// Whether a text ends with `?`, trailing bracketed notes (`[shared an image: ...]`) and
/// closing quotes aside.
fn ends_with_question(text: &str) -> bool {
    let mut t = text.trim_end();
    while let Some(open) = t.strip_suffix(']').and_then(|x| x.rfind('[')) {
        t = t[..open].trim_end();
    }
    t.trim_end_matches(['"', '\'', ')', '\u{201d}', '\u{2019}'])
        .ends_with('?')
}

/// The lower-case words of a text (letters and digits), in order.
pub(super) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The month a word names (1-12): its full English name or a three-letter abbreviation
/// (`sept` too); `may` only when `strict` is false.
fn month_of(word: &str, strict: bool) -> Option<u32> {
    if word == "may" {
        return (!strict).then_some(5);
    }
    if word == "sept" {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|m| *m == word || (word.len() == 3 && m.starts_with(word)))
        .map(|m| m as u32 + 1)
}

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Words that name a time by themselves.
const TIME_WORDS: [&str; 9] = [
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "ago",
    "recently",
    "lately",
    "weekend",
    "weekends",
];

/// Words that make the next a time (`last week`, `next summer`).
const TIME_LEADS: [&str; 7] = ["last", "next", "this", "past", "previous", "coming", "few"];

/// Units a count or a lead makes a time (`two weeks`, `last month`).
const TIME_UNITS: [&str; 16] = [
    "day", "days", "week", "weeks", "month", "months", "year", "years", "night", "morning",
    "evening", "summer", "winter", "spring", "autumn", "fall",
];

/// Words that count (`two weeks`, `a few months`).
const COUNTS: [&str; 16] = [
    "a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "couple",
    "several", "few", "many", "some",
];

/// Whether a text names a time: a relative day, a weekday, a month (`May` only next to a
/// number or after `in`/`of`/`last`/...), a year (1900-2099), or a count or lead before a
/// unit of time.
pub fn has_time_expression(text: &str) -> bool {
    let ws: Vec<String> = words(text).collect();
    ws.iter().enumerate().any(|(i, w)| {
        let prev = i.checked_sub(1).map(|p| ws[p].as_str());
        let next = ws.get(i + 1).map(String::as_str);
        let number = |x: Option<&str>| x.is_some_and(|x| x.bytes().all(|b| b.is_ascii_digit()));
        if TIME_WORDS.contains(&w.as_str()) || WEEKDAYS.iter().any(|d| w.starts_with(d)) {
            return true;
        }
        if w == "may" {
            return number(prev)
                || number(next)
                || prev.is_some_and(|p| ["in", "of", "early", "late"].contains(&p))
                || prev.is_some_and(|p| TIME_LEADS.contains(&p));
        }
        if w.len() > 3 && month_of(w, true).is_some() {
            return true;
        }
        if w.len() == 4 && w.starts_with(['1', '2']) && number(Some(w)) {
            let y: u32 = w.parse().unwrap_or(0);
            return (1900..2100).contains(&y);
        }
        if TIME_UNITS.contains(&w.as_str()) {
            return prev.is_some_and(|p| {
                TIME_LEADS.contains(&p) || COUNTS.contains(&p) || number(Some(p))
            });
        }
        false
    })
}

/// A period of time: unix seconds, start included, end excluded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    /// First second.
    pub start: f64,
    /// First second after.
    pub end: f64,
}

impl Period {
    fn day(y: i64, m: u32, d: u32) -> Period {
        let start = days_from_civil(y, m, d) * SECS_PER_DAY;
        Period {
            start: start as f64,
            end: (start + SECS_PER_DAY) as f64,
        }
    }

    fn month(y: i64, m: u32) -> Period {
        let start = days_from_civil(y, m, 1) * SECS_PER_DAY;
        let end = start + i64::from(days_in_month(y, m)) * SECS_PER_DAY;
        Period {
            start: start as f64,
            end: end as f64,
        }
    }

    /// Whether unix seconds `t` fall in the period.
    pub fn contains(&self, t: f64) -> bool {
        t >= self.start && t < self.end
    }
}

/// A four-digit year word (1000-9999).
fn year_of(word: &str) -> Option<i64> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1000..=9999).contains(y))
}

/// A day-of-month word (`8`, `08`, `8th`, `1st`) of a month `y`-`m` has.
fn day_of(word: &str, y: i64, m: u32) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !(suffix.is_empty() || ["st", "nd", "rd", "th"].contains(&suffix)) || digits.len() > 2 {
        return None;
    }
    let d: u32 = digits.parse().ok()?;
    (1..=days_in_month(y, m)).contains(&d).then_some(d)
}

/// The dates and months a text names: `2023-05-08`, `8 May 2023`, `May 8, 2023`, `8th of
/// May 2023` (days), `May 2023`, `2023-05` (months). A month or a year alone names no
/// period here (the date field of the index reads those).
pub fn periods(text: &str) -> Vec<Period> {
    let mut out = Vec::new();
    // ISO forms, from the raw text (`-` splits words).
    for token in text.split(|c: char| !(c.is_ascii_digit() || c == '-')) {
        let parts: Vec<&str> = token.split('-').collect();
        let num = |s: &str| s.parse::<u32>().ok();
        match parts.as_slice() {
            [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
                if let (Some(y), Some(m), Some(d)) = (year_of(y), num(m), num(d)) {
                    if (1..=12).contains(&m) && (1..=days_in_month(y, m)).contains(&d) {
                        out.push(Period::day(y, m, d));
                    }
                }
            }
            [y, m] if y.len() == 4 && m.len() == 2 => {
                if let (Some(y), Some(m)) = (year_of(y), num(m)) {
                    if (1..=12).contains(&m) {
                        out.push(Period::month(y, m));
                    }
                }
            }
            _ => {}
        }
    }
    let ws: Vec<String> = words(text).collect();
    let mut i = 0;
    while i < ws.len() {
        let Some(m) = month_of(&ws[i], false) else {
            i += 1;
            continue;
        };
        let at = |j: usize| ws.get(j).map(String::as_str).unwrap_or("");
        // Month Day Year / Month Year.
        let after = at(i + 1);
        if let Some(y) = year_of(at(i + 2)) {
            if let Some(d) = day_of(after, y, m) {
                out.push(Period::day(y, m, d));
                i += 3;
                continue;
            }
        }
        if let Some(y) = year_of(after) {
            // Day [of] Month Year.
            let before = if i >= 1 && at(i - 1) == "of" && i >= 2 {
                at(i - 2)
            } else if i >= 1 {
                at(i - 1)
            } else {
                ""
            };
            match day_of(before, y, m) {
                Some(d) => out.push(Period::day(y, m, d)),
                None => out.push(Period::month(y, m)),
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    out
}

/// The first day a text names (`8 May 2023`, `1:56 pm on 8 May, 2023`, `2023-05-08`), as
/// unix seconds at its midnight.
fn find_day(text: &str) -> Option<i64> {
    periods(text)
        .into_iter()
        .find(|p| p.end - p.start == SECS_PER_DAY as f64)
        .map(|p| p.start as i64)
}

/// Whether a query asks about time: it starts with `when`, or asks `what`/`which` date,
/// day, time, week, month or year, or `how long`.
pub fn is_temporal_question(query: &str) -> bool {
    let ws: Vec<String> = words(query).collect();
    if ws.first().is_some_and(|w| w == "when") {
        return true;
    }
    ws.windows(2).any(|p| {
        let (a, b) = (p[0].as_str(), p[1].as_str());
        (matches!(a, "what" | "which")
            && matches!(b, "date" | "day" | "time" | "week" | "month" | "year"))
            || (a == "how" && b == "long")
            || (a == "since" && b == "when")
    })
}

/// Whether a query names a speaker: it holds the speaker's whole name, or its first word,
/// as words (case aside). `query_words` are the query's `words`.
pub fn names_speaker(query_words: &[String], speaker: &str) -> bool {
    let name: Vec<String> = words(speaker).collect();
    let Some(first) = name.first() else {
        return false;
    };
    let has = |w: &String| query_words.contains(w);
    name.iter().all(has) || (first.chars().count() >= 3 && has(first))
}

/// Whether a query names an actor (an agent's id, such as `agent-1` or `claude`): the
/// actor's words, in order, are consecutive words of the query (case aside). Unlike a
/// speaker's first name, part of an actor's id is no mention of it (`agent` is no mention of
/// `agent-1`).
pub fn names_actor(query_words: &[String], actor: &str) -> bool {
    let name: Vec<String> = words(actor).collect();
    !name.is_empty()
        && query_words
            .windows(name.len())
            .any(|w| w == name.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_name_is_a_speaker_and_a_leading_date_an_event_day() {
        let r = read_record("[8 May 2023] Caroline: I went to a support group yesterday.");
        assert_eq!(r.speaker, Some("Caroline"));
        assert_eq!(
            r.leading_date,
            Some(days_from_civil(2023, 5, 8) * SECS_PER_DAY)
        );
        assert!(r.time_expression);
        assert!(!r.question);
        let r = read_record("Dr. Smith: How are you feeling today? [shared an image: a cup]");
        assert_eq!(r.speaker, Some("Dr. Smith"));
        assert!(r.question);
        for plain in [
            "Production runs PostgreSQL 16",
            "see https://example.com: now",
            "the user said: use tabs?",
            "Prefers pytest with property tests",
        ] {
            let r = read_record(plain);
            assert_eq!(r.speaker, None, "{plain}");
            assert!(!r.question, "{plain}");
        }
        // A question that is no turn is not down-weighted.
        assert!(!read_record("Should we use tabs?").question);
    }

    #[test]
    fn time_expressions_are_found_and_may_the_verb_is_not_one() {
        for t in [
            "I went there yesterday",
            "two weeks ago",
            "last week we met",
            "on Friday",
            "in May",
            "8 May",
            "back in 2019",
            "for 3 years now",
            "a few months",
            "in January",
        ] {
            assert!(has_time_expression(t), "{t}");
        }
        for t in [
            "you may like it",
            "May I ask?",
            "the weekly report",
            "a good day",
        ] {
            assert!(!has_time_expression(t), "{t}");
        }
    }

    #[test]
    fn queries_name_dates_and_months() {
        let day = |y, m, d| Period::day(y, m, d);
        assert_eq!(
            periods("what happened on 8 May 2023?"),
            vec![day(2023, 5, 8)]
        );
        assert_eq!(periods("on May 8th, 2023"), vec![day(2023, 5, 8)]);
        assert_eq!(periods("the 8th of May 2023"), vec![day(2023, 5, 8)]);
        assert_eq!(periods("since 2023-05-08"), vec![day(2023, 5, 8)]);
        assert_eq!(periods("in May 2023"), vec![Period::month(2023, 5)]);
        assert_eq!(periods("in 2023-02"), vec![Period::month(2023, 2)]);
        assert!(periods("in May").is_empty());
        assert!(periods("in 2023").is_empty());
        assert!(periods("january").is_empty());
        assert!(periods("on 31 February 2023").len() == 1); // the month, as no such day
        let m = Period::month(2024, 2);
        assert_eq!(m.end - m.start, 29.0 * 86_400.0);
    }

    #[test]
    fn temporal_questions_and_named_speakers() {
        assert!(is_temporal_question("When did Caroline go to the group?"));
        assert!(is_temporal_question("What year did she move?"));
        assert!(is_temporal_question("How long ago was the trip?"));
        assert!(!is_temporal_question("What did she do when it rained?"));
        assert!(!is_temporal_question("How do we ship?"));
        let q: Vec<String> = words("What did Caroline's sister say?").collect();
        assert!(names_speaker(&q, "Caroline"));
        assert!(names_speaker(&q, "Caroline Smith"));
        assert!(!names_speaker(&q, "Melanie"));
        let q: Vec<String> = words("What did agent-1 decide about Claude?").collect();
        assert!(names_actor(&q, "agent-1"));
        assert!(names_actor(&q, "claude"));
        assert!(!names_actor(&q, "agent-2"));
        assert!(!names_actor(&q, "-"));
    }
}
