//! Windows summed only where they can change the answer. A record's window adds at most a
//! ceiling fixed by its parent: each query term its parent holds adds at most idf·(k1+1),
//! the limit of a BM25 weight. A record whose score, with that ceiling added, stays below
//! the `n`-th best score without windows cannot be among the `n` best, so its window is
//! not summed. Floating-point addition and multiplication round monotonically, so the
//! bounds hold for the scores as computed: the hits are those of summing every window, to
//! the bit.

use super::score::{idf, Best, Scores, TermRows};
use super::view::View;
use super::{LexicalIndex, Params, Query};

/// Relative margin over idf·(k1+1) that covers the rounding of a computed BM25 weight.
const ROUNDING_MARGIN: f64 = 1e-9;

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
        pr.k1 >= 0.0
            && (0.0..=1.0).contains(&pr.b)
            && pr.key_weight >= 0.0
            && pr.key_weight.is_finite()
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
        let most: Vec<f64> = df
            .iter()
            .map(|d| idf(live, *d) * (pr.k1 + 1.0) * (1.0 + ROUNDING_MARGIN))
            .collect();
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
