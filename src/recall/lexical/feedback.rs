//! Pseudo-relevance feedback: expansion terms taken from the best hits' contents.

use std::collections::BTreeMap;

use super::context::ParentStats;
use super::score::{best_n, idf, TermRows};
use super::terms::TermRef;
use super::LexicalIndex;

impl LexicalIndex {
    /// Adds to the parents' scores `by_parent` of the parents `touched` (those the query's
    /// words reach) the scores of their documents for the feedback `expansion` terms, each
    /// weighted as it says.
    pub(super) fn add_feedback(
        &self,
        expansion: &[(TermRef, f64)],
        touched: &[u32],
        by_parent: &mut [f64],
        stats: &ParentStats,
    ) {
        if expansion.is_empty() {
            return;
        }
        let mut tf = TermRows::new(self.parent_numbers(stats), expansion.len());
        for (i, &(t, _)) in expansion.iter().enumerate() {
            for &(p, f) in self.parent_frequencies(t, stats).iter() {
                tf.add(p, i, f);
            }
        }
        let weights: Vec<f64> = expansion.iter().map(|e| e.1).collect();
        let more = self.parent_scores(&tf, &weights, stats);
        for &p in touched {
            by_parent[p as usize] += more[p as usize];
        }
    }

    /// Pseudo-relevance feedback: the expansion terms, with their weights, of the best
    /// [`super::Params::feedback_docs`] of the `scored` records that pass the query's filters
    /// (`passes`) by `score`;
    /// never a term the query reached itself (`reached`) or one that only one record holds.
    /// A record's terms are read from its content, which the index holds.
    pub(super) fn feedback_terms(
        &self,
        passes: impl Fn(u32) -> bool,
        scored: &[u32],
        score: impl Fn(u32) -> f64,
        reached: &[TermRef],
    ) -> Vec<(TermRef, f64)> {
        let pr = self.params;
        // Ties by key, a total order: feedback depends neither on the order documents were
        // scored in nor on how they are numbered.
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1).then_with(|| self.key_cmp(a.0, b.0))
        };
        let top = best_n(
            scored
                .iter()
                .filter(|&&d| passes(d))
                .map(|&d| (d, score(d)))
                .filter(|&(_, s)| s > 0.0),
            pr.feedback_docs,
            order,
        );
        let total: f64 = top.iter().map(|t| t.1).sum();
        if top.is_empty() || total <= 0.0 {
            return Vec::new();
        }
        let mut weight: BTreeMap<String, f64> = BTreeMap::new();
        for &(d, s) in &top {
            let Some(e) = self.doc(d) else { continue };
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            for t in self.tokenizer.terms(e.content) {
                *tf.entry(t).or_insert(0) += 1;
            }
            for (t, n) in tf {
                *weight.entry(t).or_insert(0.0) += (s / total) * n as f64 / e.len.max(1.0);
            }
        }
        let live = self.len() as f64;
        let same = |a: TermRef, b: TermRef| a.base == b.base && a.over == b.over;
        let mut cand: Vec<(TermRef, String, f64)> = weight
            .into_iter()
            .filter_map(|(name, w)| {
                let r = self.lookup(&name)?;
                let df = self.df(r);
                (df > 1 && !reached.iter().any(|&q| same(q, r)))
                    .then(|| (r, name, w * idf(live, df as f64)))
            })
            .collect();
        // Ties by name, for the same reason.
        cand.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
        cand.truncate(pr.feedback_terms);
        let max = cand.first().map_or(1.0, |c| c.2);
        cand.into_iter()
            .map(|(r, _, w)| (r, pr.feedback_weight * w / max))
            .collect()
    }
}
