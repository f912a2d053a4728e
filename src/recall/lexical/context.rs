//! A record's context: its siblings (the neighbouring keys under the same parent, and the
//! window of records read together with it) and its parent (every record under it read
//! as one document).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::blocks::parent_in;
use super::score::{bm25, bm25_normed, idf, length_norm, Reach, Scores, TermRows};
use super::terms::TermRef;
use super::view::{NormSlot, View};
use super::{LexicalIndex, Params, Query};
use crate::calendar::year_month;

/// The parents' documents beyond what the file part records: the parents of overlay
/// documents, the lengths and document counts of parents whose documents changed since the
/// file part was written, the number of live parents and their mean length; and the
/// dates of overlay documents. Computed on first use after a change, in time proportional to
/// the changes, never to the index.
#[derive(Default)]
pub(super) struct ParentStats {
    /// Parent number of each overlay slot (`u32::MAX` for a free one).
    over_parent: Vec<u32>,
    /// Parents numbered after the file part's: held by overlay documents only.
    extra: usize,
    /// Length of each parent whose documents changed (the file part's length, less its
    /// removed documents', plus its overlay documents').
    changed_len: HashMap<u32, f64>,
    /// Number of parents with a live document.
    live: usize,
    pub(super) mean: f64,
    /// (year, month 1-12) of each overlay slot's timestamp, as [`Base::date`] for the
    /// documents.
    over_dates: Vec<Option<(i64, u32)>>,
    /// Per term asked for (numbers in both parts, and the key weight it was summed with),
    /// its weighted frequency under each parent: see [`LexicalIndex::parent_frequencies`].
    under_parents: Mutex<HashMap<ParentTfKey, Arc<ParentTf>>>,
    /// The documents of the file part' length norms, computed on first use.
    pub(super) norms: NormSlot,
    /// The documents of the file part removed, in ascending order.
    pub(super) removed: Vec<u32>,
    /// Per document of the file part, whether the live document before it in key order is
    /// the one numbered just before (see [`LexicalIndex::plain_steps`]), computed on first use.
    pub(super) plain: std::sync::OnceLock<Vec<bool>>,
    /// Where a sweep in key order finds each parent's last record and splits between two
    /// threads (see `stream`), computed on first use.
    pub(super) sweep_order: std::sync::OnceLock<super::sweep_order::SweepOrder>,
    /// The live records in key order, for sweeps of an index changed since its file part
    /// (see `key_order`), computed on first use.
    pub(super) key_order: std::sync::OnceLock<super::key_order::KeyOrder>,
    /// Records sweeps passed over unread (see `parent_bounds`).
    #[cfg(test)]
    pub(super) passed: std::sync::atomic::AtomicU64,
}

/// A term (its numbers in the file part and in the overlay) and the bits of the key weight.
type ParentTfKey = (Option<u32>, Option<u32>, u64);

/// A term's weighted frequency under each parent that holds it: (parent, frequency).
pub(super) type ParentTf = Vec<(u32, f64)>;

/// What the windows of a search are summed from.
pub(super) struct Windows<'a> {
    /// The weighted frequencies of the query terms in each record of the query's namespace
    /// that holds one.
    pub(super) tf: &'a TermRows,
    /// The number of records each query term matches.
    pub(super) df: &'a [f64],
    /// The mean record length.
    pub(super) avg: f64,
    pub(super) q: &'a Query<'a>,
}

/// How the windows of a search read the records around one: their parents, live
/// neighbours, lengths and query-term frequencies (`None` for a record that holds none).
pub(super) struct Passage<P, N, L, R> {
    pub(super) parent: P,
    pub(super) neighbour: N,
    pub(super) live_len: L,
    pub(super) row: R,
}

impl<'r, P, N, L, R> Passage<P, N, L, R>
where
    P: Fn(u32) -> u32,
    N: Fn(u32, bool) -> Option<u32>,
    L: Fn(u32) -> Option<f64>,
    R: Fn(u32) -> Option<&'r [f64]>,
{
    /// The BM25 score of live record `d`'s window (`d` with up to [`Params::window`] live
    /// siblings on each side, read as one document; windows `mean` long on average) for the
    /// query terms whose idfs are `idfs`; `None` when `d` is removed or holds no query term.
    /// `sum` is scratch space, one value per term.
    pub(super) fn window_score(
        &self,
        d: u32,
        sum: &mut [f64],
        idfs: &[f64],
        mean: f64,
        pr: &Params,
    ) -> Option<f64> {
        let mut len = (self.live_len)(d)?;
        sum.copy_from_slice((self.row)(d)?);
        let p = (self.parent)(d);
        for after in [false, true] {
            let mut n = d;
            for _ in 0..pr.window {
                let Some(n2) = (self.neighbour)(n, after) else {
                    break;
                };
                if (self.parent)(n2) != p {
                    break;
                }
                let Some(l2) = (self.live_len)(n2) else { break };
                len += l2;
                if let Some(row) = (self.row)(n2) {
                    for (a, b) in sum.iter_mut().zip(row) {
                        *a += b;
                    }
                }
                n = n2;
            }
        }
        let norm = length_norm(len, mean, pr);
        Some(
            sum.iter()
                .zip(idfs)
                .filter(|(f, _)| **f > 0.0)
                .map(|(f, i)| bm25_normed(*i, *f, norm, pr))
                .sum(),
        )
    }
}

/// Terms held by fewer documents than this are summed for each query instead of kept.
const KEEP_PARENT_TF_FROM: usize = 64;

/// The parent of an encoded key: everything before its last path segment (its namespace for
/// a one-segment path).
pub(super) fn parent_of(k: &[u8]) -> &[u8] {
    let cut = k.iter().rposition(|&b| b == 0x01 || b == 0x00).unwrap_or(0);
    &k[..cut]
}

/// A record's own score with its context: shares of its adjacent siblings' own scores
/// (`before`, `after`: zero for a neighbour under another parent) and of the best own
/// score under its parent.
#[inline]
pub(super) fn with_context(own: f64, before: f64, after: f64, best: f64, pr: &Params) -> f64 {
    own + pr.neighbour_weight * (before + after) + pr.group_weight * best
}

/// The date of a timestamp as the date field reads it: unknown unless after the epoch.
pub(super) fn date_of(timestamp: f64) -> Option<(i64, u32)> {
    (timestamp > 0.0 && timestamp.is_finite()).then(|| year_month(timestamp))
}

impl LexicalIndex {
    /// The parents' documents beyond the file part's, computed on first use after a
    /// change.
    pub(super) fn stats(&self) -> &ParentStats {
        self.parents.get_or_init(|| {
            let g = self.base.n_parents();
            // Per changed parent: (length change, document count change).
            let mut change: HashMap<u32, (f64, i64)> = HashMap::new();
            let mut removed = Vec::new();
            if self.base_live < self.base.n_docs() {
                for (d, _) in self.dead.iter().enumerate().filter(|(_, &x)| x) {
                    removed.push(d as u32);
                    let c = change.entry(self.base.parent_at(d)).or_default();
                    c.0 -= self.base.len_at(d);
                    c.1 -= 1;
                }
            }
            let mut new_parents: HashMap<&[u8], u32> = HashMap::new();
            let mut over_parent = vec![u32::MAX; self.docs.len()];
            let mut over_dates = vec![None; self.docs.len()];
            for (slot, e) in self.docs.iter().enumerate() {
                let Some(e) = e else { continue };
                let pk = parent_of(&e.key);
                let p = self.base.find_parent(pk).unwrap_or_else(|| {
                    let next = (g + new_parents.len()) as u32;
                    *new_parents.entry(pk).or_insert(next)
                });
                over_parent[slot] = p;
                over_dates[slot] = date_of(e.timestamp);
                let c = change.entry(p).or_default();
                c.0 += e.len;
                c.1 += 1;
            }
            let mut live = g;
            let mut changed_len = HashMap::with_capacity(change.len());
            for (p, (dl, dc)) in change {
                let (len, docs) = if (p as usize) < g {
                    (
                        self.base.parent_len(p as usize),
                        self.base.parent_docs(p as usize) as i64,
                    )
                } else {
                    live += 1;
                    (0.0, 0)
                };
                if docs + dc <= 0 {
                    live -= 1;
                }
                changed_len.insert(p, len + dl);
            }
            let mean = if live == 0 {
                1.0
            } else {
                (self.total_len / live as f64).max(1.0)
            };
            ParentStats {
                over_parent,
                extra: new_parents.len(),
                changed_len,
                live,
                mean,
                over_dates,
                under_parents: Mutex::default(),
                norms: NormSlot::new(),
                removed,
                plain: std::sync::OnceLock::new(),
                sweep_order: std::sync::OnceLock::new(),
                key_order: std::sync::OnceLock::new(),
                #[cfg(test)]
                passed: Default::default(),
            }
        })
    }

    /// Per document of the file part, whether the live document just before it in key order is the
    /// one of the file part numbered just before: both live, and no overlay document between them.
    /// Where it is, a step to a neighbour is a step in number (conservative: a `false` only
    /// sends the step the general way).
    pub(super) fn plain_steps(&self) -> Vec<bool> {
        let n = self.base.n_docs();
        let mut plain = vec![true; n];
        if let Some(first) = plain.first_mut() {
            *first = false;
        }
        for (i, _) in self.dead.iter().enumerate().filter(|(_, &x)| x) {
            for j in [i, i + 1] {
                if let Some(p) = plain.get_mut(j) {
                    *p = false;
                }
            }
        }
        for key in self.by_key.keys() {
            for or_equal in [true, false] {
                if let Some(p) = plain.get_mut(self.base.key_bound(key, or_equal)) {
                    *p = false;
                }
            }
        }
        plain
    }

    /// Per parent number below `g`, whether the overlay added a document under it (every
    /// parent the file part does not hold was added so).
    pub(super) fn parents_added_to(&self, g: usize) -> Vec<bool> {
        let stats = self.stats();
        let mut added: Vec<bool> = (0..g).map(|p| p >= self.base.n_parents()).collect();
        for &p in &stats.over_parent {
            if let Some(a) = added.get_mut(p as usize) {
                *a = true;
            }
        }
        added
    }

    /// The parent number of live document `d` (`u32::MAX` for a removed overlay document).
    pub(super) fn parent(&self, stats: &ParentStats, d: u32) -> u32 {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            self.base.parent_at(d)
        } else {
            stats.over_parent.get(d - n).copied().unwrap_or(u32::MAX)
        }
    }

    /// How many parent numbers there are (live or not): the size of a table by parent.
    pub(super) fn parent_numbers(&self, stats: &ParentStats) -> usize {
        self.base.n_parents() + stats.extra
    }

    /// The number of parents with a live document.
    pub(super) fn live_parents(&self, stats: &ParentStats) -> usize {
        stats.live
    }

    /// The length of parent `p`'s document.
    pub(super) fn parent_len(&self, stats: &ParentStats, p: u32) -> f64 {
        match stats.changed_len.get(&p) {
            Some(&l) => l,
            None => self.base.parent_len(p as usize),
        }
    }

    /// The date of live document `d`'s timestamp (see [`date_of`]).
    pub(super) fn date(&self, stats: &ParentStats, d: u32) -> Option<(i64, u32)> {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            self.base.date(d)
        } else {
            stats.over_dates.get(d - n).copied().flatten()
        }
    }

    /// The weighted frequency of term `t` (key occurrences weighted by
    /// [`Params::key_weight`]) under each parent that holds it, over its live postings: from
    /// the sums the file part stores when it has them, else summed from the postings. Every
    /// frequency is a whole number (so is the key weight wherever stored sums are used), so
    /// the sums are exact and the same either way, in any order. Kept with the parents' documents (so until the
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
        let out = match self.stored_parent_frequencies(t, stats) {
            Some(out) => out,
            None => self.summed_parent_frequencies(t, stats),
        };
        let out = Arc::new(out);
        if keep {
            lock().insert(key, out.clone());
        }
        out
    }

    /// [`LexicalIndex::parent_frequencies`] from the sums the file part stores, corrected
    /// for its removed documents and the overlay's: `None` when none are stored for the term
    /// or when the key weight is not a whole number (the sums are then not exact in any
    /// order).
    fn stored_parent_frequencies(&self, t: TermRef, stats: &ParentStats) -> Option<ParentTf> {
        let kw = self.params.key_weight;
        if kw.fract() != 0.0 || kw.abs() > 65_536.0 {
            return None;
        }
        let stored = self.base.parent_sums(t.base? as usize)?;
        // Exact integer sums: every frequency and key weight is a whole number.
        let mut sums: HashMap<u32, (i64, i64)> = HashMap::new();
        let mut order: Vec<u32> = Vec::new();
        for (parent, k, c) in stored {
            order.push(parent);
            sums.insert(parent, (i64::from(k), i64::from(c)));
        }
        let mut add = |parent: u32, k: i64, c: i64| {
            let s = sums.entry(parent).or_insert_with(|| {
                order.push(parent);
                (0, 0)
            });
            s.0 += k;
            s.1 += c;
        };
        for p in self.removed_postings(t) {
            add(
                self.base.parent_at(p.doc as usize),
                -i64::from(p.key_tf),
                -i64::from(p.content_tf),
            );
        }
        for p in self.over_postings(t) {
            add(
                self.parent(stats, p.doc),
                i64::from(p.key_tf),
                i64::from(p.content_tf),
            );
        }
        if self.base.damaged() {
            return None;
        }
        Some(
            order
                .into_iter()
                .filter_map(|parent| {
                    let (k, c) = sums[&parent];
                    ((k, c) != (0, 0)).then_some((parent, kw * k as f64 + c as f64))
                })
                .collect(),
        )
    }

    /// [`LexicalIndex::parent_frequencies`] summed from the term's live postings.
    pub(super) fn summed_parent_frequencies(&self, t: TermRef, stats: &ParentStats) -> ParentTf {
        let kw = self.params.key_weight;
        let mut row_of: HashMap<u32, usize> = HashMap::new();
        let mut out: Vec<(u32, f64)> = Vec::new();
        // Documents of the file part' parents from their table (the postings of removed ones are
        // skipped already); overlay documents' the general way.
        let n = self.base.n_docs();
        self.each_posting(t, |p| {
            let parent = match (p.doc as usize) < n {
                true => self.base.parent_at(p.doc as usize),
                false if self.live_len(p.doc).is_none() => return,
                false => self.parent(stats, p.doc),
            };
            let row = *row_of.entry(parent).or_insert_with(|| {
                out.push((parent, 0.0));
                out.len() - 1
            });
            out[row].1 += kw * p.key_tf as f64 + p.content_tf as f64;
        });
        out
    }

    /// The weighted frequency of each query term under each parent that holds it: per
    /// indexed term it reaches, the term's weight times its frequency under the parent
    /// ([`LexicalIndex::parent_frequencies`], an exact sum), added in the order the terms
    /// were reached; a date counts the parent's records dated then, times
    /// [`Params::date_weight`].
    pub(super) fn query_parent_tf(&self, reach: &[Reach], stats: &ParentStats) -> TermRows {
        let parents = self.parent_numbers(stats);
        let mut rows = TermRows::new(parents, reach.len());
        for (ti, (expansions, date)) in reach.iter().enumerate() {
            for &(t, w, _) in expansions {
                for &(p, f) in self.parent_frequencies(t, stats).iter() {
                    rows.add(p, ti, w * f);
                }
            }
            if let Some(dated) = date {
                // Records dated so under each parent, counted by parent number (a date can
                // match every record), the parents in the order first met.
                let mut count = vec![0u32; parents];
                let mut order = Vec::new();
                // Many records: their parents read from the column, checked once.
                let n = self.base.n_docs();
                let (n, column) = match n > 0 && dated.len() >= n / 16 {
                    true => (n, self.base.parent_column()),
                    false => (0, &[][..]),
                };
                dated.for_each(|d| {
                    let p = match (d as usize) < n {
                        true => parent_in(column, d),
                        false => self.parent(stats, d),
                    };
                    // (Every record's parent is numbered below `parents`.)
                    if let Some(c) = count.get_mut(p as usize) {
                        if *c == 0 {
                            order.push(p);
                        }
                        *c += 1;
                    }
                });
                for p in order {
                    rows.add(p, ti, self.params.date_weight * count[p as usize] as f64);
                }
            }
        }
        rows
    }

    /// Adds [`Params::window_weight`] times the BM25 score of its window to each record of
    /// `scores` in `w.tf` that passes `w.q`'s filters; of the records `only` lists, when it is
    /// given. A record's window is the record with up to [`Params::window`] live siblings on
    /// each side, read as one document.
    pub(super) fn add_windows(
        &self,
        v: &View<'_>,
        w: &Windows<'_>,
        only: Option<&[u32]>,
        scores: &mut Scores,
    ) {
        let (tf, df, q) = (w.tf, w.df, w.q);
        let pr = self.params;
        let live = self.len() as f64;
        let idfs: Vec<f64> = df.iter().map(|d| idf(live, *d)).collect();
        let mean = w.avg * (2 * pr.window + 1) as f64;
        let mut sum = vec![0.0; df.len()];
        let Scores { value, has, scored } = scores;
        // Dense rows keep no list of the records touched: those are the scored records of
        // the query's namespace, which `passes` keeps.
        let touched = match only {
            Some(docs) => docs,
            None if tf.dense => &scored[..],
            None => &tf.touched[..],
        };
        let passage = Passage {
            parent: |d| v.parent(d),
            neighbour: |d, after| v.neighbour(d, after),
            live_len: |d| v.live_len(d),
            row: |d| tf.has(d).then(|| tf.row(d)),
        };
        for &d in touched {
            if !v.passes(d, q) {
                continue;
            }
            let Some(s) = passage.window_score(d, &mut sum, &idfs, mean, &pr) else {
                continue;
            };
            if has[d as usize] {
                value[d as usize] += pr.window_weight * s;
            }
        }
    }

    /// Adds context to own scores: a share of adjacent siblings' own scores and of the best
    /// own score under the same parent. Keys are siblings when their namespace and all but
    /// the last path segment agree. Only keys that match by themselves are hits; context
    /// reorders them and never adds a key that does not contain a query term.
    pub(super) fn add_context(
        &self,
        v: &View<'_>,
        scores: &mut Scores,
        stats: &ParentStats,
        pr: Params,
    ) {
        let own = &scores.value;
        let mut best_in = vec![0.0f64; self.parent_numbers(stats)];
        for &d in &scores.scored {
            let p = v.parent(d) as usize;
            best_in[p] = best_in[p].max(own[d as usize]);
        }
        // Each key's context is summed in a fixed order (previous sibling, next sibling,
        // parent's best), from own scores only: written back once all are summed.
        let with: Vec<f64> = scores
            .scored
            .iter()
            .map(|&d| {
                if v.live_len(d).is_none() {
                    return 0.0;
                }
                let p = v.parent(d);
                let sibling_score = |n: u32| {
                    if v.parent(n) == p {
                        own[n as usize]
                    } else {
                        0.0
                    }
                };
                let before = v.neighbour(d, false).map_or(0.0, sibling_score);
                let after = v.neighbour(d, true).map_or(0.0, sibling_score);
                with_context(own[d as usize], before, after, best_in[p as usize], &pr)
            })
            .collect();
        for (&d, s) in scores.scored.iter().zip(with) {
            scores.value[d as usize] = s;
        }
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
        let n = self.live_parents(stats) as f64;
        let mut df = vec![0.0; tf.terms];
        for &p in &tf.touched {
            for (i, f) in tf.row(p).iter().enumerate() {
                if *f > 0.0 {
                    df[i] += 1.0;
                }
            }
        }
        let mut out = vec![0.0; self.parent_numbers(stats)];
        for &p in &tf.touched {
            let len = self.parent_len(stats, p);
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
