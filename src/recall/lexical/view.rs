//! What scoring reads of every document it touches (length, parent, neighbours), resolved
//! once per search into plain slices, so that the per-posting work of a query matching most
//! of the index is a few array reads; overlay documents go the general way.

use std::sync::OnceLock;

use super::context::ParentStats;
use super::score::length_norm;
use super::{LexicalIndex, Params, Query};

/// The BM25 length norm of every document of the file part, for one set of parameters and mean
/// length: what every posting of a search would otherwise divide for.
pub(super) struct Norms {
    /// (k1, b, mean length) bits the norms were computed for.
    key: [u64; 3],
    norms: Vec<f64>,
}

/// Where a [`View`] keeps its norms: computed once per index state (the parents' documents
/// are recomputed after every change, and this with them).
pub(super) type NormSlot = OnceLock<Norms>;

fn norms_key(p: &Params, avg: f64) -> [u64; 3] {
    [p.k1.to_bits(), p.b.to_bits(), avg.to_bits()]
}

/// The documents of an index as one search reads them.
pub(super) struct View<'a> {
    ix: &'a LexicalIndex,
    stats: &'a ParentStats,
    /// Documents of the file part the slices below cover (all of them, unless a table was damaged).
    n: usize,
    lens: &'a [f64],
    parents: &'a [u32],
    dead: &'a [bool],
    norms: std::borrow::Cow<'a, [f64]>,
    avg: f64,
    /// Documents of the file part, when the file part is all there is, none removed (then key order
    /// is number order); else zero.
    whole: usize,
    /// When it is not: per document of the file part, whether its live neighbour before is the one
    /// numbered before (see [`LexicalIndex::plain_steps`]).
    plain: &'a [bool],
    /// For a search among one agent's records: whether each document is one of them.
    agent: Option<Vec<bool>>,
}

impl<'a> View<'a> {
    /// The view of `ix` for a search where documents are `avg` long on average.
    pub(super) fn new(ix: &'a LexicalIndex, stats: &'a ParentStats, avg: f64) -> Self {
        let (lens, parents, dead) = (ix.base.lens(), ix.base.parents(), &ix.dead[..]);
        let p = &ix.params;
        let key = norms_key(p, avg);
        let compute = || Norms {
            key,
            norms: lens.iter().map(|&l| length_norm(l, avg, p)).collect(),
        };
        let norms = match stats.norms.get_or_init(compute) {
            kept if kept.key == key => std::borrow::Cow::Borrowed(&kept.norms[..]),
            // Parameters changed since: computed for this search only.
            _ => std::borrow::Cow::Owned(compute().norms),
        };
        View {
            ix,
            stats,
            n: lens.len().min(parents.len()).min(dead.len()),
            lens,
            parents,
            dead,
            norms,
            avg,
            whole: if ix.file_part_whole() {
                ix.base.n_docs()
            } else {
                0
            },
            plain: if ix.file_part_whole() {
                &[]
            } else {
                stats.plain.get_or_init(|| ix.plain_steps())
            },
            agent: None,
        }
    }

    /// The view for a search among the documents `docs` of one agent (see
    /// [`LexicalIndex::docs_of_actor`]): their filter is then a look-up.
    pub(super) fn of_agent(mut self, docs: &[u32]) -> Self {
        let mut agent = vec![false; self.ix.base.n_docs() + self.ix.docs.len()];
        for &d in docs {
            agent[d as usize] = true;
        }
        self.agent = Some(agent);
        self
    }

    /// The index viewed.
    pub(super) fn index(&self) -> &'a LexicalIndex {
        self.ix
    }

    /// The BM25 length norm of live document `d` ([`length_norm`] of its length).
    #[inline]
    pub(super) fn norm(&self, d: u32) -> Option<f64> {
        let i = d as usize;
        if i < self.n {
            return (!self.dead[i]).then(|| self.norms[i]);
        }
        let len = self.ix.live_len(d)?;
        Some(length_norm(len, self.avg, &self.ix.params))
    }

    /// The length of live document `d` (see [`LexicalIndex::live_len`]).
    #[inline]
    pub(super) fn live_len(&self, d: u32) -> Option<f64> {
        let i = d as usize;
        if i < self.n {
            return (!self.dead[i]).then(|| self.lens[i]);
        }
        self.ix.live_len(d)
    }

    /// Whether document `d` is live and passes `q`'s filters (see [`LexicalIndex::passes`]).
    #[inline]
    pub(super) fn passes(&self, d: u32, q: &Query<'_>) -> bool {
        if self.live_len(d).is_none() {
            return false;
        }
        if !q.filtered() {
            return true;
        }
        match &self.agent {
            Some(agent) => agent.get(d as usize) == Some(&true) && self.ix.passes_but_actor(d, q),
            None => self.ix.passes(d, q),
        }
    }

    /// The parent number of live document `d` (see [`LexicalIndex::parent`]).
    #[inline]
    pub(super) fn parent(&self, d: u32) -> u32 {
        let i = d as usize;
        if i < self.n {
            return self.parents[i];
        }
        self.ix.parent(self.stats, d)
    }

    /// The live document next to `d` in key order (see [`LexicalIndex::neighbour_across`]).
    #[inline]
    pub(super) fn neighbour(&self, d: u32, after: bool) -> Option<u32> {
        if self.whole > 0 {
            return if after {
                (d as usize + 1 < self.whole).then_some(d + 1)
            } else {
                d.checked_sub(1)
            };
        }
        let i = d as usize;
        let step = if after { i + 1 } else { i };
        if i < self.plain.len() && self.plain.get(step) == Some(&true) {
            return Some(if after { d + 1 } else { d - 1 });
        }
        self.ix.neighbour_across(d, after)
    }
}
