//! The date field: a query word naming a month or a year matches the records dated then.

use std::sync::OnceLock;

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
    /// postings of the date field for one term.
    pub(super) fn dated(&self, t: DateTerm) -> Vec<u32> {
        let stats = self.stats();
        let (year, months) = match t {
            DateTerm::Year(y) => (Some(y), 1..=12),
            DateTerm::Month(m) => (None, m as u8..=m as u8),
        };
        // The file part's from its date-ordered table, then the overlay's.
        let mut out: Vec<u32> = self
            .base
            .dated_in(year, months)
            .into_iter()
            .filter(|&d| !self.dead.get(d as usize).copied().unwrap_or(true))
            .collect();
        let n = self.base.n_docs();
        out.extend((n..n + self.docs.len()).map(|d| d as u32).filter(|&d| {
            self.live_len(d).is_some() && self.date(stats, d).is_some_and(|d| t.matches(d))
        }));
        out
    }
}
