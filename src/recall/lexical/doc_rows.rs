//! The query terms' frequencies in single records, looked up record by record. A search
//! that sums windows only where they can change the answer needs the frequencies of the
//! records in those windows alone: looking them up there costs less, and holds less, than
//! keeping a row for every record its postings touch.

use std::collections::HashMap;

use super::index::Posting;
use super::score::{Reach, TermRows};
use super::terms::TermRef;
use super::view::View;
use super::LexicalIndex;

/// Where the postings of one reached term are looked up, record by record.
pub(super) struct Lookup<'a> {
    base: super::file_part::Postings<'a>,
    over: HashMap<u32, Posting>,
}

impl Lookup<'_> {
    /// The posting of live record `d`, if it holds the term.
    pub(super) fn find(&self, d: u32) -> Option<Posting> {
        if !self.over.is_empty() {
            if let Some(p) = self.over.get(&d) {
                return Some(*p);
            }
        }
        self.base.find(d)
    }
}

const UNSEEN: u8 = 0;
const DONE: u8 = 1;
const NOW: u8 = 2;

/// How [`LazyRows`] fill rows: by looking each record up, by reading every posting once for
/// the records asked for, or every row at once (the default chooses what costs less).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) enum Fill {
    Auto,
    Lookup,
    Scan,
    /// Every row at once.
    All,
}

/// The rows of the records whose windows a search sums, filled as they are needed.
pub(super) struct LazyRows<'a> {
    /// Per query term, a look-up per indexed term it reaches (in `reach`'s order).
    lookups: Vec<Vec<Lookup<'a>>>,
    /// Per record: [`UNSEEN`], [`DONE`] (its row filled, or none to fill) or [`NOW`] (to fill
    /// in this round); empty once every row is filled.
    state: Vec<u8>,
    /// Whether every row is filled.
    all_filled: bool,
    /// The postings of the terms reached, and the steps of one record's look-up in them.
    postings: usize,
    steps: usize,
    how: Fill,
}

impl LexicalIndex {
    /// A look-up of term `t`'s postings.
    pub(super) fn lookup_of(&self, t: TermRef) -> Lookup<'_> {
        Lookup {
            base: self.base_postings(t),
            over: self.over_postings(t).iter().map(|p| (p.doc, *p)).collect(),
        }
    }

    /// Rows to be filled for a search over `docs` document numbers that reaches `reach`.
    pub(super) fn lazy_rows(&self, reach: &[Reach], docs: usize, how: Fill) -> LazyRows<'_> {
        let lookups: Vec<Vec<Lookup<'_>>> = reach
            .iter()
            .map(|(expansions, _)| expansions.iter().map(|e| self.lookup_of(e.0)).collect())
            .collect();
        let postings = reach.iter().flat_map(|r| &r.0).map(|e| e.2).sum();
        let steps = (lookups.iter().flatten())
            .map(|l| l.base.len().max(2).ilog2() as usize + 1)
            .sum();
        LazyRows {
            lookups,
            state: vec![UNSEEN; docs],
            all_filled: false,
            postings,
            steps,
            how,
        }
    }
}

impl LazyRows<'_> {
    /// Fills `rows` for the records of `docs` and the live siblings within `v`'s window of
    /// each, as the postings loop of a search fills them: per query term, the weight times
    /// the weighted frequency of each indexed term it reaches, in order, then the date
    /// field's weight when the record is dated as the term names; only for records that
    /// pass `in_scope`, and a row only for a record that holds a term. When looking them up
    /// costs more than reading every posting, every row is filled at once.
    pub(super) fn fill(
        &mut self,
        v: &View<'_>,
        reach: &[Reach],
        docs: &[u32],
        in_scope: impl Fn(u32) -> bool,
        rows: &mut TermRows,
    ) {
        let pr = v.index().params;
        if self.all_filled {
            return;
        }
        // Windows around most records: every row is filled, by one read of the postings (a
        // row is the same whenever it is filled).
        let most = docs.len().saturating_mul(2 * pr.window + 1);
        let all = match self.how {
            Fill::Auto => most.saturating_mul(4) >= self.state.len(),
            how => how == Fill::All,
        };
        if all {
            self.scan(v, reach, UNSEEN, &in_scope, rows);
            self.all_filled = true;
            self.state = Vec::new();
            return;
        }
        // The records to fill, each once: `docs` and their windows' siblings.
        let mut count = 0usize;
        each_in_windows(v, docs, |d| {
            let st = &mut self.state[d as usize];
            if *st == UNSEEN {
                *st = if v.live_len(d).is_some() && in_scope(d) {
                    count += 1;
                    NOW
                } else {
                    DONE
                };
            }
        });
        // Many records: reading every posting once costs less than looking each up.
        let scan = match self.how {
            Fill::Auto => count.saturating_mul(self.steps) > self.postings,
            how => how == Fill::Scan,
        };
        if scan {
            self.scan(v, reach, NOW, &in_scope, rows);
            for st in self.state.iter_mut().filter(|s| **s == NOW) {
                *st = DONE;
            }
            return;
        }
        let mut wanted = Vec::with_capacity(count);
        each_in_windows(v, docs, |d| {
            let st = &mut self.state[d as usize];
            if *st == NOW {
                *st = DONE;
                wanted.push(d);
            }
        });
        for d in wanted {
            for (ti, ((expansions, date), looks)) in reach.iter().zip(&self.lookups).enumerate() {
                for (&(_, weight, _), look) in expansions.iter().zip(looks) {
                    if let Some(p) = look.find(d) {
                        let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                        rows.add(d, ti, weight * tf);
                    }
                }
                if date.as_ref().is_some_and(|x| x.contains(d)) {
                    rows.add(d, ti, pr.date_weight);
                }
            }
        }
    }

    /// Fills the rows of the live records of `in_scope` whose state is `state`, reading
    /// every posting of the terms reached.
    fn scan(
        &self,
        v: &View<'_>,
        reach: &[Reach],
        state: u8,
        in_scope: &impl Fn(u32) -> bool,
        rows: &mut TermRows,
    ) {
        let pr = v.index().params;
        let wanted =
            |d: u32| self.state[d as usize] == state && v.live_len(d).is_some() && in_scope(d);
        for (ti, (expansions, date)) in reach.iter().enumerate() {
            for &(t, weight, _) in expansions {
                v.index().each_posting(t, |p| {
                    if wanted(p.doc) {
                        let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                        rows.add(p.doc, ti, weight * tf);
                    }
                });
            }
            if let Some(date) = date {
                date.for_each(|d| {
                    if wanted(d) {
                        rows.add(d, ti, pr.date_weight);
                    }
                });
            }
        }
    }
}

/// Calls `f` with each record of `docs` and each live sibling within `v`'s window of it (a
/// record may come more than once).
fn each_in_windows(v: &View<'_>, docs: &[u32], mut f: impl FnMut(u32)) {
    let window = v.index().params.window;
    for &d in docs {
        f(d);
        let p = v.parent(d);
        for after in [false, true] {
            let mut n = d;
            for _ in 0..window {
                let Some(n2) = v.neighbour(n, after) else {
                    break;
                };
                if v.parent(n2) != p || v.live_len(n2).is_none() {
                    break;
                }
                f(n2);
                n = n2;
            }
        }
    }
}
