//! A record's context: its siblings (the neighbouring keys under the same parent, and the
//! window of records read together with it) and its parent (every record under it read
//! as one document).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::score::{bm25, idf, Scores, TermRows};
use super::terms::TermRef;
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
    /// The live documents in key order.
    pub(super) order: Vec<u32>,
    /// Per document number, its place in `order` (`u32::MAX` for a removed one).
    pub(super) rank: Vec<u32>,
    /// Per term asked for (numbers in both parts, and the key weight it was summed with),
    /// its weighted frequency under each parent: see [`LexicalIndex::parent_frequencies`].
    under_parents: Mutex<HashMap<ParentTfKey, Arc<ParentTf>>>,
}

/// A term (its numbers in the frozen part and in the overlay) and the bits of the key weight.
type ParentTfKey = (Option<u32>, Option<u32>, u64);

/// A term's weighted frequency under each parent that holds it: (parent, frequency).
pub(super) type ParentTf = Vec<(u32, f64)>;

/// Terms held by fewer documents than this are summed for each query instead of kept.
const KEEP_PARENT_TF_FROM: usize = 64;

impl ParentStats {
    /// The live document just before live document `d` in key order (`after`: just after).
    pub(super) fn neighbour(&self, d: u32, after: bool) -> Option<u32> {
        let r = *self.rank.get(d as usize)?;
        if r == u32::MAX {
            return None;
        }
        let i = if after {
            r.checked_add(1)?
        } else {
            r.checked_sub(1)?
        };
        self.order.get(i as usize).copied()
    }
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
            let order = self.live_in_key_order();
            let mut rank = vec![u32::MAX; all];
            for (i, &d) in order.iter().enumerate() {
                rank[d as usize] = i as u32;
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
                order,
                rank,
                under_parents: Mutex::default(),
            }
        })
    }

    /// The weighted frequency of term `t` (key occurrences weighted by
    /// [`Params::key_weight`]) under each parent that holds it, in the order its live postings
    /// first reach each parent, each summed in posting order: what adding every posting to a
    /// fresh row per parent gives, to the bit. Kept with the parents' documents (so until the
    /// index changes) for terms many documents hold, as feedback adds the same common terms
    /// to query after query.
    pub(super) fn parent_frequencies(
        &self,
        t: TermRef,
        stats: &ParentStats,
    ) -> Arc<Vec<(u32, f64)>> {
        let kw = self.params.key_weight;
        let key = (t.base, t.over, kw.to_bits());
        let keep = self.df(t) >= KEEP_PARENT_TF_FROM;
        let lock = || {
            stats
                .under_parents
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        if keep {
            if let Some(v) = lock().get(&key) {
                return v.clone();
            }
        }
        let mut row_of = vec![u32::MAX; stats.len.len()];
        let mut out: Vec<(u32, f64)> = Vec::new();
        self.each_posting(t, &mut |p| {
            if self.live_len(p.doc).is_none() {
                return;
            }
            let parent = stats.parent[p.doc as usize];
            let row = &mut row_of[parent as usize];
            if *row == u32::MAX {
                *row = out.len() as u32;
                out.push((parent, 0.0));
            }
            out[*row as usize].1 += kw * p.key_tf as f64 + p.content_tf as f64;
        });
        let out = Arc::new(out);
        if keep {
            lock().insert(key, out.clone());
        }
        out
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
                let mut n = d;
                for _ in 0..pr.window {
                    let Some(n2) = stats.neighbour(n, after) else {
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
                    n = n2;
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
            let p = stats.parent[d as usize];
            let sibling_score = |n: u32| {
                if stats.parent[n as usize] == p {
                    own.value[n as usize]
                } else {
                    0.0
                }
            };
            let before = stats.neighbour(d, false).map_or(0.0, sibling_score);
            let after = stats.neighbour(d, true).map_or(0.0, sibling_score);
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
