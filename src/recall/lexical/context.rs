//! A record's context: its siblings (the neighbouring keys under the same parent, and the
//! window of records read together with it) and its parent (every record under it read
//! as one document).

use std::collections::HashMap;

use super::score::{bm25, idf, Scores, TermRows};
use super::{LexicalIndex, Params, Query};
use crate::calendar::year_month;

/// The parents' documents: per document number its parent's number, per parent the length
/// of its document, their mean; and per document number, the date of its timestamp.
#[derive(Default)]
pub(super) struct ParentStats {
    /// Parent number of each document (`u32::MAX` for a removed one).
    pub(super) parent: Vec<u32>,
    /// Length of each parent's document (the sum of its children's lengths).
    pub(super) len: Vec<f64>,
    pub(super) mean: f64,
    /// (year, month 1-12) of each document's timestamp; `None` for a removed document or a
    /// timestamp that is not after the epoch (unknown).
    pub(super) dates: Vec<Option<(i64, u32)>>,
}

/// The parent of an encoded key: everything before its last path segment (its namespace for
/// a one-segment path).
fn parent_of(k: &[u8]) -> &[u8] {
    let cut = k.iter().rposition(|&b| b == 0x01 || b == 0x00).unwrap_or(0);
    &k[..cut]
}

impl LexicalIndex {
    /// The parents' documents and the documents' dates, computed on first use after a change.
    pub(super) fn stats(&self) -> &ParentStats {
        self.parents.get_or_init(|| {
            let all = self.base.n_docs() + self.docs.len();
            let mut parent = vec![u32::MAX; all];
            let mut len: Vec<f64> = Vec::new();
            let mut dates = Vec::with_capacity(all);
            let mut numbers: HashMap<&[u8], u32> = HashMap::new();
            // Frozen documents come in key order, so siblings are neighbours: only a change
            // of parent needs the map.
            let mut last: Option<(&[u8], u32)> = None;
            for (d, slot) in parent.iter_mut().enumerate() {
                let e = self.doc(d as u32);
                dates.push(
                    e.as_ref()
                        .filter(|e| e.timestamp > 0.0 && e.timestamp.is_finite())
                        .map(|e| year_month(e.timestamp)),
                );
                let Some(e) = e else { continue };
                let pk = parent_of(e.key);
                let p = match last {
                    Some((k, p)) if k == pk => p,
                    _ => *numbers.entry(pk).or_insert_with(|| {
                        len.push(0.0);
                        (len.len() - 1) as u32
                    }),
                };
                last = Some((pk, p));
                *slot = p;
                len[p as usize] += e.len;
            }
            let mean = if len.is_empty() {
                1.0
            } else {
                (self.total_len / len.len() as f64).max(1.0)
            };
            ParentStats {
                parent,
                len,
                mean,
                dates,
            }
        })
    }

    /// BM25 scores of the windows of the records in `tf` that pass `q`'s filters (`tf`: the
    /// weighted frequencies of the query terms in each record of the query's namespace that
    /// holds one; `df`: the number of records each term matches): each record with up to
    /// [`Params::window`] live siblings on each side, read as one document.
    pub(super) fn window_scores(
        &self,
        tf: &TermRows,
        df: &[f64],
        avg: f64,
        stats: &ParentStats,
        q: &Query<'_>,
    ) -> Vec<(u32, f64)> {
        let pr = self.params;
        let live = self.len() as f64;
        let idfs: Vec<f64> = df.iter().map(|d| idf(live, *d)).collect();
        let mean = avg * (2 * pr.window + 1) as f64;
        let mut out = Vec::with_capacity(tf.touched.len());
        let mut sum = vec![0.0; df.len()];
        for &d in &tf.touched {
            let Some(mut len) = self.live_len(d).filter(|_| self.passes(d, q)) else {
                continue;
            };
            let p = stats.parent[d as usize];
            sum.copy_from_slice(tf.row(d));
            for after in [false, true] {
                let (mut k, mut n) = (self.key_of(d), d);
                for _ in 0..pr.window {
                    let Some((k2, n2)) = self.neighbour(n, k, after) else {
                        break;
                    };
                    if stats.parent[n2 as usize] != p {
                        break;
                    }
                    let Some(l2) = self.live_len(n2) else { break };
                    len += l2;
                    if tf.has(n2) {
                        for (a, b) in sum.iter_mut().zip(tf.row(n2)) {
                            *a += b;
                        }
                    }
                    (k, n) = (k2, n2);
                }
            }
            let s: f64 = sum
                .iter()
                .zip(&idfs)
                .filter(|(f, _)| **f > 0.0)
                .map(|(f, i)| bm25(*i, *f, len, mean, &pr))
                .sum();
            out.push((d, s));
        }
        out
    }

    /// Adds context to own scores: a share of adjacent siblings' own scores and of the best
    /// own score under the same parent. Keys are siblings when their namespace and all but
    /// the last path segment agree. Only keys that match by themselves are hits; context
    /// reorders them and never adds a key that does not contain a query term.
    pub(super) fn with_context(&self, own: &Scores, stats: &ParentStats, pr: Params) -> Scores {
        let mut best_in = vec![0.0f64; stats.len.len()];
        for &d in &own.scored {
            let p = stats.parent[d as usize] as usize;
            best_in[p] = best_in[p].max(own.value[d as usize]);
        }
        // Each key's context is summed in a fixed order (previous sibling, next sibling,
        // parent's best).
        let mut out = Scores::new(own.value.len());
        for &d in &own.scored {
            if self.live_len(d).is_none() {
                continue;
            }
            let key = self.key_of(d);
            let p = stats.parent[d as usize];
            let sibling_score = |(_, n): (&[u8], u32)| {
                if stats.parent[n as usize] == p {
                    own.value[n as usize]
                } else {
                    0.0
                }
            };
            let before = self.neighbour(d, key, false).map_or(0.0, sibling_score);
            let after = self.neighbour(d, key, true).map_or(0.0, sibling_score);
            let s = own.value[d as usize];
            out.set(
                d,
                s + pr.neighbour_weight * (before + after) + pr.group_weight * best_in[p as usize],
            );
        }
        out
    }

    /// BM25 scores of the parents' documents (every record under a parent as one text) for
    /// the terms whose frequencies under each touched parent `tf` holds, each term weighted
    /// by its `weights` entry; by parent number (zero for a parent not touched).
    pub(super) fn parent_scores(
        &self,
        tf: &TermRows,
        weights: &[f64],
        stats: &ParentStats,
    ) -> Vec<f64> {
        let n = stats.len.len() as f64;
        let mut df = vec![0.0; tf.terms];
        for &p in &tf.touched {
            for (i, f) in tf.row(p).iter().enumerate() {
                if *f > 0.0 {
                    df[i] += 1.0;
                }
            }
        }
        let mut out = vec![0.0; stats.len.len()];
        for &p in &tf.touched {
            let len = stats.len[p as usize];
            out[p as usize] = tf
                .row(p)
                .iter()
                .zip(&df)
                .zip(weights)
                .filter(|((f, _), _)| **f > 0.0)
                .map(|((f, d), w)| w * bm25(idf(n, *d), *f, len, stats.mean, &self.params))
                .sum();
        }
        out
    }
}
