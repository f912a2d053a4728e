//! Revision resolution: from the text of a revision (see [`super::revision`]) to a commit id.
//!
//! A name is tried as `HEAD`, then as a branch, then as a full id or a unique hex prefix (at
//! least 4 digits) of a **commit**: other objects whose ids share the prefix are ignored, so
//! a prefix that names only a tree node or a blob is not found. A branch name wins over a hex
//! prefix.

use super::revision::{parse_range, parse_rev, RevExpr, RevRange};
use super::{Repo, RepoError, RepoResult};
use crate::object::{peek_kind, Kind, ObjectId};
use crate::store::{ObjectStore, RefStore};

/// First-parent steps a revision walks by reading commits before it uses the commit graph.
const DIRECT_STEPS: usize = 32;

/// Shortest hex prefix accepted as a commit id.
pub const MIN_PREFIX_DIGITS: usize = 4;

impl Repo {
    /// Resolves a revision (`main`, `HEAD`, `3fa9c1`, `main~2^2`, `HEAD@{yesterday}`) to a
    /// commit id. `now` (unix seconds) anchors relative dates. A revision that names nothing
    /// is [`RepoError::RevisionNotFound`] holding the text asked for; a prefix of several
    /// commits is [`RepoError::AmbiguousRevision`]; text that does not parse is
    /// [`RepoError::BadRevision`].
    pub fn resolve(&self, rev: &str, now: i64) -> RepoResult<ObjectId> {
        let expr = parse_rev(rev, now).map_err(RepoError::BadRevision)?;
        self.resolve_expr_as(&expr, rev)
    }

    /// Resolves a parsed revision; errors name `asked` (the text the caller was given).
    pub fn resolve_expr(&self, expr: &RevExpr, asked: &str) -> RepoResult<ObjectId> {
        self.resolve_expr_as(expr, asked)
    }

    /// Resolves `A..B` to `(Some(A), B)` and a single revision `R` to `(None, R)`. An empty
    /// side of `..` means `HEAD`.
    pub fn resolve_range(&self, text: &str, now: i64) -> RepoResult<(Option<ObjectId>, ObjectId)> {
        match parse_range(text, now).map_err(RepoError::BadRevision)? {
            RevRange::Single(e) => Ok((None, self.resolve_expr_as(&e, text)?)),
            RevRange::Range { from, to } => {
                let from = self.resolve_expr_as(&from, text)?;
                let to = self.resolve_expr_as(&to, text)?;
                Ok((Some(from), to))
            }
        }
    }

    /// The tree root at a revision.
    pub fn root_at(&self, rev: &str, now: i64) -> RepoResult<ObjectId> {
        let c = self.resolve(rev, now)?;
        self.root_of(&c)
    }

    /// The unique commit whose id starts with the hex `prefix` (4 to 64 digits, either
    /// case). Ids of other objects are ignored.
    pub fn resolve_commit_prefix(&self, prefix: &str) -> RepoResult<ObjectId> {
        let not_found = || RepoError::RevisionNotFound {
            asked: prefix.to_string(),
            why: None,
        };
        let nibbles = crate::object::hex_nibbles(prefix).ok_or_else(not_found)?;
        if !(MIN_PREFIX_DIGITS..=64).contains(&nibbles.len()) {
            return Err(not_found());
        }
        let whole: Vec<u8> = nibbles.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect();
        let odd = (nibbles.len() % 2 == 1).then(|| nibbles[nibbles.len() - 1]);
        let store = self.store();
        let mut found = Vec::new();
        for raw in ObjectStore::ids_with_prefix(store, &whole)? {
            if odd.is_some_and(|n| raw[whole.len()] >> 4 != n) {
                continue;
            }
            let Some(bytes) = ObjectStore::get(store, &raw)? else {
                continue;
            };
            if peek_kind(&bytes).ok() == Some(Kind::Commit) {
                found.push(ObjectId::from_bytes(raw));
            }
        }
        match found.len() {
            0 => Err(not_found()),
            1 => Ok(found[0]),
            _ => {
                found.sort();
                Err(RepoError::AmbiguousRevision {
                    prefix: prefix.to_string(),
                    candidates: found.iter().map(ObjectId::to_hex).collect(),
                })
            }
        }
    }

    fn resolve_name(&self, name: &str, asked: &str) -> RepoResult<ObjectId> {
        if name == super::HEAD {
            return self.head_commit();
        }
        let branch = format!("{}{name}", super::BRANCH_PREFIX);
        if self.store().get_ref(&branch)?.is_some() {
            return self.branch_tip(name);
        }
        let tracking = format!("{}{name}", super::remote::TRACKING_PREFIX);
        if let Some(raw) = self.store().get_ref(&tracking)? {
            return super::id_from_ref(&tracking, &raw);
        }
        match self.resolve_commit_prefix(name) {
            Err(RepoError::RevisionNotFound { .. }) => Err(RepoError::RevisionNotFound {
                asked: asked.to_string(),
                why: self
                    .nearest_branch(name)?
                    .map(|b| format!("did you mean '{b}'?")),
            }),
            other => other,
        }
    }

    /// The branch whose name is nearest to `name`, within two edits (one for names of up to
    /// four characters), for "did you mean" hints.
    pub fn nearest_branch(&self, name: &str) -> RepoResult<Option<String>> {
        let max = if name.chars().count() <= 4 { 1 } else { 2 };
        Ok(self
            .branches()?
            .into_iter()
            .map(|(b, _)| (strsim::osa_distance(name, &b), b))
            .filter(|(d, b)| *d <= max && b != name)
            .min()
            .map(|(_, b)| b))
    }

    fn resolve_expr_as(&self, expr: &RevExpr, asked: &str) -> RepoResult<ObjectId> {
        let missing = |why: String| RepoError::RevisionNotFound {
            asked: asked.to_string(),
            why: Some(why),
        };
        match expr {
            RevExpr::Name(n) => self.resolve_name(n, asked),
            RevExpr::Ancestor(base, n) => {
                let id = self.resolve_expr_as(base, asked)?;
                let (mut left, mut seen) = (*n, 0u64);
                self.first_parents(id, &mut |_| {
                    seen += 1;
                    if left == 0 {
                        return true;
                    }
                    left -= 1;
                    false
                })?
                .ok_or_else(|| {
                    missing(format!(
                        "the history has {seen} commit{} (following first parents)",
                        if seen == 1 { "" } else { "s" }
                    ))
                })
            }
            RevExpr::Parent(base, n) => {
                let id = self.resolve_expr_as(base, asked)?;
                if *n == 0 {
                    return Ok(id);
                }
                let c = self.read_commit(&id)?;
                c.parents.get(*n as usize - 1).copied().ok_or_else(|| {
                    missing(format!(
                        "commit {} has {} parent{}",
                        id.short(8),
                        c.parents.len(),
                        if c.parents.len() == 1 { "" } else { "s" }
                    ))
                })
            }
            RevExpr::AtTime(base, when) => {
                let id = self.resolve_expr_as(base, asked)?;
                let mut oldest = None;
                self.first_parents(id, &mut |timestamp| {
                    oldest = Some(timestamp);
                    timestamp <= *when
                })?
                .ok_or_else(|| {
                    missing(match oldest {
                        Some(t) => format!(
                            "nothing at or before it; the oldest commit there is from {}",
                            super::revision::format_iso8601(t)
                        ),
                        None => "nothing at or before it".to_string(),
                    })
                })
            }
        }
    }

    /// Walks the first-parent chain from `start` (itself first) until `stop` says so for a
    /// commit (given its timestamp), and returns that commit; `None` when the chain
    /// ends first. The first [`DIRECT_STEPS`] commits are read from the store; a longer
    /// walk goes on in the commit graph cache, which knows every commit's first parent and
    /// timestamp without decoding it.
    fn first_parents(
        &self,
        start: ObjectId,
        stop: &mut dyn FnMut(i64) -> bool,
    ) -> RepoResult<Option<ObjectId>> {
        let mut id = start;
        for _ in 0..DIRECT_STEPS {
            let c = self.read_commit(&id)?;
            if stop(c.timestamp) {
                return Ok(Some(id));
            }
            match c.parents.first() {
                Some(p) => id = *p,
                None => return Ok(None),
            }
        }
        let graph = self.commit_graph(&[id], false)?;
        let mut pos = graph.position(&id).expect("the graph holds its tip");
        loop {
            if stop(graph.timestamp(pos)) {
                return Ok(Some(graph.id(pos)));
            }
            match graph.parents(pos).next() {
                Some(p) => pos = p,
                None => return Ok(None),
            }
        }
    }
}
