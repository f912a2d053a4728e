//! Query expansion: the indexed terms a query term reaches (itself, by prefix, by near
//! miss).

use super::terms::TermRef;
use super::LexicalIndex;

/// Shortest query term that matches by prefix.
pub const PREFIX_MIN_CHARS: usize = 4;

/// Shortest query term that matches by near miss (one edit; two edits from 8 characters).
pub const FUZZY_MIN_CHARS: usize = 5;
/// Most indexed terms one query term expands to.
const MAX_EXPANSIONS: usize = 64;

impl LexicalIndex {
    /// Indexed terms that `term` reaches, with their weights: itself, longer terms it
    /// starts (from [`PREFIX_MIN_CHARS`]), and when it is not indexed itself, terms within one
    /// edit (two from 8 characters; from [`FUZZY_MIN_CHARS`], same first letter).
    pub(super) fn expand(&self, term: &str) -> Vec<(TermRef, f64)> {
        let mut out = Vec::new();
        let exact = self.lookup(term).filter(|t| self.live(*t));
        if let Some(t) = exact {
            out.push((t, 1.0));
        }
        let chars = term.chars().count();
        if chars >= PREFIX_MIN_CHARS {
            for (_, t) in self
                .terms_after(Some(term))
                .take_while(|(name, _)| name.starts_with(term))
                .filter(|(_, t)| self.live(*t))
                .take(MAX_EXPANSIONS)
            {
                out.push((t, self.params.prefix_weight));
            }
        }
        if exact.is_none() && chars >= FUZZY_MIN_CHARS {
            let max = if chars >= 8 { 2 } else { 1 };
            let first = term.chars().next();
            let mut n = 0;
            // Only terms of the same first letter qualify: they follow that letter alone
            // (which is too short to qualify itself) in name order.
            let letter = first.map(String::from).unwrap_or_default();
            for (name, t) in self
                .terms_after(Some(&letter))
                .take_while(|(name, _)| name.starts_with(&letter))
            {
                if n >= MAX_EXPANSIONS {
                    break;
                }
                let tc = name.chars().count();
                if tc.abs_diff(chars) > max
                    || name.chars().next() != first
                    || name.starts_with(term)
                    || !self.live(t)
                {
                    continue;
                }
                if strsim::osa_distance(term, name) <= max {
                    out.push((t, self.params.fuzzy_weight));
                    n += 1;
                }
            }
        }
        out
    }
}
