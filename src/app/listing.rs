//! Every memory's key, a page at a time, in key order: for faces that list memories as
//! items (an MCP server's resources). memoir's own namespaces (`memoir:*`) are left out.

use serde::Serialize;

use crate::key::{is_internal_namespace, split_encoded, Key};
use crate::prolly::KeyRange;

use super::{Memoir, MemoirResult, Outcome, ReadPoint};

/// Most keys one page holds.
pub const MAX_PAGE: usize = 1000;

/// One page of keys.
#[derive(Debug, Clone, Serialize)]
pub struct KeyPage {
    /// `(namespace, path)` in key order.
    pub keys: Vec<(String, String)>,
    /// The last key of this page when more follow (pass it as `after` for the next page).
    pub next_after: Option<(String, String)>,
}

impl Outcome for KeyPage {
    crate::outcome_json!();
}

impl Memoir {
    /// Up to `limit` (at most [`MAX_PAGE`]) keys after `after` (`(namespace, path)`; none:
    /// from the first), at `at`. A malformed `after` is exit 1.
    pub fn list_keys(
        &self,
        after: Option<(&str, &str)>,
        limit: usize,
        at: &ReadPoint,
    ) -> MemoirResult<KeyPage> {
        let limit = limit.clamp(1, MAX_PAGE);
        let lo = match after {
            Some((ns, path)) => {
                // The smallest key above `after`: `after` with a 0x00 byte appended.
                let mut k = Key::existing(ns, path)?.encode();
                k.push(0);
                Some(k)
            }
            None => None,
        };
        let range = KeyRange { lo, hi: None };
        self.reading(|repo| {
            let (_, commit) = self.read_commit(repo, at)?;
            let root = repo.root_of(&commit)?;
            let mut keys = Vec::new();
            let mut more = false;
            repo.tree().scan(&root, &range, &mut |k, _| {
                let (ns, path) = split_encoded(k);
                if is_internal_namespace(&ns) {
                    return true;
                }
                if keys.len() == limit {
                    more = true;
                    return false;
                }
                keys.push((ns, path));
                true
            })?;
            let next_after = if more { keys.last().cloned() } else { None };
            Ok(KeyPage { keys, next_after })
        })
    }
}
