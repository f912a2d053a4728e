//! Shell-style globs over key paths, as `summarize --keys`, `log --keys` and `diff` filter.
//!
//! A pattern matches the whole bare path (no namespace). `*` matches any run of characters,
//! dots included (`preferences.*` matches `preferences.a.b`); `?` one character; `[seq]` and
//! `[!seq]` a class; `{a,b}` alternatives. Matching is case-sensitive. An unclosed class or
//! any other malformed pattern is an error, never a literal.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// Most patterns in one set.
pub const MAX_PATTERNS: usize = 256;

/// Why a glob was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    /// The pattern is empty.
    #[error("invalid glob: the pattern is empty")]
    Empty,
    /// The pattern is longer than [`MAX_PATTERN_BYTES`].
    #[error("invalid glob: longer than {MAX_PATTERN_BYTES} bytes")]
    TooLong,
    /// More than [`MAX_PATTERNS`] patterns.
    #[error("invalid glob: more than {MAX_PATTERNS} patterns")]
    TooMany,
    /// The pattern does not parse (for example an unclosed `[`).
    #[error("invalid glob {pattern:?}: {reason}")]
    Syntax {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// A union of globs over bare key paths. An empty set matches everything.
#[derive(Debug, Clone)]
pub struct KeyGlobs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl KeyGlobs {
    /// Compiles `patterns`; a path matches when any pattern matches it.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<KeyGlobs, GlobError> {
        if patterns.len() > MAX_PATTERNS {
            return Err(GlobError::TooMany);
        }
        let mut b = GlobSetBuilder::new();
        let mut kept = Vec::with_capacity(patterns.len());
        for p in patterns {
            let p = p.as_ref();
            if p.is_empty() {
                return Err(GlobError::Empty);
            }
            if p.len() > MAX_PATTERN_BYTES {
                return Err(GlobError::TooLong);
            }
            // Key paths never hold `/`, and globset reads `**/` as "any directories, or none"
            // (so `**/**` would match every key): a `/` can only mislead.
            if p.contains('/') {
                return Err(GlobError::Syntax {
                    pattern: p.to_string(),
                    reason: "key paths never contain `/`; segments are separated by `.` and `*` crosses them".to_string(),
                });
            }
            let g = GlobBuilder::new(p)
                .literal_separator(false)
                .case_insensitive(false)
                .backslash_escape(true)
                .empty_alternates(false)
                .build()
                .map_err(|e| GlobError::Syntax {
                    pattern: p.to_string(),
                    reason: e.kind().to_string(),
                })?;
            b.add(g);
            kept.push(p.to_string());
        }
        let set = b.build().map_err(|e| GlobError::Syntax {
            pattern: kept.join(" "),
            reason: e.to_string(),
        })?;
        Ok(KeyGlobs {
            patterns: kept,
            set,
        })
    }

    /// The set that matches every path.
    pub fn all() -> KeyGlobs {
        KeyGlobs {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }

    /// True when the set has no patterns (and so matches everything).
    pub fn is_all(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `path` (a bare dotted path) matches.
    pub fn matches(&self, path: &str) -> bool {
        self.is_all() || self.set.is_match(path)
    }

    /// What every matching path starts with, per pattern: whole leading segments that the
    /// pattern spells literally, and whether they are the whole path (a pattern without
    /// any special character). `preferences.coding.*` gives `("preferences.coding",
    /// false)`: a path it matches has `preferences` and `coding` as its first two segments
    /// and more after them. `None` when a pattern spells no whole segment first (`*.x`,
    /// `pref*`) or the set is empty (it matches every path).
    pub fn literal_prefixes(&self) -> Option<Vec<(&str, bool)>> {
        if self.is_all() {
            return None;
        }
        self.patterns
            .iter()
            .map(|p| match p.find(|c| "*?[]{}\\,!".contains(c)) {
                None => Some((p.as_str(), true)),
                Some(i) => p[..i].rfind('.').map(|dot| (&p[..dot], false)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, path: &str) -> bool {
        KeyGlobs::new(&[p]).unwrap().matches(path)
    }

    #[test]
    fn literal_prefixes_hold_for_every_match() {
        let lp = |ps: &[&str]| {
            KeyGlobs::new(ps).unwrap().literal_prefixes().map(|v| {
                v.into_iter()
                    .map(|(p, whole)| (p.to_string(), whole))
                    .collect::<Vec<_>>()
            })
        };
        let some = |p: &str, whole: bool| Some(vec![(p.to_string(), whole)]);
        assert_eq!(lp(&["a.b.*"]), some("a.b", false));
        assert_eq!(lp(&["a.b*"]), some("a", false));
        assert_eq!(lp(&["a.b.c"]), some("a.b.c", true));
        assert_eq!(lp(&["a.{b,c}"]), some("a", false));
        assert_eq!(lp(&["a\\*.b"]), None);
        assert_eq!(lp(&["a.*", "*.b"]), None);
        assert_eq!(lp(&["pref*"]), None);
        assert_eq!(KeyGlobs::all().literal_prefixes(), None);
        // Every path a pattern matches has the prefix's segments first (and no more when
        // the pattern is literal).
        let paths = [
            "a", "a.b", "a.b.c", "a.bc", "a.b.c.d", "ab.b", "x.a.b", "a*.b",
        ];
        for p in [
            "a.b.*",
            "a.b*",
            "a.b.c",
            "a.?",
            "a.[bc]*",
            "a.{b,x}.c",
            "a*",
            "a.b.c*",
        ] {
            let g = KeyGlobs::new(&[p]).unwrap();
            for path in paths.iter().filter(|x| g.matches(x)) {
                let Some(pre) = g.literal_prefixes() else {
                    continue;
                };
                let (pre, whole) = pre[0];
                if whole {
                    assert_eq!(*path, pre, "{p} matches {path}");
                } else {
                    assert!(path.starts_with(&format!("{pre}.")), "{p} matches {path}");
                }
            }
        }
    }

    #[test]
    fn star_crosses_dots_and_matches_whole_path() {
        assert!(m("preferences.*", "preferences.a.b"));
        assert!(m("preferences.*", "preferences.a"));
        assert!(!m("preferences.*", "preferences"));
        assert!(!m("pref", "preferences"));
        assert!(m("*.testing", "preferences.coding.testing"));
        assert!(!m("*.testing", "preferences.coding.testing2"));
    }

    #[test]
    fn classes_question_mark_and_case() {
        assert!(m("a.?", "a.b"));
        assert!(!m("a.?", "a.bc"));
        assert!(m("a.[bc]", "a.c"));
        assert!(!m("a.[!bc]", "a.c"));
        assert!(m("a.[!bc]", "a.d"));
        assert!(!m("A.b", "a.b"));
    }

    #[test]
    fn union_and_empty_set() {
        let g = KeyGlobs::new(&["a.*", "b.c"]).unwrap();
        assert!(g.matches("a.x") && g.matches("b.c") && !g.matches("b.d"));
        let all = KeyGlobs::all();
        assert!(all.matches("anything.at.all"));
        assert!(KeyGlobs::new::<&str>(&[]).unwrap().is_all());
    }

    #[test]
    fn malformed_patterns_are_errors() {
        assert!(matches!(
            KeyGlobs::new(&["a.[bc"]),
            Err(GlobError::Syntax { .. })
        ));
        assert_eq!(KeyGlobs::new(&[""]).unwrap_err(), GlobError::Empty);
        let huge = "a".repeat(MAX_PATTERN_BYTES + 1);
        assert_eq!(KeyGlobs::new(&[huge]).unwrap_err(), GlobError::TooLong);
        for slash in ["**/**", "a/b", "*/x"] {
            assert!(matches!(
                KeyGlobs::new(&[slash]),
                Err(GlobError::Syntax { .. })
            ));
        }
    }
}
