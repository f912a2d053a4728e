//! The date field: a query word naming a month or a year matches the records dated then.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::file_part::first_not_below;
use super::LexicalIndex;
use crate::calendar::MONTHS;

/// Years a four-digit query word can name.
const YEARS: std::ops::RangeInclusive<i64> = 1000..=9999;

/// What a query term says about dates: the month it names, or the year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DateTerm {
    Month(u32),
    Year(i64),
}

impl DateTerm {
    pub(super) fn matches(self, (year, month): (i64, u32)) -> bool {
        match self {
            DateTerm::Month(m) => m == month,
            DateTerm::Year(y) => y == year,
        }
    }
}

impl LexicalIndex {
    /// The month or year a query term names, if any: a term that is the stem of a month's
    /// name, or four digits.
    pub(super) fn date_term(&self, term: &str) -> Option<DateTerm> {
        if term.len() == 4 && term.bytes().all(|b| b.is_ascii_digit()) {
            return term
                .parse()
                .ok()
                .filter(|y| YEARS.contains(y))
                .map(DateTerm::Year);
        }
        static STEMS: OnceLock<Vec<String>> = OnceLock::new();
        STEMS
            .get_or_init(|| MONTHS.iter().map(|m| self.tokenizer.stem(m)).collect())
            .iter()
            .position(|m| m == term)
            .map(|m| DateTerm::Month(m as u32 + 1))
    }

    /// The live documents whose timestamp falls in the month or year `t` names: the
    /// postings of the date field for one term, read where the file holds them; for an
    /// index changed since its file, with the removed documents they list skipped and the
    /// overlay's added as one run more.
    pub(super) fn dated(&self, t: DateTerm) -> Dated<'_> {
        let (year, months) = match t {
            DateTerm::Year(y) => (Some(y), 1..=12),
            DateTerm::Month(m) => (None, m as u8..=m as u8),
        };
        let runs = self.base.dated_in(year, months);
        if self.file_part_whole() {
            return Dated::of_runs(runs.into_iter().map(Cow::Borrowed).collect());
        }
        // The file part's, read where they lie less the documents removed since, then the
        // overlay's (one run more).
        let (stats, n) = (self.stats(), self.base.n_docs());
        let listed = |d: u32| runs.iter().any(|r| run_holds(r, d));
        let skip: Vec<u32> = stats
            .removed
            .iter()
            .copied()
            .filter(|&d| listed(d))
            .collect();
        let mut over = Vec::new();
        (n..n + self.docs.len())
            .map(|d| d as u32)
            .filter(|&d| {
                self.live_len(d).is_some() && self.date(stats, d).is_some_and(|d| t.matches(d))
            })
            .for_each(|d| over.extend_from_slice(&d.to_le_bytes()));
        let mut runs: Vec<Cow<'_, [u8]>> = runs.into_iter().map(Cow::Borrowed).collect();
        runs.push(Cow::Owned(over));
        let mut dated = Dated::of_runs(runs);
        dated.len -= skip.len();
        dated.skip = skip;
        dated
    }
}

/// The records a month or a year names, in runs of ascending numbers (4 little-endian bytes
/// each): ranges of the file part's date-ordered table read where they lie (a year's months,
/// a month's years), with a changed index's removed documents set aside and its overlay's
/// as one run more.
#[derive(Clone, Debug)]
pub(super) struct Dated<'a> {
    runs: Vec<Cow<'a, [u8]>>,
    /// Documents the runs list that were removed since the file was written (ascending):
    /// not among the records.
    skip: Vec<u32>,
    len: usize,
}

impl<'a> Dated<'a> {
    fn of_runs(runs: Vec<Cow<'a, [u8]>>) -> Self {
        let len = runs.iter().map(|r| r.len() / 4).sum();
        Dated {
            runs,
            skip: Vec::new(),
            len,
        }
    }

    /// The number of records.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The runs, each of ascending numbers (none empty), as they lie: with the removed
    /// documents of a changed index among them (a sweep reads the runs of an index that is
    /// its file whole, which has none).
    pub(super) fn runs(&self) -> impl Iterator<Item = &[u8]> {
        self.runs.iter().map(|r| &r[..]).filter(|r| r.len() >= 4)
    }

    /// Calls `f` with every record, a run at a time (a loop over each run's bytes: the
    /// counts of a date that matches every record go through a million of them).
    pub(super) fn for_each(&self, mut f: impl FnMut(u32)) {
        for run in &self.runs {
            // The parts between the removed documents the run lists.
            let mut rest: &[u8] = run;
            for &s in &self.skip {
                let n = rest.len() / 4;
                let i = first_not_below(n, |i| number(rest, i) < s);
                if i < n && number(rest, i) == s {
                    numbers(&rest[..4 * i]).for_each(&mut f);
                    rest = &rest[4 * (i + 1)..];
                }
            }
            numbers(rest).for_each(&mut f);
        }
    }

    /// Whether record `d` is one of them.
    pub(super) fn contains(&self, d: u32) -> bool {
        self.runs().any(|r| run_holds(r, d)) && self.skip.binary_search(&d).is_err()
    }
}

/// Whether a run holds `d`.
fn run_holds(run: &[u8], d: u32) -> bool {
    let n = run.len() / 4;
    let i = first_not_below(n, |i| number(run, i) < d);
    i < n && number(run, i) == d
}

/// Number `i` of a run.
#[inline]
pub(super) fn number(run: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([run[4 * i], run[4 * i + 1], run[4 * i + 2], run[4 * i + 3]])
}

/// The numbers of a run, in order.
pub(super) fn numbers(run: &[u8]) -> impl Iterator<Item = u32> + '_ {
    run.chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
