//! Bounds on the scores of each parent's records that read none of their postings, so that
//! a sweep (`stream`) passes over a parent none of whose records can be a hit. A query
//! term's largest and smallest frequencies under a parent (stored in the index file for
//! common terms, counted from the few postings of rare ones) and the parent's shortest
//! record bound a record's own score, its context and its window. Each bound is computed
//! with the operations of what it bounds, in the same order; rounding is monotone in each,
//! so the bounds hold to the bit, and where a parent's records hold the query terms alike
//! the bound is its best record's score itself (records that tie the last hit come after
//! it in key order and cannot be hits either).

use std::collections::HashMap;

use super::blocks::parent_in;
use super::context::with_context;
use super::file_part::ParentRow;
use super::score::{bm25_bound, idf, length_norm, Reach};
use super::terms::TermRef;
use super::window_bounds::{saturated, Deferred, RUN};
use super::LexicalIndex;

/// A query term's frequencies (weighted as the index weighs the key path) under a parent:
/// the largest, the smallest among the records that hold it, and the smallest among all
/// the parent's records (0 unless every one holds it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spread {
    pub(super) high: f64,
    pub(super) low: f64,
    pub(super) low_all: f64,
}

/// What the bounds are computed from besides the query terms.
pub(super) struct BoundInput<'a> {
    /// The length of each parent's shortest record.
    pub(super) shortest: &'a [f64],
    /// The parents' column (4 bytes a record).
    pub(super) parents: &'a [u8],
    /// The mean record length, and the mean window length.
    pub(super) avg: f64,
    pub(super) mean: f64,
    /// The query terms' idfs in windows.
    pub(super) window_idfs: &'a [f64],
    /// Most any window adds (see `window_bounds`).
    pub(super) ceiling: f64,
    pub(super) context: bool,
    pub(super) windows: bool,
}

/// One way a query term matches: an indexed term (with its weight and idf), or the
/// records dated as the term names.
enum Way<'a> {
    Term(TermRef, f64, f64),
    Dated(&'a [u32], f64),
}

impl LexicalIndex {
    /// Most the score of any record under each parent can be, with its context and window
    /// and before its parent's score, for the query terms `reach` reaches (0 where no
    /// query term is held); `None` when the parameters allow no bound.
    pub(super) fn parent_bounds(&self, reach: &[Reach], b: &BoundInput<'_>) -> Option<Vec<f64>> {
        let pr = self.params;
        // (A record's neighbours and its parent's best add to its score only with weights of
        // at least 0.)
        let negative = |w: f64| w.is_nan() || w < 0.0;
        if !Deferred::applies(&pr) || negative(pr.neighbour_weight) || negative(pr.group_weight) {
            return None;
        }
        let g = b.shortest.len();
        let live = self.len() as f64;
        let mut own = vec![0.0f64; g];
        let mut window = vec![0.0f64; g];
        // Per parent the term being bounded touches: its best weight, and its rows'
        // largest and smallest sums over its ways.
        let mut best = vec![0.0f64; g];
        let mut rows = vec![(0.0f64, 0.0f64); g];
        let mut seen = vec![false; g];
        let mut touched: Vec<u32> = Vec::new();
        let mut spreads: Vec<(u32, Spread)> = Vec::new();
        let norm = |p: usize| length_norm(b.shortest[p], b.avg, &pr);
        for (ti, (expansions, date)) in reach.iter().enumerate() {
            let ways = (expansions.iter())
                .map(|&(t, w, df)| Way::Term(t, w, idf(live, df as f64)))
                .chain(
                    date.iter()
                        .map(|d| Way::Dated(d, idf(live, d.len() as f64))),
                );
            for way in ways {
                let (weight, idf) = match way {
                    Way::Term(t, w, i) => {
                        self.spreads(t, b.parents, &mut spreads);
                        (w, i)
                    }
                    Way::Dated(docs, i) => {
                        self.dated_spreads(docs, b.parents, &mut spreads);
                        (1.0, i)
                    }
                };
                for &(p, s) in &spreads {
                    let at = p as usize;
                    if at >= g {
                        return None;
                    }
                    if !seen[at] {
                        seen[at] = true;
                        touched.push(p);
                    }
                    // As the reader scores a match: the weight times its BM25 weight, the
                    // best of the term's ways (at least 0); its row adds the weighted
                    // frequencies.
                    let score = weight * bm25_bound(idf, s.high, s.low, norm(at), &pr);
                    if score > best[at] || score.is_nan() {
                        best[at] = score;
                    }
                    let r = &mut rows[at];
                    r.0 += weight * s.high;
                    r.1 += weight * s.low_all;
                }
            }
            for p in touched.drain(..) {
                let at = p as usize;
                own[at] += best[at];
                if b.windows {
                    // (A parent's records share its namespace: either all of them count in
                    // its windows, or none has a window.)
                    let (high, low) = rows[at];
                    window[at] += self.window_weight_bound(
                        high,
                        low,
                        b.shortest[at],
                        b.window_idfs[ti],
                        b.mean,
                        self.base.parent_docs(at),
                    );
                }
                (seen[at], best[at], rows[at]) = (false, 0.0, (0.0, 0.0));
            }
        }
        Some(
            own.iter()
                .zip(&window)
                .map(|(&o, &w)| {
                    let s = match b.context {
                        true => with_context(o, o, o, o, &pr),
                        false => o,
                    };
                    match b.windows {
                        true => s + b.ceiling.min(pr.window_weight * w),
                        false => s,
                    }
                })
                .collect(),
        )
    }

    /// Most one query term adds to the BM25 weight of a window under a parent of `docs`
    /// records, the shortest `shortest` long, the term's rows there being between `low`
    /// and `high`: as `RunCeiling` bounds it, over every number of records a window holds.
    fn window_weight_bound(
        &self,
        high: f64,
        low: f64,
        shortest: f64,
        idf: f64,
        mean: f64,
        docs: u32,
    ) -> f64 {
        let pr = &self.params;
        let negative = |x: f64| x.is_nan() || x < 0.0;
        if pr.window > RUN as usize || negative(shortest) || negative(low) || negative(idf) {
            return f64::INFINITY;
        }
        // (As the window adds a term: only where its frequency is above 0.)
        if high.is_nan() || high <= 0.0 {
            return 0.0;
        }
        let most = (2 * pr.window + 1).min(docs.max(1) as usize);
        let (mut h, mut l, mut len) = (high, low, shortest);
        let mut top = 0.0f64;
        for m in 1..=most {
            if m > 1 {
                len += shortest;
                h += high;
                l += low;
            }
            let w = bm25_bound(idf, h, l, length_norm(len, mean, pr), pr).min(saturated(idf, pr));
            top = top.max(w);
        }
        top
    }

    /// Term `t`'s [`Spread`] under each parent that holds it, into `out` (cleared first):
    /// as the file part stores it for a common term, else from its postings.
    fn spreads(&self, t: TermRef, parents: &[u8], out: &mut Vec<(u32, Spread)>) {
        out.clear();
        let kw = self.params.key_weight;
        let mut push = |p: u32, r: ParentRow| {
            let tf = |k: u16, c: u16| kw * k as f64 + c as f64;
            let low = tf(r.key_least, r.content_least);
            let all = r.docs >= self.base.parent_docs(p as usize);
            let spread = Spread {
                high: tf(r.key_most, r.content_most),
                low,
                low_all: if all { low } else { 0.0 },
            };
            out.push((p, spread));
        };
        if let Some(rows) = t.base.and_then(|i| self.base.parent_rows(i as usize)) {
            rows.for_each(|(p, r)| push(p, r));
            return;
        }
        let mut by: HashMap<u32, ParentRow> = HashMap::new();
        for p in self.base_postings(t).iter() {
            let r = by.entry(parent_in(parents, p.doc)).or_insert(ParentRow {
                key_least: u16::MAX,
                content_least: u16::MAX,
                ..ParentRow::default()
            });
            r.key_most = r.key_most.max(p.key_tf);
            r.content_most = r.content_most.max(p.content_tf);
            r.key_least = r.key_least.min(p.key_tf);
            r.content_least = r.content_least.min(p.content_tf);
            r.docs += 1;
        }
        by.into_iter().for_each(|(p, r)| push(p, r));
    }

    /// The [`Spread`] of a date under each parent with a record dated then (`docs`), into
    /// `out` (cleared first): every such record holds it at the date field's weight.
    fn dated_spreads(&self, docs: &[u32], parents: &[u8], out: &mut Vec<(u32, Spread)>) {
        out.clear();
        let dw = self.params.date_weight;
        let mut count = vec![0u32; self.base.n_parents()];
        for &d in docs {
            if let Some(c) = count.get_mut(parent_in(parents, d) as usize) {
                *c += 1;
            }
        }
        for (p, &c) in count.iter().enumerate().filter(|(_, c)| **c > 0) {
            let all = c >= self.base.parent_docs(p);
            let spread = Spread {
                high: dw,
                low: dw,
                low_all: if all { dw } else { 0.0 },
            };
            out.push((p as u32, spread));
        }
    }
}
