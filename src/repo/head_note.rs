//! `HEAD` as of the store's last close, for readers that do not open the store.
//!
//! The repository describes `HEAD` to the store ([`Store::note_head`]) when it opens and
//! after each ref move; the store publishes the latest description in its head file when it
//! closes, if nothing changed after it. A reader that finds a valid head file knows the
//! commit and tree root `HEAD` had at that close, and can answer from caches keyed by that
//! root (the lexical index) without opening the engine.
//!
//! Note layout: 1 byte (0: attached to a branch, 1: detached), the commit id (32), the tree
//! root (32), then the branch name (UTF-8, empty when detached).

use std::path::Path;

use super::{Head, Repo};
use crate::object::ObjectId;
use crate::store::Store;

/// What `HEAD` resolved to when the store was last closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestingHead {
    /// The branch (or commit) `HEAD` pointed at.
    pub head: Head,
    /// The commit it resolved to.
    pub commit: ObjectId,
    /// That commit's tree root.
    pub root: ObjectId,
}

impl RestingHead {
    fn to_note(&self) -> Vec<u8> {
        let mut w = Vec::with_capacity(65 + 16);
        w.push(matches!(self.head, Head::Detached(_)) as u8);
        w.extend_from_slice(self.commit.as_bytes());
        w.extend_from_slice(self.root.as_bytes());
        if let Head::Branch(b) = &self.head {
            w.extend_from_slice(b.as_bytes());
        }
        w
    }

    fn from_note(note: &[u8]) -> Option<RestingHead> {
        let (&kind, rest) = note.split_first()?;
        if rest.len() < 64 {
            return None;
        }
        let (ids, name) = rest.split_at(64);
        let id = |b: &[u8]| b.try_into().ok().map(ObjectId::from_bytes);
        let commit = id(&ids[..32])?;
        let root = id(&ids[32..])?;
        let head = match kind {
            0 => Head::Branch(
                String::from_utf8(name.to_vec())
                    .ok()
                    .filter(|n| !n.is_empty())?,
            ),
            1 if name.is_empty() => Head::Detached(commit),
            _ => return None,
        };
        Some(RestingHead { head, commit, root })
    }
}

impl Repo {
    /// Describes `HEAD` as it is now to the store, which publishes the description when it
    /// closes unless a ref moves after it. Best effort: on any error nothing is noted, and
    /// readers of the head file fall back to opening the store.
    pub fn note_head(&self) {
        let version = self.store.refs_version();
        let resolved = self.head().and_then(|head| {
            let commit = match &head {
                Head::Branch(b) => self.branch_tip(b)?,
                Head::Detached(id) => *id,
            };
            let root = self.root_of(&commit)?;
            Ok(RestingHead { head, commit, root })
        });
        if let Ok(r) = resolved {
            self.store.note_head(version, r.to_note());
        }
    }

    /// `HEAD` as of the last close of the store in directory `store_dir`, read without
    /// opening or locking it; `None` when that is not known exactly (the store was opened
    /// since, a writer stopped half way, or there is no head file).
    pub fn resting_head(store_dir: &Path) -> Option<RestingHead> {
        RestingHead::from_note(&Store::read_head_note(store_dir)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_reject_garbage() {
        let c = ObjectId::from_bytes([7; 32]);
        let r = ObjectId::from_bytes([9; 32]);
        for head in [Head::Branch("agent/a".into()), Head::Detached(c)] {
            let h = RestingHead {
                head,
                commit: c,
                root: r,
            };
            assert_eq!(RestingHead::from_note(&h.to_note()), Some(h.clone()));
            let note = h.to_note();
            assert_eq!(RestingHead::from_note(&note[..64]), None);
        }
        let mut bad = vec![0u8];
        bad.extend_from_slice(&[1; 64]);
        assert_eq!(RestingHead::from_note(&bad), None, "a branch needs a name");
        bad[0] = 2;
        assert_eq!(RestingHead::from_note(&bad), None, "unknown kind");
        let mut detached_named = vec![1u8];
        detached_named.extend_from_slice(&[1; 64]);
        detached_named.extend_from_slice(b"main");
        assert_eq!(RestingHead::from_note(&detached_named), None);
    }
}
