//! The ranking parameters.

/// Ranking parameters. The defaults are the documented behaviour; other values exist for
/// measuring the method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// BM25 length normalisation.
    pub b: f64,
    /// Weight of a term occurrence in the key path relative to one in the content.
    pub key_weight: f64,
    /// Weight of a term reached by prefix (the query term starts a longer indexed term).
    pub prefix_weight: f64,
    /// Weight of a term reached by a near miss (one or two edits).
    pub fuzzy_weight: f64,
    /// Share of each adjacent sibling key's own score a key receives (neighbouring memories
    /// under one parent, such as consecutive turns, give each other context).
    pub neighbour_weight: f64,
    /// Share of the best own score under the same parent a key receives.
    pub group_weight: f64,
    /// Weight of the window score: the BM25 score of a key's record together with up to
    /// [`Params::window`] siblings on each side, read as one passage, between one record and
    /// its whole parent: the question and the answer of an exchange usually sit in adjacent
    /// records and share the query's words between them.
    pub window_weight: f64,
    /// Siblings on each side of a record in its window.
    pub window: usize,
    /// Weight of the parent's score: the BM25 score of all records under a key's parent
    /// read as one document (a session of turns, a topic of facts). Words of the query spread
    /// over several siblings raise every sibling.
    pub parent_weight: f64,
    /// Pseudo-relevance feedback: the best `feedback_docs` records of the query's scope (after
    /// its filters) give the `feedback_terms` content terms most typical of them (frequency in
    /// each record relative to its length, times the record's share of their scores, times
    /// IDF), which are added to the parents' scores with a weight up to `feedback_weight` of
    /// a query word's. Parents that talk about what the best hits talk about rise, even when
    /// they share few words with the query; records themselves are scored by the query's
    /// words only, so feedback never adds a hit. Zero documents turn it off.
    pub feedback_docs: usize,
    /// Most expansion terms pseudo-relevance feedback adds.
    pub feedback_terms: usize,
    /// Weight of the best expansion term relative to a query word (the others in proportion).
    pub feedback_weight: f64,
    /// Term frequency a record gets for a query word naming the month or the year of its
    /// timestamp (its date read as a field of the record: "June", "2023"). Zero turns the
    /// date field off.
    pub date_weight: f64,
    /// Share of the score added to a record whose speaker (a leading `Name:`, else its
    /// actor) the query names.
    pub speaker_boost: f64,
    /// Share of the score added to a record holding a time expression when the query asks
    /// about time (`when`, `what year`, `how long`).
    pub time_boost: f64,
    /// Share of the score added to a record whose event time falls in a date or month the
    /// query names.
    pub date_boost: f64,
    /// Share of the score taken from a conversation turn that asks (ends with `?`).
    pub question_penalty: f64,
    /// How many of the best hits by words are scored again with the signals (at least the
    /// hits asked for).
    pub rerank_pool: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k1: 0.9,
            b: 0.6,
            key_weight: 2.0,
            prefix_weight: 0.8,
            fuzzy_weight: 0.6,
            neighbour_weight: 0.2,
            group_weight: 0.2,
            window_weight: 1.0,
            window: 2,
            parent_weight: 1.5,
            feedback_docs: 10,
            feedback_terms: 10,
            feedback_weight: 0.3,
            date_weight: 1.0,
            // Chosen on the LoCoMo development split (`benches/locomo_recall.rs --tune`).
            speaker_boost: 0.5,
            time_boost: 0.3,
            date_boost: 1.0,
            question_penalty: 0.1,
            rerank_pool: 200,
        }
    }
}
