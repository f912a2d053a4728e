//! Ranking in sweeps in key order, for an index that is its file part whole (key order is
//! then number order, and every document is live). The query terms' postings, sorted by
//! record, are read a block of records at a time (see `blocks`); a record's context and
//! window come from the records read around it; what a search keeps is the size of the
//! records held, of the parents and of the hits asked for, never of the index:
//!
//! 1. the records each query term matches (its windows' idf counts them) come from its
//!    postings, counted in a bitmap when it is reached several ways;
//! 2. one sweep scores each record with its context and window once its parent's last
//!    record is read (its best own score under the parent is then known), keeping the best
//!    for feedback and for the hits, and the best score under each parent; when a parent's
//!    records spread over more than can be held, the best own scores are summed in a sweep
//!    of their own first. On two cores the sweep is split between two threads;
//! 3. once feedback has raised the parents' scores, the parents whose best record can still
//!    be a hit are swept again.
//!
//! Every score is computed as the other plans compute it, term by term in the same order
//! with the same functions, so the hits are the same to the bit.

use super::blocks::{
    first_from, Columns, From, Held, Numbers, Pieces, Reader, Scratch, Source, Term, BLOCK,
};
use super::context::{with_context, ParentStats};
use super::dates::Dated;
use super::key_order::KeyOrder;
use super::parent_bounds::BoundInput;
use super::score::{bm25_normed, idf, length_norm, Best, Reach, TermRows};
use super::sweep_order::two_threads;
use super::terms::TermRef;
use super::window_bounds::{window_ceiling, RunCeiling};
use super::{Hit, LexicalIndex, Query, Sort};

/// What the second sweep keeps of the records it sweeps: the best for feedback and for the
/// hits (record, score with its parent's, score before it), and per parent the best score
/// of its records that pass the query's filters, the first and last of them, and the best
/// own score of its records read.
struct Kept {
    for_feedback: Vec<(u32, f64, f64)>,
    hits: Vec<(u32, f64, f64)>,
    most: Vec<f64>,
    span: Vec<(u32, u32)>,
    best_in: Vec<f64>,
}

/// What the second and third sweeps score a record with: the query terms' idfs in windows,
/// the best own score under each parent, and the parents' numbers.
struct Scorer<'a> {
    idfs: Vec<f64>,
    /// Mean window length.
    mean: f64,
    /// Records' lengths, parents and documents (see `key_order`).
    cols: Columns<'a>,
    context: bool,
    windows: bool,
    /// Most a record's window can add to its score (infinite when the parameters allow no
    /// bound): see `window_bounds`.
    ceiling: f64,
}

impl Scorer<'_> {
    #[inline]
    fn parent(&self, d: u32) -> u32 {
        self.cols.parent(d)
    }

    /// The document number of record `r`.
    #[inline]
    fn doc(&self, r: u32) -> u32 {
        self.cols.doc(r)
    }
}

/// What an index's query terms match that is numbered in its records' key order apart
/// from the file part's postings (see `key_order`): per indexed term reached, in the order
/// the terms reach them, its overlay postings; per query term, the records dated as it
/// names (none when it names no date), a source per run.
struct Renumbered<'k> {
    order: &'k KeyOrder,
    overlay: Vec<Vec<u8>>,
    dated: Vec<Vec<Numbers<'k>>>,
}

impl LexicalIndex {
    /// The hits of `q` ranked in sweeps in key order (see the module documentation), for an
    /// index that is its file part whole; `reach` is what each query term reaches.
    pub(super) fn search_streamed(
        &self,
        q: &Query<'_>,
        reach: &[Reach],
        stats: &ParentStats,
        avg: f64,
    ) -> Vec<Hit> {
        let pr = self.params;
        let live = self.len() as f64;
        // No query term reaches a record: no hit.
        if reach.iter().all(|(e, date)| e.is_empty() && date.is_none()) {
            return Vec::new();
        }
        // An index changed since its file part is swept in its records' key order, numbered
        // as a whole file part numbers its documents.
        let ordered = (!self.file_part_whole()).then(|| self.records_in_key_order());
        let n = ordered.map_or(self.base.n_docs() as u32, KeyOrder::len);
        let doc = |r: u32| ordered.map_or(r, |m| m.docs.doc(r));
        let nt = reach.len();
        let context = pr.neighbour_weight > 0.0 || pr.group_weight > 0.0;
        let windows = pr.window_weight > 0.0;
        let groups = self.parent_numbers(stats);
        // Whether parents' records can be passed over (see `parent_bounds`).
        let bounded = q.sort == Sort::Relevance;
        // The lengths' and parents' columns (checked whole the first time) and the order of
        // the parents' records; beside them, the query terms' sources (postings checked as
        // they are first read) and the records each term matches (what the windows' idfs
        // count). On a large index, in two threads the first time (after it, the columns are
        // checked and the order kept).
        let columns = || {
            let cols = match ordered {
                Some(m) => m.columns(self),
                None => {
                    let (lens, parents) = self.base.len_and_parent_columns();
                    Columns::of_file(lens, parents)
                }
            };
            let order = (context || bounded)
                .then(|| (stats.sweep_order).get_or_init(|| self.sweep_order(n, groups, cols)));
            (cols, order)
        };
        // What a changed index's query terms match besides the file's postings, numbered
        // in key order (the sources below read it).
        let renumbered = ordered.map(|m| renumbered(self, reach, m));
        let postings = || {
            let (sources, terms, reached) = self.sources(reach, live, renumbered.as_ref());
            let matching = matching(&sources, &terms, n);
            (sources, terms, reached, matching)
        };
        let ((cols, order), (sources, terms, reached, matching)) =
            if two_threads(n) && stats.sweep_order.get().is_none() {
                std::thread::scope(|sc| {
                    let other = sc.spawn(columns);
                    let mine = postings();
                    match other.join() {
                        Ok(theirs) => (theirs, mine),
                        Err(e) => std::panic::resume_unwind(e),
                    }
                })
            } else {
                (columns(), postings())
            };
        let mut reader = Reader {
            sources,
            terms,
            cols,
            n,
            avg,
            pr,
            scratch: Scratch::default(),
        };
        // The best own score under each parent, summed as the sweep goes when no parent's
        // records spread over more than can be held, else in a sweep of its own first.
        let mut best_in = vec![0.0f64; if context { groups } else { 0 }];
        let mut held = Held::new(nt);
        let last = order
            .and_then(|o| o.last.as_deref())
            .filter(|l| !l.is_empty());
        let ahead = last.filter(|_| context);
        if context && order.is_some_and(|o| o.last.is_none()) {
            let mut lo = 0;
            while let Some(m) = reader.next_match(lo) {
                held.reset(m);
                reader.read(m.saturating_add(BLOCK).min(n), &mut held);
                held_best(&held, &mut best_in);
                lo = held.hi;
            }
        }
        let scorer = Scorer {
            idfs: matching.iter().map(|m| idf(live, *m)).collect(),
            mean: avg * (2 * pr.window + 1) as f64,
            cols,
            context,
            windows,
            ceiling: window_ceiling(&matching, live, &pr),
        };
        // Each parent's bound, so that the sweeps pass over parents none of whose records
        // can be a hit (when hits go by score and each parent's last record is known).
        let bounds = match (last, order) {
            (Some(_), Some(o)) if bounded => self.parent_bounds(
                reach,
                &BoundInput {
                    shortest: &o.shortest,
                    longest: &o.longest,
                    avg,
                    mean: scorer.mean,
                    window_idfs: &scorer.idfs,
                    ceiling: scorer.ceiling,
                    context,
                    windows,
                },
            ),
            _ => None,
        };
        let bounds = bounds.as_deref().zip(last);
        // The parents' scores, as the other plans compute them.
        let parent_tf = match pr.parent_weight > 0.0 {
            true => self.query_parent_tf(reach, stats),
            false => TermRows::new(0, nt),
        };
        let mut by_parent = (pr.parent_weight > 0.0 && !parent_tf.touched.is_empty())
            .then(|| self.parent_scores(&parent_tf, &vec![1.0; nt], stats));
        let feedback = by_parent.is_some()
            && pr.feedback_docs > 0
            && pr.feedback_terms > 0
            && pr.feedback_weight > 0.0;
        let with_parent = |by_parent: Option<&[f64]>, s: f64, p: u32| match by_parent {
            Some(b) => s + pr.parent_weight * b.get(p as usize).copied().unwrap_or(0.0),
            None => s,
        };
        let by_score = |a: &(u32, f64, f64), b: &(u32, f64, f64)| {
            // Records are numbered in key order.
            b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0))
        };
        let in_order = |a: &(u32, f64, f64), b: &(u32, f64, f64)| match q.sort {
            Sort::Relevance => by_score(a, b),
            Sort::Recency => self
                .timestamp_of(doc(b.0))
                .total_cmp(&self.timestamp_of(doc(a.0)))
                .then_with(|| by_score(a, b)),
        };
        // 2. Scores with context and windows, and with the parents' scores as they are
        // before feedback: the best for feedback and for the hits.
        let fb_docs = if feedback { pr.feedback_docs } else { 0 };
        let per_parent = if feedback { groups } else { 0 };
        let second = |reader: &mut Reader<'_>, mut best_in: Vec<f64>, range| {
            let mut for_feedback = Best::new(fb_docs, by_score);
            let mut hits = Best::new(q.limit, in_order);
            let mut most = vec![f64::NEG_INFINITY; per_parent];
            let mut span = vec![(u32::MAX, 0u32); per_parent];
            let mut held = Held::new(nt);
            self.sweep(
                reader,
                &mut held,
                &scorer,
                &mut best_in,
                ahead,
                bounds,
                q,
                range,
                |(d, last), p, s, exact| {
                    let with = with_parent(by_parent.as_deref(), s, p);
                    // Not above the last kept of both, by at most its score with its window,
                    // a record can be neither (its window is then not summed): records come
                    // in key order, and of equal scores the first in key order ranks first.
                    let below = |l: Option<&(u32, f64, f64)>| l.is_some_and(|l| with <= l.1);
                    let skip = !exact
                        && (fb_docs == 0 || below(for_feedback.last()))
                        && q.sort == Sort::Relevance
                        && below(hits.last());
                    if exact && with > 0.0 {
                        for_feedback.push((d, with, s));
                        hits.push((d, with, s));
                    }
                    if let (true, Some(m), Some(r)) = (
                        exact || skip,
                        most.get_mut(p as usize),
                        span.get_mut(p as usize),
                    ) {
                        *m = m.max(s);
                        r.0 = r.0.min(d);
                        r.1 = r.1.max(last);
                    }
                    !skip
                },
            );
            Kept {
                for_feedback: for_feedback.finish(),
                hits: hits.finish(),
                most,
                span,
                best_in,
            }
        };
        let split = match (ahead, order) {
            (Some(_), Some(o)) => o.split,
            _ => self.split_at(n, None, cols),
        };
        let kept = match split {
            Some(at) => {
                let mut other = reader.clone();
                let (a, b) = std::thread::scope(|sc| {
                    let first = best_in.clone();
                    let b = sc.spawn(|| second(&mut other, first, at..n));
                    let a = second(&mut reader, best_in, 0..at);
                    (a, b.join())
                });
                match b {
                    Ok(b) => merged(a, b, fb_docs, q.limit, by_score, in_order),
                    Err(e) => std::panic::resume_unwind(e),
                }
            }
            None => second(&mut reader, best_in, 0..n),
        };
        let Kept {
            for_feedback,
            hits,
            most,
            span,
            mut best_in,
        } = kept;
        let mut held = Held::new(nt);
        let mut hits = hits;
        if feedback {
            let top = for_feedback;
            let ids: Vec<u32> = top.iter().map(|t| doc(t.0)).collect();
            let score = |d: u32| top.iter().find(|t| doc(t.0) == d).map_or(0.0, |t| t.1);
            let expansion = self.feedback_terms(|_| true, &ids, score, &reached);
            if let Some(by_parent) = by_parent.as_mut().filter(|_| !expansion.is_empty()) {
                self.add_feedback(&expansion, &parent_tf.touched, by_parent, stats);
                let by_parent: &[f64] = by_parent;
                // 3. The parents raised: the hits found again among the parents whose best
                // record can still be one.
                let finals: Vec<f64> = hits
                    .iter()
                    .map(|h| with_parent(Some(by_parent), h.2, scorer.parent(h.0)))
                    .collect();
                let floor = (q.sort == Sort::Relevance
                    && hits.len() == q.limit
                    && finals.iter().all(|f| *f > 0.0))
                .then(|| finals.iter().copied().fold(f64::INFINITY, f64::min));
                // Of the hits at the floor, the last in key order: a parent whose records can
                // only tie the floor, all of them after it, holds no hit.
                let tied_last = floor.and_then(|f| {
                    (hits.iter().zip(&finals))
                        .filter(|(_, x)| **x == f)
                        .map(|(h, _)| h.0)
                        .max()
                });
                let mut spans: Vec<(u32, u32)> = (0..groups)
                    .filter(|&p| {
                        most[p] > f64::NEG_INFINITY
                            && floor.is_none_or(|f| {
                                let m = with_parent(Some(by_parent), most[p], p as u32);
                                m > f || (m == f && tied_last.is_some_and(|t| span[p].0 <= t))
                            })
                    })
                    .map(|p| span[p])
                    .collect();
                spans.sort_unstable();
                let mut merged: Vec<(u32, u32)> = Vec::with_capacity(spans.len());
                for (lo, hi) in spans {
                    match merged.last_mut() {
                        Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                        _ => merged.push((lo, hi)),
                    }
                }
                let mut again = Best::new(q.limit, in_order);
                for (lo, hi) in merged {
                    self.sweep(
                        &mut reader,
                        &mut held,
                        &scorer,
                        &mut best_in,
                        // Parents passed over in the sweep before have their best own
                        // score summed now.
                        bounds.and(ahead),
                        bounds,
                        q,
                        lo..hi + 1,
                        |(d, _), p, s, exact| {
                            let with = with_parent(Some(by_parent), s, p);
                            if exact && with > 0.0 {
                                again.push((d, with, s));
                            }
                            exact
                                || q.sort != Sort::Relevance
                                || again.last().is_none_or(|l| with > l.1)
                        },
                    );
                }
                hits = again.finish();
            }
        }
        hits.into_iter()
            .filter_map(|(d, score, _)| self.hit_of(doc(d), score))
            .collect()
    }

    /// Each query term's sources of matches (the indexed terms it reaches, then the date
    /// field), the terms, and the indexed terms reached.
    fn sources<'s>(
        &'s self,
        reach: &'s [Reach],
        live: f64,
        renumbered: Option<&'s Renumbered<'s>>,
    ) -> (Vec<Source<'s>>, Vec<Term>, Vec<TermRef>) {
        let mut sources = Vec::new();
        let mut terms = Vec::with_capacity(reach.len());
        let mut reached: Vec<TermRef> = Vec::new();
        for (ti, (expansions, date)) in reach.iter().enumerate() {
            let start = sources.len();
            for &(t, weight, df) in expansions {
                let base = self.base_postings(t);
                let pieces = match renumbered {
                    Some(r) => {
                        let removed = t.base.map(|i| self.removed_postings.sorted_of(i));
                        let removed = removed.as_deref().unwrap_or_default();
                        r.order.pieces(base, &r.overlay[reached.len()], removed)
                    }
                    None => Pieces::whole(base),
                };
                reached.push(t);
                sources.push(Source {
                    from: From::Postings {
                        pieces,
                        weight,
                        idf: idf(live, df as f64),
                    },
                    at: 0,
                });
            }
            // A source for each run of the records dated so: a record is in one, so its
            // best way is the one score it has there.
            let all = date.as_ref().map_or(0, Dated::len) as f64;
            let runs: Vec<Numbers<'s>> = match renumbered {
                Some(r) => r.dated[ti].clone(),
                None => date
                    .iter()
                    .flat_map(|d| d.runs())
                    .map(Numbers::whole)
                    .collect(),
            };
            for docs in runs.into_iter().filter(|r| r.len() > 0) {
                sources.push(Source {
                    from: From::Dated {
                        docs,
                        idf: idf(live, all),
                    },
                    at: 0,
                });
            }
            terms.push(Term {
                range: start..sources.len(),
                direct: expansions.len() == 1 && date.is_none(),
            });
        }
        (sources, terms, reached)
    }

    /// Calls `scored` with each record in `range` that holds a query term and passes `q`'s
    /// filters (twice, as `(d, d)`), its parent and its score with context and window (as
    /// the other plans compute them: own score, then context, then window), in record
    /// order; `exact` false gives the most the score can be, and `scored` says whether it
    /// could count (the window is then summed). With `ahead` (each parent's last record),
    /// `best_in` is summed as records are read, each record scored once its parent's last
    /// record is read; else it is whole already. With `bounds` (each parent's bound and
    /// last record), a parent met the first time is given as its first and last records
    /// with its bound, and passed over unread unless `scored` says it could count.
    #[allow(clippy::too_many_arguments)]
    fn sweep(
        &self,
        reader: &mut Reader<'_>,
        held: &mut Held,
        sc: &Scorer<'_>,
        best_in: &mut [f64],
        ahead: Option<&[u32]>,
        bounds: Option<(&[f64], &[u32])>,
        q: &Query<'_>,
        range: std::ops::Range<u32>,
        mut scored: impl FnMut((u32, u32), u32, f64, bool) -> bool,
    ) {
        let pr = reader.pr;
        let nt = reader.terms.len();
        let n = reader.n;
        // Records read around the ones scored: their windows' and their neighbours'.
        let reach = pr.window.max(1).min(BLOCK as usize) as u32;
        let mut sum = vec![0.0; nt];
        let filtered = q.filtered();
        let unscoped = q.namespace.is_none() && q.with_internal;
        let in_scope = |d: u32| unscoped || self.in_scope(sc.doc(d), q);
        let passes = |d: u32| !filtered || self.passes(sc.doc(d), q);
        let mut d = range.start;
        held.reset(d.saturating_sub(reach));
        let mut run = RunCeiling::new();
        // Per parent: not met yet, read, passed over.
        let (unmet, read, passed) = (0u8, 1u8, 2u8);
        let mut met = vec![unmet; bounds.map_or(0, |b| b.0.len())];
        while d < range.end {
            if d >= held.hi {
                // Past what is read: on to the next record a query term matches.
                match reader.next_match(held.hi) {
                    Some(m) if m < range.end => {
                        if m > d.saturating_add(reach) {
                            d = m;
                            held.reset(m - reach);
                        }
                    }
                    _ => break,
                }
            }
            if let Some((bounds, last)) = bounds {
                // On past the records of parents passed over.
                let mut e = d;
                while e < range.end {
                    let p = sc.parent(e);
                    let Some(m) = met.get_mut(p as usize) else {
                        break;
                    };
                    if *m == unmet {
                        let most = bounds[p as usize];
                        let l = last.get(p as usize).copied().unwrap_or(e).max(e);
                        *m = if scored((e, l), p, most, false) {
                            read
                        } else {
                            passed
                        };
                    }
                    if *m == read {
                        break;
                    }
                    e += 1;
                }
                if e > d {
                    #[cfg(test)]
                    (self.stats().passed)
                        .fetch_add(u64::from(e - d), std::sync::atomic::Ordering::Relaxed);
                    d = e;
                    if d >= held.hi {
                        held.reset(d.saturating_sub(reach));
                    }
                    continue;
                }
            }
            let mut need = d.saturating_add(reach + 1).min(n);
            if let Some(last) = ahead {
                let p = sc.parent(d) as usize;
                need = need.max(last.get(p).map_or(0, |l| l.saturating_add(1)).min(n));
            }
            while held.hi < need {
                let from = held.hi;
                reader.read(held.hi.saturating_add(BLOCK).min(n), held);
                if ahead.is_some() {
                    held_best_from(held, from, best_in);
                }
            }
            if held.hit(d) && passes(d) {
                let h = &*held;
                let p = h.parent(d);
                let own = h.own_of(d);
                let mut s = own;
                if sc.context {
                    let sibling = |m: Option<u32>| match m {
                        Some(m) if h.parent(m) == p => h.own_of(m),
                        _ => 0.0,
                    };
                    let before = sibling(d.checked_sub(1));
                    let after = sibling((d + 1 < n).then_some(d + 1));
                    let best = best_in.get(p as usize).copied().unwrap_or(0.0);
                    s = with_context(own, before, after, best, &pr);
                }
                // A window is summed only when the record, with the most its window can add,
                // could still count (`scored` says, given that bound).
                if sc.windows && in_scope(d) && {
                    if d >= run.end {
                        run.cover(h, d, &sc.idfs, sc.mean, sc.ceiling, unscoped, &pr);
                    }
                    scored((d, d), p, s + run.most, false)
                } {
                    let win = Window {
                        h,
                        reader,
                        sc,
                        d,
                        p,
                    };
                    let w = match nt {
                        1 => win.score::<1>(&in_scope, &mut sum),
                        2 => win.score::<2>(&in_scope, &mut sum),
                        3 => win.score::<3>(&in_scope, &mut sum),
                        4 => win.score::<4>(&in_scope, &mut sum),
                        5 => win.score::<5>(&in_scope, &mut sum),
                        6 => win.score::<6>(&in_scope, &mut sum),
                        _ => win.score::<0>(&in_scope, &mut sum),
                    };
                    s += pr.window_weight * w;
                    scored((d, d), p, s, true);
                } else if !(sc.windows && in_scope(d)) {
                    scored((d, d), p, s, true);
                }
            }
            d += 1;
            held.forget_before(d.saturating_sub(reach));
        }
    }
}

/// Records a term's largest way may miss for the term's count to be made from it and those
/// records alone.
const FEW_MISSED: usize = 4096;

/// The number of records each query term matches: its postings' when it is reached
/// one way, else those of any of its ways (from its largest way when that misses few
/// records, else counted in a bitmap).
pub(super) fn matching(sources: &[Source<'_>], terms: &[Term], n: u32) -> Vec<f64> {
    let mut bits: Vec<u64> = Vec::new();
    terms
        .iter()
        .map(|t| {
            let sources = &sources[t.range.clone()];
            if t.direct {
                // Ascending records: all of them are the file part's when the last is.
                let s = &sources[0];
                if s.len() == 0 || s.doc(s.len() - 1) < n {
                    return s.len() as f64;
                }
                return (0..s.len()).filter(|&i| s.doc(i) < n).count() as f64;
            }
            // A way that matches every record (ascending, distinct, the last below `n`):
            // the term matches them all.
            let all = |s: &Source<'_>| s.len() == n as usize && s.doc(s.len() - 1) < n;
            if n > 0 && sources.iter().any(all) {
                return n as f64;
            }
            // A way that misses few records (as a word of nearly every key does): it and
            // those of the few another way holds, found without reading the other ways.
            if let Some(big) = sources.iter().max_by_key(|s| s.len()) {
                let len = big.len();
                let few = len > 0 && len <= n as usize && n as usize - len <= FEW_MISSED;
                if few && big.doc(len - 1) < n {
                    let mut missed = Vec::new();
                    big.missed(0, len, 0, n, &mut missed);
                    // Each other way walked along the missed records (ascending).
                    let mut held = vec![false; missed.len()];
                    for s in sources.iter().filter(|s| !std::ptr::eq(*s, big)) {
                        let mut at = 0;
                        for (h, &r) in held.iter_mut().zip(&missed) {
                            at = first_from(at, s.len(), r, |i| s.doc(i));
                            *h |= at < s.len() && s.doc(at) == r;
                        }
                    }
                    return (len + held.iter().filter(|h| **h).count()) as f64;
                }
            }
            bits.clear();
            bits.resize((n as usize).div_ceil(64), 0);
            for s in sources {
                s.each_doc(|d| {
                    if d < n {
                        bits[d as usize / 64] |= 1 << (d % 64);
                    }
                });
            }
            bits.iter().map(|w| w.count_ones() as f64).sum()
        })
        .collect()
}

/// Record `d`'s window (under parent `p`): the record and its siblings within
/// `window` of it on either side.
struct Window<'h, 'r, 's> {
    h: &'h Held,
    reader: &'r Reader<'r>,
    sc: &'s Scorer<'s>,
    d: u32,
    p: u32,
}

impl Window<'_, '_, '_> {
    /// The window's BM25 score for the query terms: their frequencies in its records that
    /// hold one and are in scope, over its length. Lengths and rows are added in one order,
    /// the record's first, then its siblings before it, nearest first, then those after
    /// it. `K` is the number of terms (0: `sum`'s length), so that for the usual few the
    /// sums are kept in registers.
    #[inline(always)]
    fn score<const K: usize>(&self, in_scope: &impl Fn(u32) -> bool, sum: &mut [f64]) -> f64 {
        let (h, reader, sc, d, p) = (self.h, self.reader, self.sc, self.d, self.p);
        let pr = &reader.pr;
        let k = if K == 0 { sum.len() } else { K };
        let sum = &mut sum[..k];
        sum.copy_from_slice(&h.row(d)[..k]);
        let mut len = h.len(d);
        for after in [false, true] {
            let mut m = d;
            for _ in 0..pr.window {
                m = match after {
                    true if m + 1 < reader.n => m + 1,
                    false if m > 0 => m - 1,
                    _ => break,
                };
                if h.parent(m) != p {
                    break;
                }
                len += h.len(m);
                if h.hit(m) && in_scope(m) {
                    for (a, r) in sum.iter_mut().zip(&h.row(m)[..k]) {
                        *a += r;
                    }
                }
            }
        }
        let norm = length_norm(len, sc.mean, pr);
        sum.iter()
            .zip(&sc.idfs[..k])
            .filter(|(f, _)| **f > 0.0)
            .map(|(f, i)| bm25_normed(*i, *f, norm, pr))
            .sum()
    }
}

/// What two sweeps kept, as one sweep of both their ranges keeps it.
fn merged<F, H>(a: Kept, b: Kept, fb_docs: usize, limit: usize, by_score: F, in_order: H) -> Kept
where
    F: Fn(&(u32, f64, f64), &(u32, f64, f64)) -> std::cmp::Ordering,
    H: Fn(&(u32, f64, f64), &(u32, f64, f64)) -> std::cmp::Ordering,
{
    fn best<O>(
        x: Vec<(u32, f64, f64)>,
        y: Vec<(u32, f64, f64)>,
        n: usize,
        order: O,
    ) -> Vec<(u32, f64, f64)>
    where
        O: Fn(&(u32, f64, f64), &(u32, f64, f64)) -> std::cmp::Ordering,
    {
        let mut b = Best::new(n, order);
        x.into_iter().chain(y).for_each(|t| b.push(t));
        b.finish()
    }
    let max = |x: Vec<f64>, y: Vec<f64>| x.iter().zip(&y).map(|(a, b)| a.max(*b)).collect();
    Kept {
        for_feedback: best(a.for_feedback, b.for_feedback, fb_docs, by_score),
        hits: best(a.hits, b.hits, limit, in_order),
        most: max(a.most, b.most),
        span: (a.span.iter().zip(&b.span))
            .map(|(x, y)| (x.0.min(y.0), x.1.max(y.1)))
            .collect(),
        best_in: max(a.best_in, b.best_in),
    }
}

/// Keeps in `best_in` the best own score under each parent of the held records.
fn held_best(held: &Held, best_in: &mut [f64]) {
    held_best_from(held, held.lo, best_in);
}

/// [`held_best`] for the held records from `from` on.
fn held_best_from(held: &Held, from: u32, best_in: &mut [f64]) {
    let at = (from - held.lo) as usize;
    let (hit, own, parent) = (&held.hit[at..], &held.own[at..], &held.parent[at..]);
    for ((&hit, &own), &p) in hit.iter().zip(own).zip(parent) {
        if let Some(b) = best_in.get_mut(p as usize).filter(|_| hit) {
            *b = b.max(own);
        }
    }
}

/// What `reach` matches apart from the file part's postings, numbered in the key order
/// `ordered`.
fn renumbered<'k>(ix: &LexicalIndex, reach: &'k [Reach], ordered: &'k KeyOrder) -> Renumbered<'k> {
    Renumbered {
        order: ordered,
        overlay: reach
            .iter()
            .flat_map(|(expansions, _)| expansions)
            .map(|&(t, _, _)| ordered.overlay_postings(ix.over_postings(t)))
            .collect(),
        dated: reach
            .iter()
            .map(|(_, date)| date.as_ref().map_or(Vec::new(), |d| ordered.dated(d)))
            .collect(),
    }
}
