//! Which keys a history command looks at: an optional namespace and globs over bare paths.

use super::graph_cache::FilterKey;
use crate::glob::KeyGlobs;
use crate::key::{self, Key};
use crate::prolly::{prefix_range, KeyRange};

/// Restricts `log` and `diff` to some keys: those of `namespace` (all namespaces when
/// `None`) whose bare path matches `globs` (an empty glob set matches every path).
///
/// With a namespace, tree walks are confined to that namespace's key range instead of
/// filtering every key.
#[derive(Debug, Clone)]
pub struct KeyFilter {
    /// Only keys of this namespace, when set.
    pub namespace: Option<String>,
    /// Only keys whose bare path matches one of these.
    pub globs: KeyGlobs,
}

impl KeyFilter {
    /// A filter of `namespace` (or every namespace) and `globs`.
    pub fn new(namespace: Option<&str>, globs: KeyGlobs) -> KeyFilter {
        KeyFilter {
            namespace: namespace.map(str::to_string),
            globs,
        }
    }

    /// The filter that matches every key.
    pub fn all() -> KeyFilter {
        KeyFilter::new(None, KeyGlobs::all())
    }

    /// True when it matches every key.
    pub fn is_all(&self) -> bool {
        self.namespace.is_none() && self.globs.is_all()
    }

    /// The key range the filter confines walks to (everything without a namespace).
    pub fn range(&self) -> KeyRange {
        match &self.namespace {
            Some(ns) => prefix_range(&key::namespace_prefix(ns)),
            None => KeyRange::all(),
        }
    }

    /// Change filter entries of which a commit's filter must hold one for the commit to
    /// change a matching key (see [`super::graph_cache`]): the literal leading segments of
    /// each glob, or else the namespace. `None` when neither says anything (a glob such as
    /// `*.x` and no namespace, or no restriction at all).
    pub(crate) fn probes(&self) -> Option<Vec<FilterKey>> {
        if let Some(prefixes) = self.globs.literal_prefixes() {
            return Some(
                prefixes
                    .into_iter()
                    .map(|(p, _)| FilterKey::path_prefix(p))
                    .collect(),
            );
        }
        self.namespace
            .as_deref()
            .map(|ns| vec![FilterKey::namespace(ns)])
    }

    /// Whether an encoded tree key matches.
    pub fn matches_encoded(&self, encoded: &[u8]) -> bool {
        if let Some(ns) = &self.namespace {
            let p = key::namespace_prefix(ns);
            if !encoded.starts_with(&p) {
                return false;
            }
        }
        if self.globs.is_all() {
            return true;
        }
        let (_, path) = key::split_encoded(encoded);
        self.globs.matches(&path)
    }

    /// Whether a key matches.
    pub fn matches(&self, key: &Key) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| ns == key.namespace())
            && self.globs.matches(key.path())
    }
}
