//! Consistency check of the whole store: refs, commits, tree nodes and values.
//!
//! Every object reachable from a ref is fetched once, re-hashed under the kind its referrer
//! expects, decoded strictly, re-encoded and compared byte for byte. Tree nodes get the
//! tree layer's invariant checks ([`crate::prolly::TreeChecker`], the same as
//! [`crate::prolly::NodeStore::verify`]: levels, strict key order, children's first/last
//! keys and counts, size bound, chunk boundaries), once per node however many commits share
//! it, so a long history costs O(distinct objects), where verifying every commit's tree
//! would cost O(commits x tree).
//! The check keeps going after a problem and reports every one.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use super::{Commit, Repo, BRANCH_PREFIX, HEAD, SYMBOLIC};
use crate::object::{peek_kind, unreadable_kind, Blob, Kind, Object, ObjectId};
use crate::prolly::{Node, NodeSource, TreeChecker};
use crate::store::{Backend, ObjectStore, RefStore, StoreError};

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// An object, by id.
    Object(ObjectId),
    /// A ref, by name.
    Ref(String),
    /// A file of the store, relative to its directory (`packs/pack-00000001`).
    File(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Object(id) => write!(f, "object {id}"),
            Subject::Ref(name) => write!(f, "ref {name}"),
            Subject::File(name) => write!(f, "file {name}"),
        }
    }
}

/// The kind of problem found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A reachable object is not in the store.
    Missing,
    /// Stored bytes do not hash to their id, do not decode, or do not re-encode to the same
    /// bytes; or the stored copy is not whole; or a store file is damaged as a whole (a pack
    /// without its magic).
    Corrupt,
    /// A sound object of another kind than its referrer expects (e.g. a parent that is a
    /// tree node).
    WrongKind,
    /// A tree node that breaks a tree invariant.
    Invariant,
    /// A ref whose value is unreadable or names no branch.
    BadRef,
    /// The store failed to read (an engine error, not a verdict on the data).
    Unreadable,
}

/// One problem, naming the object or ref at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The object or ref at fault.
    pub subject: Subject,
    /// What kind of problem.
    pub kind: FindingKind,
    /// What exactly, and where it was reached from.
    pub detail: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}: {}", self.subject, self.kind, self.detail)
    }
}

/// What [`Repo::fsck`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckReport {
    /// Distinct reachable objects fetched and checked.
    pub objects_checked: u64,
    /// Commits among them.
    pub commits_checked: u64,
    /// Refs examined.
    pub refs_checked: u64,
    /// Every problem found; empty for a sound store.
    pub findings: Vec<Finding>,
    /// Stored objects no ref reaches (information, not a problem: gc removes them).
    pub unreachable_objects: u64,
}

impl FsckReport {
    /// Whether nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Whether some finding names `id`.
    pub fn names(&self, id: &ObjectId) -> bool {
        self.findings
            .iter()
            .any(|f| f.subject == Subject::Object(*id))
    }
}

struct Checker<'a> {
    repo: &'a Repo,
    rep: FsckReport,
    fetched: HashSet<ObjectId>,
    values: HashSet<ObjectId>,
    /// Where the root being checked was reached from.
    root_from: String,
}

impl Checker<'_> {
    fn find(&mut self, subject: Subject, kind: FindingKind, detail: String) {
        self.rep.findings.push(Finding {
            subject,
            kind,
            detail,
        });
    }

    fn object(&mut self, id: &ObjectId, kind: FindingKind, detail: String) {
        self.find(Subject::Object(*id), kind, detail);
    }

    /// Fetches `id`, expecting `kind`; checks kind and hash. `from` says who refers to it.
    fn fetch(&mut self, id: &ObjectId, kind: Kind, from: &str) -> Option<crate::store::Bytes> {
        let bytes = match self.repo.store.get(id.as_bytes()) {
            Ok(Some(b)) => b,
            Ok(None) => {
                self.object(
                    id,
                    FindingKind::Missing,
                    format!("missing {} {from}", kind.name()),
                );
                return None;
            }
            Err(StoreError::Damaged { damage, .. }) => {
                if self.fetched.insert(*id) {
                    self.rep.objects_checked += 1;
                }
                self.object(
                    id,
                    FindingKind::Corrupt,
                    format!(
                        "the stored copy of this {} is damaged: {damage} ({from})",
                        kind.name()
                    ),
                );
                return None;
            }
            Err(e) => {
                self.object(id, FindingKind::Unreadable, format!("{e} ({from})"));
                return None;
            }
        };
        if self.fetched.insert(*id) {
            self.rep.objects_checked += 1;
        }
        match peek_kind(&bytes) {
            Err(e) => {
                self.object(
                    id,
                    FindingKind::Corrupt,
                    format!("{} ({from})", unreadable_kind(&bytes, &e)),
                );
                return None;
            }
            Ok(found) if found != kind => {
                let (k, what) = if ObjectId::of(found, &bytes) == *id {
                    (FindingKind::WrongKind, "a sound")
                } else {
                    (FindingKind::Corrupt, "bytes tagged as a")
                };
                self.object(
                    id,
                    k,
                    format!(
                        "expected a {}, found {what} {} ({from})",
                        kind.name(),
                        found.name()
                    ),
                );
                return None;
            }
            Ok(_) => {}
        }
        if ObjectId::of(kind, &bytes) != *id {
            self.object(
                id,
                FindingKind::Corrupt,
                format!("content does not match its id ({from})"),
            );
            return None;
        }
        Some(bytes)
    }

    /// Decodes strictly and checks that the object re-encodes to the same bytes.
    fn decode<T: Object>(&mut self, id: &ObjectId, bytes: &[u8], from: &str) -> Option<T> {
        match T::decode(bytes) {
            Ok(v) => {
                if v.encode() != bytes {
                    self.object(
                        id,
                        FindingKind::Corrupt,
                        format!("does not re-encode to its stored bytes ({from})"),
                    );
                    return None;
                }
                Some(v)
            }
            Err(e) => {
                self.object(
                    id,
                    FindingKind::Corrupt,
                    format!("does not decode: {e} ({from})"),
                );
                None
            }
        }
    }

    fn check_commits(&mut self, trees: &mut TreeChecker, starts: Vec<(ObjectId, String)>) {
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut todo = starts;
        todo.reverse();
        while let Some((id, from)) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(bytes) = self.fetch(&id, Kind::Commit, &from) else {
                continue;
            };
            let Some(c) = self.decode::<Commit>(&id, &bytes, &from) else {
                continue;
            };
            self.rep.commits_checked += 1;
            self.root_from = format!("root of commit {}", id.short(12));
            trees.check_root(self, &c.root);
            for (i, p) in c.parents.iter().enumerate().rev() {
                if !seen.contains(p) {
                    todo.push((*p, format!("parent {} of commit {}", i + 1, id.short(12))));
                }
            }
        }
    }

    fn check_value(&mut self, id: &ObjectId, from: &str) {
        if !self.values.insert(*id) {
            return;
        }
        if let Some(bytes) = self.fetch(id, Kind::Blob, from) {
            self.decode::<Blob>(id, &bytes, from);
        }
    }

    /// Checks the refs; returns the commits they name, with where each was named.
    fn check_refs(&mut self) -> Vec<(ObjectId, String)> {
        let refs = match self.repo.store.list_refs("") {
            Ok(r) => r,
            Err(e) => {
                self.find(
                    Subject::Ref(String::new()),
                    FindingKind::Unreadable,
                    format!("cannot list refs: {e}"),
                );
                return Vec::new();
            }
        };
        let names: HashSet<&str> = refs.iter().map(|(n, _)| n.as_str()).collect();
        let mut out = Vec::new();
        if !names.contains(HEAD) {
            self.find(
                Subject::Ref(HEAD.into()),
                FindingKind::BadRef,
                "HEAD is not set".into(),
            );
        }
        for (name, raw) in &refs {
            self.rep.refs_checked += 1;
            if name == HEAD {
                if let Some(rest) = raw.strip_prefix(SYMBOLIC.as_bytes()) {
                    let target = std::str::from_utf8(rest).ok();
                    match target {
                        Some(t) if t.starts_with(BRANCH_PREFIX) && names.contains(t) => {}
                        Some(t) if t.starts_with(BRANCH_PREFIX) => self.find(
                            Subject::Ref(HEAD.into()),
                            FindingKind::BadRef,
                            format!("HEAD names branch ref {t}, which does not exist"),
                        ),
                        _ => self.find(
                            Subject::Ref(HEAD.into()),
                            FindingKind::BadRef,
                            "HEAD holds a symbolic ref that names no branch".into(),
                        ),
                    }
                    continue;
                }
            }
            match <[u8; 32]>::try_from(raw.as_slice()) {
                Ok(b) => out.push((ObjectId::from_bytes(b), format!("named by ref {name}"))),
                Err(_) => self.find(
                    Subject::Ref(name.clone()),
                    FindingKind::BadRef,
                    format!("holds {} bytes, not a commit id", raw.len()),
                ),
            }
        }
        out
    }
}

impl Checker<'_> {
    /// Checks the store's files as wholes (a pack's magic).
    fn check_files(&mut self) {
        match self.repo.store.check_files() {
            Ok(damaged) => {
                for d in damaged {
                    self.find(Subject::File(d.file), FindingKind::Corrupt, d.problem);
                }
            }
            Err(e) => self.find(
                Subject::File(String::new()),
                FindingKind::Unreadable,
                format!("cannot check the store's files: {e}"),
            ),
        }
    }
}

/// Tree nodes are fetched and decoded like every object; their invariants are the tree
/// layer's, reported as [`FindingKind::Invariant`].
impl NodeSource for Checker<'_> {
    fn load(&mut self, id: &ObjectId, parent: Option<&ObjectId>) -> Option<Arc<Node>> {
        let from = match parent {
            Some(p) => format!("child of node {}", p.short(12)),
            None => self.root_from.clone(),
        };
        let bytes = self.fetch(id, Kind::Node, &from)?;
        self.decode::<Node>(id, &bytes, &from).map(Arc::new)
    }

    fn visit(&mut self, id: &ObjectId, node: &Node) {
        if node.level == 0 {
            let from = format!("value in leaf {}", id.short(12));
            for it in &node.items {
                self.check_value(&it.id, &from);
            }
        }
    }

    fn violation(&mut self, id: &ObjectId, problem: String) {
        self.object(id, FindingKind::Invariant, problem);
    }
}

impl Repo {
    /// Checks the whole store and reports every problem, never stopping at the first.
    ///
    /// Refs: `HEAD` is set and is either a symbolic ref to an existing branch or a commit id;
    /// every other ref holds a commit id. From every ref, every reachable commit (through all
    /// parents), tree node and value is fetched once, its kind and hash checked, decoded
    /// strictly and re-encoded to the same bytes. Commits' roots must be tree nodes and their
    /// parents commits ([`FindingKind::WrongKind`] otherwise). Tree nodes are checked for the
    /// invariants of store-format.md section 6, once per node however many commits share
    /// it. Every pack file must begin with the pack magic. Stored objects that nothing
    /// reaches are counted, not reported.
    pub fn fsck(&self) -> FsckReport {
        let mut ck = Checker {
            repo: self,
            rep: FsckReport::default(),
            fetched: HashSet::new(),
            values: HashSet::new(),
            root_from: String::new(),
        };
        let starts = ck.check_refs();
        ck.check_commits(&mut TreeChecker::new(), starts);
        ck.check_files();
        let mut unreachable = 0u64;
        let fetched = &ck.fetched;
        let listed = self.store.for_each_id(&mut |raw| {
            if !fetched.contains(&ObjectId::from_bytes(raw)) {
                unreachable += 1;
            }
            true
        });
        let mut rep = ck.rep;
        if let Err(e) = listed {
            rep.findings.push(Finding {
                subject: Subject::Ref(String::new()),
                kind: FindingKind::Unreadable,
                detail: format!("cannot list objects: {e}"),
            });
        }
        rep.unreachable_objects = unreachable;
        rep
    }
}
