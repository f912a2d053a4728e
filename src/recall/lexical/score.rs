//! Ranking a query: BM25F own scores of the records that hold its words, context from
//! siblings and parents, feedback, and the selection of the best hits.

use std::cmp::Ordering;

use super::context::Windows;
use super::dates::Dated;
use super::doc_rows::{Fill, LazyRows};
use super::explain::Marks;
use super::near_rare::NearRareFrom;
use super::terms::TermRef;
use super::view::View;
use super::window_bounds::Deferred;
use super::{Hit, LexicalIndex, Params, Query, Sort};

/// The BM25 weight of a term occurring `tf` times in a document `len` long, where documents
/// are `avg` long on average.
pub(super) fn bm25(idf: f64, tf: f64, len: f64, avg: f64, p: &Params) -> f64 {
    bm25_normed(idf, tf, length_norm(len, avg, p), p)
}

/// The length part of [`bm25`] for a document `len` long.
#[inline]
pub(super) fn length_norm(len: f64, avg: f64, p: &Params) -> f64 {
    p.k1 * (1.0 - p.b + p.b * len / avg)
}

/// [`bm25`] with the document's [`length_norm`] given.
#[inline]
pub(super) fn bm25_normed(idf: f64, tf: f64, norm: f64, p: &Params) -> f64 {
    idf * tf * (p.k1 + 1.0) / (tf + norm)
}

/// Most [`bm25_normed`] gives for a frequency between `low` and `high` (both at least 0)
/// and a norm of at least `norm`, as computed: the same operations in the same order, the
/// frequency above the line at its most and below at its least. Rounding is monotone in
/// each operation, so the bound holds to the bit and is the weight itself when `low`,
/// `high` and the frequency are one.
#[inline]
pub(super) fn bm25_bound(idf: f64, high: f64, low: f64, norm: f64, p: &Params) -> f64 {
    idf * high * (p.k1 + 1.0) / (low + norm)
}

/// Inverse document frequency of a term found in `df` of `n` documents.
pub(super) fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The `n` first of `items` in `order` (a total order on them), in that order: what
/// sorting them all and keeping `n` gives, in one pass that keeps at most a few times `n`.
pub(super) fn best_n<T: Copy>(
    items: impl Iterator<Item = T>,
    n: usize,
    order: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    let mut best = Best::new(n, order);
    for x in items {
        best.push(x);
    }
    best.finish()
}

/// The `n` first in `order` of the items pushed, kept in one pass (see [`best_n`]).
pub(super) struct Best<T, F> {
    n: usize,
    kept: Vec<T>,
    /// The last of the `n` first seen so far, once more than `n` were seen: nothing that
    /// does not come before it can be among the `n` first.
    last: Option<T>,
    order: F,
}

impl<T: Copy, F: Fn(&T, &T) -> Ordering> Best<T, F> {
    pub(super) fn new(n: usize, order: F) -> Self {
        Best {
            n,
            kept: Vec::new(),
            last: None,
            order,
        }
    }

    /// The `n`-th first of the items pushed so far, once `n` were pushed and then some:
    /// what the `n`-th first of all can only come before or equal.
    pub(super) fn last(&self) -> Option<&T> {
        self.last.as_ref()
    }

    /// Keeps `x` if it can be among the `n` first. Most items pushed in a long pass cannot:
    /// that test is inlined where items are pushed, the keeping is not.
    #[inline(always)]
    pub(super) fn push(&mut self, x: T) {
        let out = match &self.last {
            Some(l) => (self.order)(&x, l) != Ordering::Less,
            None => self.n == 0,
        };
        if !out {
            self.keep(x);
        }
    }

    #[inline(never)]
    fn keep(&mut self, x: T) {
        self.kept.push(x);
        if self.kept.len() == self.n.saturating_mul(2).max(256) {
            self.cut();
            self.last = Some(self.kept[self.n - 1]);
        }
    }

    fn cut(&mut self) {
        if self.kept.len() > self.n {
            self.kept.select_nth_unstable_by(self.n - 1, &self.order);
            self.kept.truncate(self.n);
        }
    }

    /// The `n` first, in order.
    pub(super) fn finish(mut self) -> Vec<T> {
        if self.n == 0 {
            return Vec::new();
        }
        self.cut();
        self.kept.sort_unstable_by(&self.order);
        self.kept
    }
}

/// Scores by document number, with the list of documents that have one.
pub(super) struct Scores {
    pub(super) value: Vec<f64>,
    pub(super) has: Vec<bool>,
    pub(super) scored: Vec<u32>,
}

impl Scores {
    pub(super) fn new(docs: usize) -> Self {
        Scores {
            value: vec![0.0; docs],
            has: vec![false; docs],
            scored: Vec::new(),
        }
    }

    #[inline]
    fn mark(&mut self, d: u32) {
        if !self.has[d as usize] {
            self.has[d as usize] = true;
            self.scored.push(d);
        }
    }

    /// Keeps the larger of the document's score and `s` (a new document starts at zero).
    pub(super) fn max(&mut self, d: u32, s: f64) {
        self.mark(d);
        let v = &mut self.value[d as usize];
        if s > *v {
            *v = s;
        }
    }

    /// Adds `s` to the document's score (a new document starts at zero).
    #[inline]
    fn add(&mut self, d: u32, s: f64) {
        self.mark(d);
        self.value[d as usize] += s;
    }

    /// Adds every score to `into`'s and empties this one.
    fn drain_into(&mut self, into: &mut Scores) {
        for d in self.scored.drain(..) {
            let i = d as usize;
            into.mark(d);
            into.value[i] += self.value[i];
            self.value[i] = 0.0;
            self.has[i] = false;
        }
    }
}

/// Weighted query-term frequencies under each parent (or in each document) touched: one row
/// of `terms` values per parent, allocated on first touch; or, dense, one row per number.
pub(super) struct TermRows {
    pub(super) terms: usize,
    /// Row of each parent (`u32::MAX`: not touched); empty when dense.
    pub(super) row_of: Vec<u32>,
    pub(super) rows: Vec<f64>,
    /// Parents touched, in order of first touch; not kept when dense.
    pub(super) touched: Vec<u32>,
    /// Whether row `i` is number `i`'s, all zero until touched: for a query that touches
    /// a large share of the documents, where zeroing every row costs less than finding
    /// each one.
    pub(super) dense: bool,
}

impl TermRows {
    pub(super) fn new(parents: usize, terms: usize) -> Self {
        TermRows {
            terms,
            row_of: vec![u32::MAX; parents],
            rows: Vec::new(),
            touched: Vec::new(),
            dense: false,
        }
    }

    /// Rows for every number below `n`, all zero.
    pub(super) fn dense(n: usize, terms: usize) -> Self {
        TermRows {
            terms,
            row_of: Vec::new(),
            rows: vec![0.0; n.saturating_mul(terms)],
            touched: Vec::new(),
            dense: true,
        }
    }

    /// Room for `n` more rows.
    fn reserve(&mut self, n: usize) {
        if self.dense {
            return;
        }
        let n = n.min(self.row_of.len() - self.touched.len());
        self.touched.reserve(n);
        self.rows.reserve(n.saturating_mul(self.terms));
    }

    #[inline]
    pub(super) fn add(&mut self, parent: u32, term: usize, f: f64) {
        let p = parent as usize;
        if self.dense {
            self.rows[p * self.terms + term] += f;
            return;
        }
        if self.row_of[p] == u32::MAX {
            self.row_of[p] = self.touched.len() as u32;
            self.touched.push(parent);
            self.rows.resize(self.rows.len() + self.terms, 0.0);
        }
        self.rows[self.row_of[p] as usize * self.terms + term] += f;
    }

    pub(super) fn row(&self, parent: u32) -> &[f64] {
        let r = if self.dense {
            parent as usize
        } else {
            self.row_of[parent as usize] as usize
        } * self.terms;
        &self.rows[r..r + self.terms]
    }

    /// Whether the row is there to read (a dense row always is; untouched, it is zero).
    pub(super) fn has(&self, parent: u32) -> bool {
        self.dense || self.row_of[parent as usize] != u32::MAX
    }
}

/// What one query term's postings add to: the records' own scores (or their best per
/// term, when the term is reached several ways), and the term's frequency under each parent
/// and in each record (for the windows).
struct Own<'s> {
    scores: &'s mut Scores,
    /// Whether `scores` are the own scores themselves (each record is added once).
    direct: bool,
    /// Records added (when `direct`).
    touched: usize,
    doc_tf: Option<&'s mut TermRows>,
    term: usize,
}

impl Own<'_> {
    /// Room for `n` more records.
    fn reserve(&mut self, n: usize) {
        let room = self.scores.has.len() - self.scores.scored.len();
        self.scores.scored.reserve(n.min(room));
        if let Some(t) = self.doc_tf.as_deref_mut() {
            t.reserve(n);
        }
    }

    /// Record `d` scores `s` for the term, which it holds `tf` times (weighted).
    #[inline(always)]
    fn add(&mut self, d: u32, s: f64, tf: f64, in_scope: &impl Fn(u32) -> bool) {
        if self.direct {
            // What keeping the best of one score and adding it gives, to the bit.
            self.scores.add(d, if s > 0.0 { s } else { 0.0 });
            self.touched += 1;
        } else {
            self.scores.max(d, s);
        }
        if let Some(t) = self.doc_tf.as_deref_mut() {
            if in_scope(d) {
                t.add(d, self.term, tf);
            }
        }
    }
}

/// The query terms' frequencies in the records whose windows a search sums, and what the
/// windows are summed from.
struct WindowRows<'a> {
    tf: TermRows,
    /// When the rows are looked up where windows are summed (else filled from the postings).
    to_fill: Option<LazyRows<'a>>,
    reach: &'a [Reach<'a>],
    /// The number of records each query term matches.
    df: &'a [f64],
    /// The mean record length.
    avg: f64,
}

/// What one query term reaches: the indexed terms (with their weights and live document
/// counts) and, when it names a date, the live records dated then.
pub(super) type Reach<'a> = (Vec<(TermRef, f64, usize)>, Option<Dated<'a>>);

/// How a search goes about ranking. Every plan gives the same hits, to the bit; the
/// default is the fastest.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// Sum windows only where they can change the answer (see `bound`).
    pub(super) defer_windows: bool,
    /// Keep the records' term frequencies in a row per document number (`None`: when the
    /// query's postings would touch an eighth of the rows or more).
    pub(super) dense_rows: Option<bool>,
    /// Whether to rank from the records near the query's rarer words (see `near_rare`).
    pub(super) near_rare: NearRarePlan,
    /// With windows deferred, look up the rows of the records whose windows are summed
    /// (see `doc_rows`, and how) instead of keeping one for every record the postings touch.
    pub(super) lazy_rows: Option<Fill>,
    /// Rank in sweeps in key order when the index is its file part whole (see `stream`).
    pub(super) stream: bool,
}

/// When a search is focused on the records near its rarer words (the default is `Auto`;
/// tests ask for the others).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) enum NearRarePlan {
    /// With the thresholds for the index's size.
    Auto,
    /// Never.
    Off,
    /// With these thresholds.
    With(NearRareFrom),
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            defer_windows: true,
            dense_rows: None,
            near_rare: NearRarePlan::Auto,
            lazy_rows: Some(Fill::Auto),
            stream: true,
        }
    }
}

impl LexicalIndex {
    /// Ranked hits for `q`; an empty result when nothing matches (never invented hits).
    /// Ranked by relevance, the best hits by words are scored again with the signals (see
    /// `rerank`).
    pub fn search(&self, q: &Query<'_>) -> Vec<Hit> {
        let p = &self.params;
        if q.sort != Sort::Relevance || !p.signals_on() || q.limit == 0 {
            return self.search_by_words(q);
        }
        let qs = super::QuerySignals::new(q.text).with_actors(self.each_actor_name());
        let pool = Query {
            limit: p.rerank_pool,
            ..*q
        };
        // A query that alone sends the search to the pool is searched so at once: fewer
        // hits than it asks for are every hit either way.
        if p.rerank_pool > q.limit && super::rerank::asks_for_pool(&qs) {
            let mut hits = self.search_by_words(&pool);
            super::rerank::rerank_with(&mut hits, &qs, p, q.limit);
            return hits;
        }
        let mut hits = self.search_by_words(q);
        if super::rerank::wants_pool(&qs, &hits, q.limit, p) {
            hits = self.search_by_words(&pool);
        }
        super::rerank::rerank_with(&mut hits, &qs, p, q.limit);
        hits
    }

    /// [`LexicalIndex::search`] by the query's words alone: the lexical score.
    pub fn search_by_words(&self, q: &Query<'_>) -> Vec<Hit> {
        // An index without memoir's own records has nothing to leave out: its unscoped
        // searches skip the per-record namespace test.
        if q.namespace.is_none() && !q.with_internal && !self.has_internal() {
            let all = Query {
                with_internal: true,
                ..*q
            };
            return self.search_planned(&all, Plan::default());
        }
        self.search_planned(q, Plan::default())
    }

    /// [`LexicalIndex::search`] carried out as `plan` says.
    pub(super) fn search_planned(&self, q: &Query<'_>, plan: Plan) -> Vec<Hit> {
        // Explained, every step is taken for every record (the same hits, to the bit), and
        // the scores after each are kept.
        let (plan, mut marks) = match q.explain {
            true => {
                let all = Plan {
                    defer_windows: false,
                    near_rare: NearRarePlan::Off,
                    stream: false,
                    ..plan
                };
                (all, Some(Marks::default()))
            }
            false => (plan, None),
        };
        let live = self.len() as f64;
        if live == 0.0 || q.limit == 0 {
            return Vec::new();
        }
        // Among one agent's records: none, no hit.
        let of_agent = q.actor.map(|a| self.docs_of_actor(a));
        if of_agent.as_ref().is_some_and(Vec::is_empty) {
            return Vec::new();
        }
        let avg = (self.total_len / live).max(1.0);
        let pr = self.params;
        let mut terms = self.tokenizer.terms(q.text);
        terms.sort();
        terms.dedup();
        let stats = self.stats();
        let docs = self.base.n_docs() + self.docs.len();
        // Per query term, the indexed terms it reaches (with their weights and document
        // counts) and, when it names a date, the records dated then.
        let reach: Vec<Reach> = terms
            .iter()
            .map(|term| {
                let expansions: Vec<_> = self
                    .expand(term)
                    .into_iter()
                    .map(|(t, w)| (t, w, self.df(t)))
                    .filter(|e| e.2 > 0)
                    .collect();
                let date = (pr.date_weight > 0.0)
                    .then(|| self.date_term(term))
                    .flatten()
                    .map(|dt| self.dated(dt))
                    .filter(|dated| !dated.is_empty());
                (expansions, date)
            })
            .collect();
        let near_rare = match plan.near_rare {
            NearRarePlan::Auto => Some(NearRareFrom::for_docs(docs)),
            NearRarePlan::Off => None,
            NearRarePlan::With(f) => Some(f),
        };
        if let Some(hits) = near_rare.and_then(|f| self.search_near_rare(q, &reach, stats, avg, f))
        {
            return hits;
        }
        if plan.stream && pr.window <= 1024 {
            return self.search_streamed(q, &reach, stats, avg);
        }
        let v = match &of_agent {
            Some(docs) => View::new(self, stats, avg).of_agent(docs),
            None => View::new(self, stats, avg),
        };
        // Own scores by document number; `scored` lists the documents that have one, in the
        // order they got it (sums below run in a fixed order, so scores do not depend on it).
        let mut scores = Scores::new(docs);
        // Per record of the query's namespace that holds a query term, the weighted
        // frequency of each (for the windows).
        let windows = pr.window_weight > 0.0;
        let dense = plan.dense_rows.unwrap_or_else(|| {
            let postings: usize = reach
                .iter()
                .map(|(e, date)| {
                    e.iter().map(|e| e.2).sum::<usize>() + date.as_ref().map_or(0, Dated::len)
                })
                .sum();
            postings.saturating_mul(8) >= docs.saturating_mul(terms.len())
        });
        // Windows deferred, the rows are filled where windows are summed (all of them, should
        // no parent score allow deferring).
        let lazy = plan.lazy_rows.is_some()
            && plan.defer_windows
            && windows
            && pr.parent_weight > 0.0
            && Deferred::applies(&pr);
        let mut doc_tf = match windows {
            false => TermRows::new(0, terms.len()),
            true if dense => TermRows::dense(docs, terms.len()),
            true => TermRows::new(docs, terms.len()),
        };
        let to_fill = (plan.lazy_rows)
            .filter(|_| lazy)
            .map(|how| self.lazy_rows(&reach, docs, how));
        // The indexed terms the query reached, and per query term the records it matches.
        let mut reached = Vec::new();
        let mut matching = Vec::with_capacity(terms.len());
        // Allocated when a term is reached several ways.
        let mut best: Option<Scores> = None;
        let ns_ok = |d: u32| self.in_scope(d, q);
        for (ti, (expansions, date)) in reach.iter().enumerate() {
            // A term reached one way gives each record one score: it goes straight into the
            // own scores. Reached several ways, a record keeps its best (in `best` first).
            let direct = expansions.len() == 1 && date.is_none();
            let mut acc = Own {
                scores: if direct {
                    &mut scores
                } else {
                    best.get_or_insert_with(|| Scores::new(docs))
                },
                direct,
                touched: 0,
                doc_tf: (windows && !lazy).then_some(&mut doc_tf),
                term: ti,
            };
            let more: usize = expansions.iter().map(|e| e.2).sum();
            acc.reserve(more + date.as_ref().map_or(0, Dated::len));
            for &(tid, weight, df) in expansions {
                reached.push(tid);
                let idf = idf(live, df as f64);
                self.each_posting(tid, |p| {
                    let Some(norm) = v.norm(p.doc) else {
                        return;
                    };
                    let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                    let s = weight * bm25_normed(idf, tf, norm, &pr);
                    acc.add(p.doc, s, weight * tf, &ns_ok);
                });
            }
            // The date field: a term naming a month or a year matches the records dated
            // then, as one more occurrence of the term in their content.
            if let Some(dated) = date {
                let idf = idf(live, dated.len() as f64);
                let tf = pr.date_weight;
                dated.for_each(|d| {
                    if let Some(norm) = v.norm(d) {
                        acc.add(d, bm25_normed(idf, tf, norm, &pr), tf, &ns_ok);
                    }
                });
            }
            if direct {
                matching.push(acc.touched as f64);
            } else {
                let best = best.get_or_insert_with(|| Scores::new(docs));
                matching.push(best.scored.len() as f64);
                best.drain_into(&mut scores);
            }
        }
        if let Some(m) = marks.as_mut() {
            m.own = scores.value.clone();
        }
        if pr.neighbour_weight > 0.0 || pr.group_weight > 0.0 {
            self.add_context(&v, &mut scores, stats, pr);
        }
        if let Some(m) = marks.as_mut() {
            m.context = scores.value.clone();
        }
        // Per parent touched, the weighted frequency of each query term under it.
        let parent_tf = match pr.parent_weight > 0.0 {
            true => self.query_parent_tf(&reach, stats),
            false => TermRows::new(0, terms.len()),
        };
        let by_parent = (pr.parent_weight > 0.0 && !parent_tf.touched.is_empty())
            .then(|| self.parent_scores(&parent_tf, &vec![1.0; terms.len()], stats));
        // Windows are summed where they can change the answer once the parents' scores are
        // known (see `bound`); without those, all of them now.
        let mut deferred =
            (plan.defer_windows && windows && by_parent.is_some() && Deferred::applies(&pr)).then(
                || {
                    Deferred::new(
                        self,
                        &parent_tf,
                        &matching,
                        docs,
                        self.parent_numbers(stats),
                    )
                },
            );
        let mut rows = WindowRows {
            tf: doc_tf,
            to_fill,
            reach: &reach,
            df: &matching,
            avg,
        };
        if windows && deferred.is_none() {
            self.windows_of(&v, &mut rows, q, None, &mut scores);
        }
        if let Some(m) = marks.as_mut() {
            m.window = scores.value.clone();
        }
        // The records that can be hits (with deferred windows, fewer than all scored).
        let mut could: Option<Vec<u32>> = None;
        if let Some(mut by_parent) = by_parent {
            if let Some(m) = marks.as_mut() {
                m.by_parent = by_parent.clone();
            }
            if pr.feedback_docs > 0 && pr.feedback_terms > 0 && pr.feedback_weight > 0.0 {
                let extra = |p: u32| pr.parent_weight * by_parent[p as usize];
                let n = Some(pr.feedback_docs);
                let among = deferred.as_mut().map(|w| {
                    let (could, pick) = w.settle(&v, q, &scores, extra, n);
                    self.windows_of(&v, &mut rows, q, Some(&pick), &mut scores);
                    could
                });
                // Feedback ranks on the scores so far: a record's own, context, window and
                // parent.
                let first = |d: u32| {
                    scores.value[d as usize] + pr.parent_weight * by_parent[v.parent(d) as usize]
                };
                let among = among.as_deref().unwrap_or(&scores.scored);
                let expansion = self.feedback_terms(|d| v.passes(d, q), among, first, &reached);
                self.add_feedback(&expansion, &parent_tf.touched, &mut by_parent, stats);
            }
            if let Some(w) = deferred.as_mut() {
                let extra = |p: u32| pr.parent_weight * by_parent[p as usize];
                // Newest first, any record can be a hit.
                let n = (q.sort == Sort::Relevance).then_some(q.limit);
                let (all, pick) = w.settle(&v, q, &scores, extra, n);
                self.windows_of(&v, &mut rows, q, Some(&pick), &mut scores);
                could = Some(all);
            }
            for &d in could.as_deref().unwrap_or(&scores.scored) {
                let p = v.parent(d);
                scores.value[d as usize] += pr.parent_weight * by_parent[p as usize];
            }
        }
        let mut hits = self.top_hits(&v, &scores, could.as_deref(), q);
        if let Some(m) = marks {
            for h in &mut hits {
                let d = self.number_of(&h.key);
                let parent = d.map_or(0, |d| v.parent(d));
                h.terms.parts = d.map(|d| m.parts(d, h.score, parent, pr.parent_weight));
            }
        }
        hits
    }

    /// Adds the windows of the records `only` lists (of every scored record when none) to
    /// their scores, looking up their rows first when they are looked up.
    fn windows_of(
        &self,
        v: &View<'_>,
        rows: &mut WindowRows<'_>,
        q: &Query<'_>,
        only: Option<&[u32]>,
        scores: &mut Scores,
    ) {
        if let Some(fill) = rows.to_fill.as_mut() {
            let docs = only.unwrap_or(&scores.scored);
            fill.fill(v, rows.reach, docs, |d| self.in_scope(d, q), &mut rows.tf);
        }
        let win = Windows {
            tf: &rows.tf,
            df: rows.df,
            avg: rows.avg,
            q,
        };
        self.add_windows(v, &win, only, scores);
    }

    // Selecting the hits to return is kept apart from scoring: only the best `q.limit` of
    // the scored documents are ordered in full and turned into `Hit`s.

    /// The best `q.limit` of the documents `scores` (those of `among`, when given) that pass
    /// `q`'s filters, as hits in `q`'s order (a total order: keys are unique, so the result
    /// does not depend on map order; ties go by key).
    fn top_hits(
        &self,
        v: &View<'_>,
        scores: &Scores,
        among: Option<&[u32]>,
        q: &Query<'_>,
    ) -> Vec<Hit> {
        let order = |a: &(u32, f64), b: &(u32, f64)| match q.sort {
            Sort::Relevance => b.1.total_cmp(&a.1).then_with(|| self.key_cmp(a.0, b.0)),
            Sort::Recency => self
                .timestamp_of(b.0)
                .total_cmp(&self.timestamp_of(a.0))
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| self.key_cmp(a.0, b.0)),
        };
        let ranked = best_n(
            among
                .unwrap_or(&scores.scored)
                .iter()
                .map(|&d| (d, scores.value[d as usize]))
                .filter(|&(d, s)| s > 0.0 && v.passes(d, q)),
            q.limit,
            order,
        );
        ranked
            .into_iter()
            .filter_map(|(d, score)| self.hit_of(d, score))
            .collect()
    }
}
