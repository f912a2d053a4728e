//! The parts of a lexical score, for a search asked to explain its hits: the scores every
//! record had after each step of the ranking (its own words, its siblings, its window, its
//! parent, feedback) are kept, and a hit's parts are the differences between them, so that
//! they sum to its lexical score.

/// What a hit's lexical score sums: the parts add up to it (to the rounding of a float).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LexicalParts {
    /// BM25F of the query's words in the record's key path and content (key-path
    /// occurrences weighted [`super::Params::key_weight`]), with the date field.
    pub words: f64,
    /// Shares of the adjacent siblings' own scores and of the best own score under the same
    /// parent.
    pub siblings: f64,
    /// The record read together with its nearest siblings as one passage.
    pub window: f64,
    /// The record's parent (every record under it read as one document), for the query's
    /// words.
    pub parent: f64,
    /// The parent for the feedback terms (words typical of the best hits).
    pub feedback: f64,
}

impl LexicalParts {
    /// The lexical score the parts make.
    pub fn sum(&self) -> f64 {
        self.words + self.siblings + self.window + self.parent + self.feedback
    }
}

/// The scores of every record after each step of a search (and the parents' scores before
/// feedback), kept when the search explains its hits.
#[derive(Default)]
pub(super) struct Marks {
    /// Own scores (words).
    pub(super) own: Vec<f64>,
    /// With the siblings' shares.
    pub(super) context: Vec<f64>,
    /// With the windows.
    pub(super) window: Vec<f64>,
    /// The parents' scores for the query's words, before feedback (empty: no parent score).
    pub(super) by_parent: Vec<f64>,
}

impl Marks {
    /// The parts of record `d`'s lexical score `score`, whose parent is numbered `parent`,
    /// with parents weighted `parent_weight`.
    pub(super) fn parts(
        &self,
        d: u32,
        score: f64,
        parent: u32,
        parent_weight: f64,
    ) -> LexicalParts {
        let at = |v: &[f64]| v.get(d as usize).copied().unwrap_or(0.0);
        let (own, context, window) = (at(&self.own), at(&self.context), at(&self.window));
        let from_parent = score - window;
        let parent = match self.by_parent.get(parent as usize) {
            Some(p) => parent_weight * p,
            None => 0.0,
        };
        LexicalParts {
            words: own,
            siblings: context - own,
            window: window - context,
            parent,
            feedback: from_parent - parent,
        }
    }
}
