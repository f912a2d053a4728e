//! Windows summed only where they can change the answer. A record's window adds at most a
//! ceiling fixed by its parent: each query term its parent holds adds at most idf·(k1+1),
//! the limit of a BM25 weight. A record whose score, with that ceiling added, stays below
//! the `n`-th best score without windows cannot be among the `n` best, so its window is
//! not summed. Floating-point addition and multiplication round monotonically, so the
//! bounds hold for the scores as computed: the hits are those of summing every window, to
//! the bit.
//!
//! A sweep (`stream`) bounds the windows of a run of records more closely, from what the
//! records their windows reach hold (see [`RunCeiling`]), so that records whose score ties
//! the `n`-th best, or falls a little short of it, are not summed either.

use super::blocks::Held;
use super::score::{bm25_bound, idf, length_norm, Best, Scores, TermRows};
use super::view::View;
use super::{LexicalIndex, Params, Query};

/// Relative margin over idf·(k1+1) that covers the rounding of a computed BM25 weight.
const ROUNDING_MARGIN: f64 = 1e-9;

/// Most one BM25 weight of a term of inverse document frequency `idf` can be, as computed
/// (its saturated weight, with a margin for rounding).
pub(super) fn saturated(idf: f64, pr: &Params) -> f64 {
    idf * (pr.k1 + 1.0) * (1.0 + ROUNDING_MARGIN)
}

/// Most any record's window can add to its score, for query terms matching `df` records
/// each of `live`: every term at its saturated weight (infinite when the parameters allow
/// no bound).
pub(super) fn window_ceiling(df: &[f64], live: f64, pr: &Params) -> f64 {
    if !(Deferred::applies(pr) && pr.window_weight.is_finite()) {
        return f64::INFINITY;
    }
    let most: f64 = df.iter().map(|d| saturated(idf(live, *d), pr)).sum();
    pr.window_weight * most * (1.0 + ROUNDING_MARGIN)
}

/// The windows of a search still to be added, and how much each can add.
pub(super) struct Deferred {
    /// Most the window of a record under each parent adds to its score, by parent number.
    ceiling: Vec<f64>,
    /// Records whose window is added.
    done: Vec<bool>,
}

impl Deferred {
    /// Whether windows can be deferred under `pr` (the search defers them only when they
    /// and the parents' scores are weighted at all): the bounds need a BM25 weight that
    /// saturates.
    pub(super) fn applies(pr: &Params) -> bool {
        // A negative key weight could make a record's length, and so its length norm,
        // negative: a BM25 weight would then pass idf·(k1+1).
        // Weights of terms of at least 0 keep every frequency at least 0.
        let weight = |w: f64| w >= 0.0 && w.is_finite();
        pr.k1 >= 0.0
            && (0.0..=1.0).contains(&pr.b)
            && weight(pr.key_weight)
            && weight(pr.prefix_weight)
            && weight(pr.fuzzy_weight)
            && weight(pr.date_weight)
    }

    /// The ceilings for a search over `docs` document numbers whose query terms match
    /// `df` records each, from `parent_tf`, the terms' frequencies under each parent.
    pub(super) fn new(
        ix: &LexicalIndex,
        parent_tf: &TermRows,
        df: &[f64],
        docs: usize,
        parents: usize,
    ) -> Self {
        let pr = &ix.params;
        let live = ix.len() as f64;
        let most: Vec<f64> = df.iter().map(|d| saturated(idf(live, *d), pr)).collect();
        let mut ceiling = vec![0.0; parents];
        for &p in &parent_tf.touched {
            let w: f64 = parent_tf
                .row(p)
                .iter()
                .zip(&most)
                .filter(|(f, _)| **f > 0.0)
                .map(|(_, m)| *m)
                .sum();
            ceiling[p as usize] = pr.window_weight * w;
        }
        Deferred {
            ceiling,
            done: vec![false; docs],
        }
    }

    /// The records of `scores` that pass `q` and could be among the `n` best by their score
    /// plus `extra` of their parent (all of them when `n` is `None`; the `n` best are among
    /// them, by their scores once their windows are added), and those of them whose window
    /// is still to add (now counted as added: the caller adds them, see
    /// [`LexicalIndex::add_windows`]).
    pub(super) fn settle(
        &mut self,
        v: &View<'_>,
        q: &Query<'_>,
        scores: &Scores,
        extra: impl Fn(u32) -> f64,
        n: Option<usize>,
    ) -> (Vec<u32>, Vec<u32>) {
        let value = &scores.value;
        // Most a record's score can be once its window is added, computed alike in both
        // passes below.
        let most = |d: u32, p: u32| {
            let (now, ceiling, extra) = (value[d as usize], self.ceiling[p as usize], extra(p));
            match self.done[d as usize] {
                true => now + extra,
                false => now + ceiling + extra,
            }
        };
        // The `n`-th best of the scores without the windows still to add is a floor under
        // the `n`-th best final score: windows only add. One pass keeps the records whose
        // score with the ceiling reaches the floor of the records seen so far.
        let mut best = Best::new(n.unwrap_or(0), |a: &f64, b: &f64| b.total_cmp(a));
        let mut could: Vec<u32> = Vec::with_capacity(scores.scored.len());
        for &d in &scores.scored {
            if !v.passes(d, q) {
                continue;
            }
            let p = v.parent(d);
            if n.is_some() && best.last().is_some_and(|f| most(d, p) < *f) {
                continue;
            }
            could.push(d);
            let least = value[d as usize] + extra(p);
            if least > 0.0 {
                best.push(least);
            }
        }
        let floor = n.and_then(|n| best.finish().get(n.wrapping_sub(1)).copied());
        if let Some(f) = floor {
            could.retain(|&d| {
                let m = most(d, v.parent(d));
                m >= f || m.is_nan()
            });
        }
        let mut pick = Vec::with_capacity(could.len());
        for &d in &could {
            if !self.done[d as usize] {
                self.done[d as usize] = true;
                pick.push(d);
            }
        }
        (could, pick)
    }
}

/// Records one [`RunCeiling`] covers.
pub(super) const RUN: u32 = 256;

/// Most the window of any record in a run of records can add to its score, from what the
/// records its windows reach hold: each query term's largest and smallest weighted
/// frequency among them, and the shortest length. A window of `m` records sums at most `m`
/// times the largest frequency of each term and at least `m` times the smallest and the
/// shortest length, in the order the window adds them; the bound is the largest over every
/// `m` a window can hold, and never more than the ceiling of the saturated weights.
pub(super) struct RunCeiling {
    /// The first record past the run covered.
    pub(super) end: u32,
    /// Most a window in the run adds, weighted.
    pub(super) most: f64,
    high: Vec<f64>,
    low: Vec<f64>,
    sums: Vec<(f64, f64)>,
}

impl RunCeiling {
    pub(super) fn new() -> Self {
        RunCeiling {
            end: 0,
            most: f64::INFINITY,
            high: Vec::new(),
            low: Vec::new(),
            sums: Vec::new(),
        }
    }

    /// Covers the run of records from `d` on, as far as `held` holds their windows'
    /// records. `idfs` are the query terms', `mean` the mean window length, `ceiling` the
    /// most any window adds; `in_scope_all` says every record counts in windows (else a
    /// term's least frequency is taken as 0: a record out of scope adds none).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cover(
        &mut self,
        held: &Held,
        d: u32,
        idfs: &[f64],
        mean: f64,
        ceiling: f64,
        in_scope_all: bool,
        pr: &Params,
    ) {
        let w = pr.window.min(RUN as usize) as u32;
        self.end = d
            .saturating_add(RUN)
            .min(held.hi.saturating_sub(w))
            .max(d + 1);
        self.most = ceiling;
        // (Windows wider than a run are bounded by the ceiling alone.)
        if !ceiling.is_finite() || pr.window > RUN as usize {
            return;
        }
        let (lo, hi) = (
            d.saturating_sub(w).max(held.lo),
            self.end.saturating_add(w).min(held.hi),
        );
        let k = idfs.len();
        self.high.clear();
        self.high.resize(k, 0.0);
        self.low.clear();
        self.low.resize(k, f64::INFINITY);
        let mut shortest = f64::INFINITY;
        // (Plain comparisons: frequencies are finite, see `Deferred::applies`.)
        for m in lo..hi {
            for ((h, l), &r) in self.high.iter_mut().zip(&mut self.low).zip(held.row(m)) {
                *h = if r > *h { r } else { *h };
                *l = if r < *l { r } else { *l };
            }
            let len = held.len(m);
            shortest = if len < shortest { len } else { shortest };
        }
        if !in_scope_all {
            self.low.fill(0.0);
        }
        // The bound needs frequencies, lengths and idfs of at least 0.
        // (NaN counts as negative.)
        let negative = |x: &f64| x.is_nan() || *x < 0.0;
        if negative(&shortest) || self.low.iter().any(negative) || idfs.iter().any(negative) {
            return;
        }
        self.sums.clear();
        self.sums
            .extend(self.high.iter().zip(&self.low).map(|(h, l)| (*h, *l)));
        let mut len = shortest;
        let mut best = 0.0f64;
        for m in 1..=2 * w + 1 {
            if m > 1 {
                len += shortest;
                for ((s, h), l) in self.sums.iter_mut().zip(&self.high).zip(&self.low) {
                    s.0 += h;
                    s.1 += l;
                }
            }
            let norm = length_norm(len, mean, pr);
            let sum = (self.sums.iter().zip(idfs))
                .filter(|((high, _), _)| *high > 0.0)
                .map(|((high, low), i)| {
                    bm25_bound(*i, *high, *low, norm, pr).min(saturated(*i, pr))
                })
                .fold(0.0, |a, b| a + b);
            best = best.max(sum);
        }
        self.most = ceiling.min(pr.window_weight * best);
    }
}
