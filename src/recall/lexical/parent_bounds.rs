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
use super::dates::Dated;
use super::file_part::ParentRow;
use super::score::{bm25_bound, bm25_normed, idf, length_norm, Reach};
use super::terms::TermRef;
use super::window_bounds::{saturated, Deferred, RUN};
use super::LexicalIndex;

/// A query term's frequencies (weighted as the index weighs the key path) under a parent:
/// the largest and the smallest among the records that hold it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spread {
    pub(super) high: f64,
    pub(super) low: f64,
    /// The records that hold it, and whether that is every record of the parent.
    pub(super) holders: u32,
    pub(super) all: bool,
}

/// What the bounds are computed from besides the query terms.
pub(super) struct BoundInput<'a> {
    /// The length of each parent's shortest record, and of its longest.
    pub(super) shortest: &'a [f64],
    pub(super) longest: &'a [f64],
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

/// Least, relative to a parent's bound, by which a record whose neighbour holds a rarer
/// query term must score below the bound that takes its neighbours to hold the common
/// terms only: far above any rounding of the sums that make a score.
const CONTEXT_MARGIN: f64 = 1e-9;

/// One way a query term matches: an indexed term (with its weight and idf), or the
/// records dated as the term names.
enum Way<'a> {
    Term(TermRef, f64, f64),
    Dated(&'a Dated<'a>, f64),
}

/// What the query term being bounded holds under one parent, over its ways.
#[derive(Clone, Copy)]
struct TermUnder {
    /// Most its weight in a record's own score can be, and in a record that holds none of
    /// its ways some records lack (0 when every way is one).
    best: f64,
    best_common: f64,
    /// Its rows' largest sum, and their smallest over every record.
    high: f64,
    low_all: f64,
    /// Records that hold its rarer ways (see [`Own`]), counted once a way.
    rarer_holders: u32,
}

impl TermUnder {
    const NONE: TermUnder = TermUnder {
        best: 0.0,
        best_common: 0.0,
        high: 0.0,
        low_all: 0.0,
        rarer_holders: 0,
    };
}

/// A way of the term being bounded that some records of a parent lack: the parent, the
/// most and least weight it gives a record that holds it, and the records that do.
type Rarer = (u32, f64, f64, u32);

/// What bounds the own scores of one parent's records: the most any can be, the most a
/// record can be that holds none of the rarer ways (those some records lack and that can
/// weigh more than a term's common ways), the least by which a record that holds one
/// weighs more (infinite when there is none); `single` says each query term's rarer ways
/// are held by one record at most.
#[derive(Clone, Copy)]
struct Own {
    most: f64,
    common: f64,
    least_rarer: f64,
    single: bool,
}

impl LexicalIndex {
    /// Most the score of any record under each parent can be, with its context and window
    /// and before its parent's score, for the query terms `reach` reaches (0 where no
    /// query term is held; infinite for a parent whose documents changed since the file
    /// part was written); `None` when the parameters allow no bound.
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
        let mut own = vec![
            Own {
                most: 0.0,
                common: 0.0,
                least_rarer: f64::INFINITY,
                single: true,
            };
            g
        ];
        let mut window = vec![0.0f64; g];
        let mut under = vec![TermUnder::NONE; g];
        let mut rarer: Vec<Rarer> = Vec::new();
        let mut seen = vec![false; g];
        let mut touched: Vec<u32> = Vec::new();
        let mut spreads: Vec<(u32, Spread)> = Vec::new();
        let norm = |len: &[f64], p: usize| length_norm(len[p], b.avg, &pr);
        // The file part's documents' parents (what the stored entries count by). An index
        // held in memory alone has no file part: every parent changed, none is bounded.
        if self.base.n_docs() == 0 {
            return None;
        }
        let parents = self.base.parent_column();
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
                        self.spreads(t, parents, &mut spreads);
                        (w, i)
                    }
                    Way::Dated(docs, i) => {
                        self.dated_spreads(docs, parents, &mut spreads);
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
                    let u = &mut under[at];
                    let most = weight * bm25_bound(idf, s.high, s.low, norm(b.shortest, at), &pr);
                    let most = if most.is_nan() { f64::INFINITY } else { most };
                    u.best = u.best.max(most);
                    if s.all {
                        u.best_common = u.best_common.max(most);
                    } else {
                        let least = weight * bm25_normed(idf, s.low, norm(b.longest, at), &pr);
                        rarer.push((p, most, least, s.holders));
                    }
                    u.high += weight * s.high;
                    u.low_all += weight * if s.all { s.low } else { 0.0 };
                }
            }
            // The rarer ways that can weigh more than the term's common ones: how many
            // records hold them, and by how much they weigh more at least.
            for &(p, most, least, n) in &rarer {
                let (o, u) = (&mut own[p as usize], &mut under[p as usize]);
                let common = u.best_common;
                if most > common {
                    u.rarer_holders = u.rarer_holders.saturating_add(n);
                    o.single &= u.rarer_holders <= 1;
                    let more = least - common;
                    o.least_rarer = o.least_rarer.min(if more.is_nan() { 0.0 } else { more });
                }
            }
            rarer.clear();
            for p in touched.drain(..) {
                let at = p as usize;
                let u = std::mem::replace(&mut under[at], TermUnder::NONE);
                seen[at] = false;
                let o = &mut own[at];
                o.most += u.best;
                o.common += u.best_common;
                if b.windows {
                    // (A parent's records share its namespace: either all of them count in
                    // its windows, or none has a window.)
                    window[at] += self.window_weight_bound(
                        u.high,
                        u.low_all,
                        b.shortest[at],
                        b.window_idfs[ti],
                        b.mean,
                        self.base.parent_docs(at),
                    );
                }
            }
        }
        // What the file part says of a parent with documents added since (in the overlay)
        // does not bound it: its records are read. A parent with documents only removed
        // keeps its bound: what the file says of it (each term's highest and lowest
        // frequencies, how many records hold it, how many records there are) takes in
        // more records than are left, and its records' lengths are the live ones'.
        let added = self.parents_added_to(g);
        Some(
            (own.iter().zip(&window).enumerate())
                .map(|(p, (o, &w))| {
                    if added[p] {
                        return f64::INFINITY;
                    }
                    let s = match b.context {
                        true => self.with_context_bound(o),
                        false => o.most,
                    };
                    match b.windows {
                        true => s + b.ceiling.min(pr.window_weight * w),
                        false => s,
                    }
                })
                .collect(),
        )
    }

    /// Most a record's own score with its context can be under a parent whose own scores
    /// `o` bounds. Its neighbours' own scores are at most `o.most` as its own is; but where
    /// each query term's rarer ways are held by one record at most, and the neighbours'
    /// weight is below 1, a record whose neighbour holds such a way scores less than if it
    /// held the way itself (by far more than rounding, which is checked), so the
    /// neighbours can be bounded by `o.common`, and the bound is the best record's score
    /// itself where one record holds the rarer ways.
    fn with_context_bound(&self, o: &Own) -> f64 {
        let pr = &self.params;
        let slack = (1.0 - pr.neighbour_weight) * o.least_rarer;
        let common_neighbours = o.single
            && (o.least_rarer.is_infinite()
                || (pr.neighbour_weight < 1.0 && slack >= CONTEXT_MARGIN * o.most));
        let n = if common_neighbours { o.common } else { o.most };
        with_context(o.most, n, n, o.most, pr)
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
            let spread = Spread {
                high: tf(r.key_most, r.content_most),
                low: tf(r.key_least, r.content_least),
                holders: r.docs,
                all: r.docs >= self.base.parent_docs(p as usize),
            };
            out.push((p, spread));
        };
        if let Some(rows) = t.base.and_then(|i| self.base.parent_rows(i as usize)) {
            rows.for_each(|(p, r)| push(p, r));
            return;
        }
        let mut by: HashMap<u32, ParentRow> = HashMap::new();
        for p in self.base_postings(t).iter() {
            // (Only the sums can pass a u32, and they are not used here.)
            let _ = (by.entry(parent_in(parents, p.doc)))
                .or_insert(ParentRow::NONE)
                .add(&p);
        }
        by.into_iter().for_each(|(p, r)| push(p, r));
    }

    /// The [`Spread`] of a date under each parent with a record dated then (`docs`), into
    /// `out` (cleared first): every such record holds it at the date field's weight.
    fn dated_spreads(&self, docs: &Dated<'_>, parents: &[u8], out: &mut Vec<(u32, Spread)>) {
        out.clear();
        let dw = self.params.date_weight;
        let mut count = vec![0u32; self.base.n_parents()];
        // (The overlay's documents are under parents that changed.)
        let n = self.base.n_docs() as u32;
        docs.for_each(|d| {
            if let Some(c) = count
                .get_mut(parent_in(parents, d) as usize)
                .filter(|_| d < n)
            {
                *c += 1;
            }
        });
        for (p, &c) in count.iter().enumerate().filter(|(_, c)| **c > 0) {
            let spread = Spread {
                high: dw,
                low: dw,
                holders: c,
                all: c >= self.base.parent_docs(p),
            };
            out.push((p as u32, spread));
        }
    }
}
