//! Lexical near-duplicates: whether a new memory says what a stored one already says, found
//! with the lexical index (the few best hits of the new text) and decided by the overlap of
//! their terms (the tokenizer's stems of the lower-cased texts, stopwords left out).
//!
//! Two texts are near-duplicates ([`near_duplicate`]) when their sets of terms overlap by at
//! least [`SIMILARITY`] (Jaccard), or when every term of the new text is in the stored one and
//! the stored one has at most twice as many: a restatement, or the same fact in fewer words.
//! A term with a digit in the new text must be in the stored one either way, so a changed
//! version, date or amount ("PostgreSQL 16" after "PostgreSQL 15") is news, not a duplicate.
//! A stored record is compared entry by entry (its active entries, as its content joins
//! them).

use std::collections::BTreeSet;

use super::lexical::Params;
use super::{Hit, LexicalIndex, Query, Tokenizer};
use crate::memory::UPDATE_SEPARATOR;

/// Hits of the lexical index compared with a new text.
pub const CANDIDATES: usize = 5;
/// Least Jaccard overlap of terms for two texts to be near-duplicates.
pub const SIMILARITY: f64 = 0.7;

/// The set of terms of `text`, read in lower case (so `PostgreSQL` and `postgresql` are one
/// term, not split by case on one side only).
pub fn term_set(tok: &Tokenizer, text: &str) -> BTreeSet<String> {
    tok.terms(&text.to_lowercase()).into_iter().collect()
}

/// Whether a new text with terms `new` says what a stored text with terms `old` says (see the
/// module documentation).
pub fn near_duplicate(new: &BTreeSet<String>, old: &BTreeSet<String>) -> bool {
    if new.is_empty() || old.is_empty() {
        return false;
    }
    let numbers_kept = new
        .iter()
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .all(|t| old.contains(t));
    if !numbers_kept {
        return false;
    }
    let shared = new.intersection(old).count();
    let union = new.len() + old.len() - shared;
    let jaccard = shared as f64 / union as f64;
    jaccard >= SIMILARITY || (shared == new.len() && old.len() <= 2 * new.len())
}

/// The stored record in `namespace` that `text` near-duplicates, if any: the first of the
/// index's [`CANDIDATES`] best hits for `text` one of whose entries it near-duplicates.
/// The candidates are ranked by each record's own words (plain BM25F with prefixes and near
/// misses): the context a search adds (siblings, parent, feedback, dates) says nothing about
/// whether one record repeats another. The index's parameters are as they were on return.
pub fn find_duplicate(
    index: &mut LexicalIndex,
    tok: &Tokenizer,
    namespace: &str,
    text: &str,
) -> Option<Hit> {
    let new = term_set(tok, text);
    let saved = index.params;
    index.params = Params {
        neighbour_weight: 0.0,
        group_weight: 0.0,
        window_weight: 0.0,
        parent_weight: 0.0,
        feedback_docs: 0,
        date_weight: 0.0,
        speaker_boost: 0.0,
        time_boost: 0.0,
        date_boost: 0.0,
        question_penalty: 0.0,
        ..saved
    };
    let hits = index.search(&Query {
        text,
        with_internal: false,
        namespace: Some(namespace),
        limit: CANDIDATES,
        ..Query::default()
    });
    index.params = saved;
    hits.into_iter().find(|h| {
        h.content
            .split(UPDATE_SEPARATOR)
            .any(|entry| near_duplicate(&new, &term_set(tok, entry)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(a: &str, b: &str) -> bool {
        let t = Tokenizer::default();
        near_duplicate(&term_set(&t, a), &term_set(&t, b))
    }

    #[test]
    fn restatements_are_duplicates_and_news_is_not() {
        assert!(dup(
            "The user prefers pytest for tests.",
            "User prefers pytest for testing"
        ));
        assert!(dup("Uses pytest", "The project uses pytest for its tests"));
        assert!(dup(
            "Production runs PostgreSQL 16",
            "production runs postgresql 16."
        ));
        assert!(!dup(
            "Production runs PostgreSQL 16",
            "Production runs PostgreSQL 15"
        ));
        assert!(!dup(
            "The user prefers pytest",
            "The user prefers dark mode in the editor"
        ));
        assert!(!dup(
            "Deploys need a green CI run",
            "Deploys happen on Fridays after the release meeting with the whole team present"
        ));
        assert!(!dup("", "anything"));
    }
}
