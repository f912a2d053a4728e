//! The signals' terms of the score: the best hits by words (the lexical score, BM25F with
//! context) are scored again with what their records and the query say besides their words
//! (see `signals`), each signal a factor of the score:
//!
//! score = lexical x speaker x time x date x question
//!
//! - speaker: `1 + speaker_boost` for a record whose speaker the query names: a leading
//!   `Name:` of its content when it has one (a conversation turn says who speaks), else
//!   the record's actor (the agent that wrote it), named whole;
//! - time: `1 + time_boost` for a record holding a time expression, when the query asks
//!   about time;
//! - date: `1 + date_boost` for a record whose event time falls in a date or month the
//!   query names;
//! - question: `1 - question_penalty` for a turn that asks (a question is rarely its own
//!   answer).
//!
//! A factor that does not apply is 1. The hits asked for by words are scored again; when
//! the query asks about time or names a date, or one of those hits is a conversation turn,
//! the best [`Params::rerank_pool`] by words are (when that is more). A search of a store
//! without turns for a query that says nothing of time costs what it did by words alone, and
//! a record that no query word reaches is never a hit.

use super::signals::{
    has_time_expression, is_temporal_question, names_actor, names_speaker, periods, words, Parts,
};
use super::{Hit, Params};

/// The terms of a hit's score (see the module documentation): the lexical score and the
/// factors it is multiplied by (1 when a signal does not apply).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreTerms {
    /// BM25F over the key and the content, with the context of siblings and parent.
    pub lexical: f64,
    /// What `lexical` sums, when the search was asked to explain (see
    /// [`super::LexicalParts`]).
    pub parts: Option<super::LexicalParts>,
    /// The record is spoken (or written) by a speaker the query names.
    pub speaker: f64,
    /// The query asks about time and the record holds a time expression.
    pub time: f64,
    /// The record's event time falls in a date or month the query names.
    pub date: f64,
    /// The record is a turn that asks.
    pub question: f64,
}

impl ScoreTerms {
    /// The terms of a score that is all lexical.
    pub fn lexical(score: f64) -> Self {
        ScoreTerms {
            lexical: score,
            parts: None,
            speaker: 1.0,
            time: 1.0,
            date: 1.0,
            question: 1.0,
        }
    }

    /// The score the terms make.
    pub fn score(&self) -> f64 {
        self.lexical * self.speaker * self.time * self.date * self.question
    }
}

/// What a query says besides its words.
pub struct QuerySignals {
    words: Vec<String>,
    temporal: bool,
    periods: Vec<super::signals::Period>,
    /// The actors (of the index searched) the query names.
    actors: Vec<String>,
}

impl QuerySignals {
    /// Reads the query text.
    pub fn new(text: &str) -> Self {
        QuerySignals {
            words: words(text).collect(),
            temporal: is_temporal_question(text),
            periods: periods(text),
            actors: Vec::new(),
        }
    }

    /// The same, knowing the actors of the records searched (those the query names make
    /// the speaker signal of records that have no `Name:` lead).
    pub fn with_actors<'a>(mut self, actors: impl IntoIterator<Item = &'a str>) -> Self {
        for a in actors {
            if names_actor(&self.words, a) && !self.actors.iter().any(|x| x == a) {
                self.actors.push(a.to_string());
            }
        }
        self
    }
}

impl Params {
    /// Whether any signal has a weight.
    pub fn signals_on(&self) -> bool {
        self.speaker_boost != 0.0
            || self.time_boost != 0.0
            || self.date_boost != 0.0
            || self.question_penalty != 0.0
    }
}

/// The terms of a hit's score for a query (its `terms.lexical` is the lexical score).
pub fn score_terms(hit: &Hit, q: &QuerySignals, p: &Params) -> ScoreTerms {
    let r = Parts::of(&hit.content);
    let mut t = ScoreTerms {
        parts: hit.terms.parts,
        ..ScoreTerms::lexical(hit.terms.lexical)
    };
    // A leading `Name:` says who speaks; without one, the record's actor does.
    let named = match r.speaker {
        Some(s) => names_speaker(&q.words, s),
        None => hit.actor.as_ref().is_some_and(|a| q.actors.contains(a)),
    };
    if named {
        t.speaker = 1.0 + p.speaker_boost;
    }
    if q.temporal && has_time_expression(r.text) {
        t.time = 1.0 + p.time_boost;
    }
    if !q.periods.is_empty() {
        let event = r.leading_date().map_or(hit.timestamp, |d| d as f64);
        if q.periods.iter().any(|per| per.contains(event)) {
            t.date = 1.0 + p.date_boost;
        }
    }
    if r.question() {
        t.question = 1.0 - p.question_penalty;
    }
    t
}

/// Whether a search that found `hits` by words (asked for `limit`) must look at the best
/// [`Params::rerank_pool`] instead: there may be more, and the query asks about time,
/// names a date or an actor, or a hit is a conversation turn.
pub(super) fn wants_pool(q: &QuerySignals, hits: &[Hit], limit: usize, p: &Params) -> bool {
    p.rerank_pool > limit
        && hits.len() == limit
        && (asks_for_pool(q) || hits.iter().any(|h| Parts::of(&h.content).speaker.is_some()))
}

/// Whether the query alone sends a search that finds as many hits as it asks for to the
/// pool: it asks about time, names a date or an actor.
pub(super) fn asks_for_pool(q: &QuerySignals) -> bool {
    q.temporal || !q.periods.is_empty() || !q.actors.is_empty()
}

/// Scores `hits` (ranked by their lexical score) again with the signals and orders them by
/// the new score, ties by key; keeps the first `limit`.
pub fn rerank(hits: &mut Vec<Hit>, text: &str, p: &Params, limit: usize) {
    rerank_with(hits, &QuerySignals::new(text), p, limit);
}

/// [`rerank`] for a query already read.
pub(super) fn rerank_with(hits: &mut Vec<Hit>, q: &QuerySignals, p: &Params, limit: usize) {
    let mut changed = false;
    for h in hits.iter_mut() {
        let t = score_terms(h, q, p);
        if t != h.terms {
            changed = true;
            h.terms = t;
            h.score = t.score();
        }
    }
    if changed {
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    }
    hits.truncate(limit);
}
