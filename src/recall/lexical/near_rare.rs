//! A search focused on the records near its rarer words. When a query holds a word most
//! records hold (a dense term) beside rarer ones, reading every posting of the dense term
//! costs in proportion to the index. Its weight in a record's score is small (its idf is),
//! so the best hits are found among the records that hold a rarer word and the records
//! around them; the dense term is looked up in those records alone, and its weight under
//! each parent comes from the sums the index stores.
//!
//! The answer is the full search's, to the bit, or none (the full search then runs):
//! - every score computed here is computed as the full search computes it, term by term in
//!   the same order, with the same functions;
//! - a record outside the focus holds no rarer word and has none in its window or next to
//!   it, so its score is bounded by what the dense terms can add at most (idf times k1 + 1
//!   per term, the limit of a BM25 weight), the best own score under its parent, and its
//!   parent's score, which is known exactly;
//! - the hits (and the records feedback reads) are the focus's best only when the last of
//!   them scores above every such bound; otherwise there is no answer here.

use std::collections::{HashMap, HashSet};

use super::context::{with_context, ParentStats, Passage};
use super::dates::Dated;
use super::doc_rows::Lookup;
use super::score::{best_n, bm25_normed, idf, length_norm, Reach, TermRows};
use super::terms::TermRef;
use super::window_bounds::Deferred;
use super::{Hit, LexicalIndex, Query, Sort};

/// Relative margin over a bound that covers the rounding of the scores it bounds.
const MARGIN: f64 = 1e-9;

/// When a search is focused: query terms reaching at least `dense_from` postings are dense,
/// and the others together may reach at most `sparse_most` (beyond that, looking the dense
/// terms up record by record costs more than reading them).
#[derive(Debug, Clone, Copy)]
pub(super) struct NearRareFrom {
    pub(super) dense_from: usize,
    pub(super) sparse_most: usize,
}

impl NearRareFrom {
    /// The thresholds for an index of `docs` document numbers.
    pub(super) fn for_docs(docs: usize) -> Self {
        NearRareFrom {
            dense_from: (docs / 16).max(4096),
            sparse_most: docs / 64,
        }
    }
}

/// One record of the focus as the full search would score it.
struct Eval {
    /// Own score (zero when it holds no query term).
    own: f64,
    /// Whether it holds a query term (the full search scores it).
    scored: bool,
    /// Weighted frequency of each query term, when it holds one in the query's namespace.
    row: Option<Vec<f64>>,
}

impl LexicalIndex {
    /// The hits of `q` found from the records near its rarer words, or `None` when the
    /// search does not qualify (see the module documentation) or cannot prove them.
    pub(super) fn search_near_rare(
        &self,
        q: &Query<'_>,
        reach: &[Reach],
        stats: &ParentStats,
        avg: f64,
        from: NearRareFrom,
    ) -> Option<Vec<Hit>> {
        let pr = self.params;
        let weights = [
            pr.neighbour_weight,
            pr.group_weight,
            pr.window_weight,
            pr.parent_weight,
            pr.feedback_weight,
            pr.date_weight,
        ];
        if q.sort != Sort::Relevance
            || !Deferred::applies(&pr)
            || weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
        {
            return None;
        }
        let size =
            |r: &Reach| r.0.iter().map(|e| e.2).sum::<usize>() + r.1.as_ref().map_or(0, Dated::len);
        let dense: Vec<bool> = reach.iter().map(|r| size(r) >= from.dense_from).collect();
        let sparse: usize = reach
            .iter()
            .zip(&dense)
            .filter(|(_, d)| !**d)
            .map(|(r, _)| size(r))
            .sum();
        let dated_dense = reach.iter().zip(&dense).any(|(r, d)| *d && r.1.is_some());
        if !dense.contains(&true) || dated_dense || sparse > from.sparse_most {
            return None;
        }
        let live = self.len() as f64;
        // The records holding a rarer word, and per query term the records it matches.
        // The rarer terms first: with no record holding one, no hit can be proven here.
        let mut rare: HashSet<u32> = HashSet::new();
        let mut matching = vec![0.0; reach.len()];
        for (((expansions, date), _), m) in (reach.iter().zip(&dense))
            .zip(&mut matching)
            .filter(|((_, d), _)| !**d)
        {
            let mut docs: HashSet<u32> = HashSet::new();
            for &(t, _, _) in expansions {
                self.each_posting(t, |p| {
                    docs.insert(p.doc);
                });
            }
            if let Some(date) = date {
                date.for_each(|d| {
                    docs.insert(d);
                });
            }
            *m = docs.len() as f64;
            rare.extend(docs);
        }
        if rare.is_empty() {
            return None;
        }
        for (((expansions, _), _), m) in (reach.iter().zip(&dense))
            .zip(&mut matching)
            .filter(|((_, d), _)| **d)
        {
            if expansions.len() == 1 {
                *m = expansions[0].2 as f64;
                continue;
            }
            // A way that every live record holds: the term matches them all.
            if expansions.iter().any(|e| e.2 == self.len()) {
                *m = live;
                continue;
            }
            // Else counted in a bitmap: a dense term reached several ways.
            let mut bits = vec![0u64; (self.base.n_docs() + self.docs.len()).div_ceil(64)];
            for &(t, _, _) in expansions {
                self.each_posting(t, |p| bits[p.doc as usize / 64] |= 1 << (p.doc % 64));
            }
            *m = bits.iter().map(|w| w.count_ones() as f64).sum();
        }
        let lookups: Vec<Vec<Lookup<'_>>> = reach
            .iter()
            .map(|(expansions, _)| {
                expansions
                    .iter()
                    .map(|&(t, _, _)| self.lookup_of(t))
                    .collect()
            })
            .collect();
        // The focus: the rare records and those within reach of their windows and
        // neighbours (`near`), and the records around those (whose own scores and term
        // frequencies their context and windows read).
        let radius = pr.window.max(1);
        let near = self.around(stats, rare.iter().copied(), radius);
        let evaluated = self.around(stats, near.iter().copied(), radius);
        let ns_ok = |d: u32| self.in_scope(d, q);
        let mut evals: HashMap<u32, Eval> = HashMap::with_capacity(evaluated.len());
        for &d in &evaluated {
            let norm = length_norm(self.live_len(d)?, avg, &pr);
            evals.insert(d, self.evaluate(d, norm, reach, &lookups, live, ns_ok(d)));
        }
        // Most a record holding only dense terms scores by its own words, and most its
        // window adds.
        let ceiling = |i: usize| idf(live, matching[i]) * (pr.k1 + 1.0);
        let own_most: f64 = (reach.iter().zip(&dense))
            .filter(|(_, d)| **d)
            .map(|((expansions, _), _)| {
                expansions
                    .iter()
                    .map(|&(_, w, df)| w.max(0.0) * idf(live, df as f64) * (pr.k1 + 1.0))
                    .fold(0.0, f64::max)
            })
            .sum::<f64>()
            * (1.0 + MARGIN);
        let window_most: f64 = (0..reach.len())
            .filter(|&i| dense[i])
            .map(ceiling)
            .sum::<f64>()
            * (1.0 + MARGIN);
        // The best own score under each parent the focus reaches: exact when it is above
        // what any record outside the focus can score.
        let mut best_in: HashMap<u32, f64> = HashMap::new();
        for (&d, e) in &evals {
            let b = best_in.entry(self.parent(stats, d)).or_insert(0.0);
            *b = b.max(e.own);
        }
        let context = pr.neighbour_weight > 0.0 || pr.group_weight > 0.0;
        let own_of = |d: u32| evals.get(&d).map_or(0.0, |e| e.own);
        // Own scores with context, and windows, of the records that can be hits.
        let idfs: Vec<f64> = (0..reach.len()).map(|i| idf(live, matching[i])).collect();
        let mean = avg * (2 * pr.window + 1) as f64;
        let passage = Passage {
            parent: |d| self.parent(stats, d),
            neighbour: |d, after| self.neighbour_across(d, after),
            live_len: |d| self.live_len(d),
            row: |d| evals.get(&d).and_then(|e| e.row.as_deref()),
        };
        let mut sum = vec![0.0; reach.len()];
        let mut pre: Vec<(u32, f64)> = Vec::new();
        for &d in &near {
            let e = &evals[&d];
            if !e.scored || !self.passes(d, q) {
                continue;
            }
            let p = self.parent(stats, d);
            let mut value = e.own;
            if context {
                let best = best_in[&p];
                if best <= own_most {
                    return None;
                }
                let sibling = |n: Option<u32>| {
                    n.filter(|&n| self.parent(stats, n) == p)
                        .map_or(0.0, own_of)
                };
                let before = sibling(self.neighbour_across(d, false));
                let after = sibling(self.neighbour_across(d, true));
                value = with_context(value, before, after, best, &pr);
            }
            if pr.window_weight > 0.0 {
                if let Some(s) = passage.window_score(d, &mut sum, &idfs, mean, &pr) {
                    value += pr.window_weight * s;
                }
            }
            pre.push((d, value));
        }
        // Parents' scores, exact for every parent.
        let parent_tf = match pr.parent_weight > 0.0 {
            true => self.query_parent_tf(reach, stats),
            false => TermRows::new(0, reach.len()),
        };
        let mut by_parent = (pr.parent_weight > 0.0 && !parent_tf.touched.is_empty())
            .then(|| self.parent_scores(&parent_tf, &vec![1.0; reach.len()], stats));
        let parents = self.parent_numbers(stats);
        // Most a record outside the focus scores, with its parent's score `bp`.
        let outside_most = |by_parent: Option<&Vec<f64>>| {
            let base = own_most
                + pr.neighbour_weight * (own_most + own_most)
                + pr.window_weight * window_most;
            (0..parents)
                .map(|p| {
                    let best = best_in
                        .get(&(p as u32))
                        .copied()
                        .unwrap_or(0.0)
                        .max(own_most);
                    let bp = by_parent.map_or(0.0, |b| b[p]);
                    base + pr.group_weight * best + pr.parent_weight * bp
                })
                .fold(base + pr.group_weight * own_most, f64::max)
                * (1.0 + MARGIN)
        };
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1).then_with(|| self.key_cmp(a.0, b.0))
        };
        let with_parent = |by_parent: Option<&Vec<f64>>| -> Vec<(u32, f64)> {
            pre.iter()
                .map(|&(d, s)| match by_parent {
                    Some(b) => (d, s + pr.parent_weight * b[self.parent(stats, d) as usize]),
                    None => (d, s),
                })
                .filter(|&(_, s)| s > 0.0)
                .collect()
        };
        // Whether the `n` best of `scored` are the `n` best of all records.
        let proven = |scored: &[(u32, f64)], n: usize, most: f64| {
            best_n(scored.iter().copied(), n, order)
                .get(n.wrapping_sub(1))
                .is_some_and(|last| last.1 > most)
        };
        if let Some(bp) = by_parent.as_mut() {
            if pr.feedback_docs > 0 && pr.feedback_terms > 0 && pr.feedback_weight > 0.0 {
                let first = with_parent(Some(bp));
                if !proven(&first, pr.feedback_docs, outside_most(Some(bp))) {
                    return None;
                }
                let among: Vec<u32> = first.iter().map(|f| f.0).collect();
                let score: HashMap<u32, f64> = first.iter().copied().collect();
                let reached: Vec<TermRef> =
                    reach.iter().flat_map(|r| r.0.iter().map(|e| e.0)).collect();
                let expansion =
                    self.feedback_terms(|d| self.passes(d, q), &among, |d| score[&d], &reached);
                self.add_feedback(&expansion, &parent_tf.touched, bp, stats);
            }
        }
        let last = with_parent(by_parent.as_ref());
        if !proven(&last, q.limit, outside_most(by_parent.as_ref())) {
            return None;
        }
        let hits = best_n(last.into_iter(), q.limit, order);
        Some(
            hits.into_iter()
                .filter_map(|(d, s)| self.hit_of(d, s))
                .collect(),
        )
    }

    /// The live records within `radius` steps of `from` in key order under the same
    /// parent, `from` included, in ascending number.
    fn around(
        &self,
        stats: &ParentStats,
        from: impl Iterator<Item = u32>,
        radius: usize,
    ) -> Vec<u32> {
        let mut out: HashSet<u32> = HashSet::new();
        for d in from {
            out.insert(d);
            let p = self.parent(stats, d);
            for after in [false, true] {
                let mut n = d;
                for _ in 0..radius {
                    match self.neighbour_across(n, after) {
                        Some(n2) if self.parent(stats, n2) == p => {
                            out.insert(n2);
                            n = n2;
                        }
                        _ => break,
                    }
                }
            }
        }
        let mut out: Vec<u32> = out.into_iter().collect();
        out.sort_unstable();
        out
    }

    /// Record `d` (whose length norm is `norm`) scored as the full search scores it: term
    /// by term in query order; a term reached one way adds its weight, a term reached
    /// several ways its best.
    fn evaluate(
        &self,
        d: u32,
        norm: f64,
        reach: &[Reach],
        lookups: &[Vec<Lookup<'_>>],
        live: f64,
        in_scope: bool,
    ) -> Eval {
        let pr = self.params;
        let mut e = Eval {
            own: 0.0,
            scored: false,
            row: None,
        };
        let terms = reach.len();
        let add_row = |e: &mut Eval, ti: usize, f: f64| {
            if in_scope {
                e.row.get_or_insert_with(|| vec![0.0; terms])[ti] += f;
            }
        };
        for (ti, ((expansions, date), looks)) in reach.iter().zip(lookups).enumerate() {
            let direct = expansions.len() == 1 && date.is_none();
            let (mut best, mut touched) = (0.0f64, false);
            for (&(_, weight, df), look) in expansions.iter().zip(looks) {
                let Some(p) = look.find(d) else { continue };
                let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                let s = weight * bm25_normed(idf(live, df as f64), tf, norm, &pr);
                if direct {
                    e.own += if s > 0.0 { s } else { 0.0 };
                } else if s > best {
                    best = s;
                }
                touched = true;
                add_row(&mut e, ti, weight * tf);
            }
            if let Some(dated) = date.as_ref().filter(|x| x.contains(d)) {
                let s = bm25_normed(idf(live, dated.len() as f64), pr.date_weight, norm, &pr);
                if s > best {
                    best = s;
                }
                touched = true;
                add_row(&mut e, ti, pr.date_weight);
            }
            if touched && !direct {
                e.own += best;
            }
            e.scored |= touched;
        }
        e
    }
}
