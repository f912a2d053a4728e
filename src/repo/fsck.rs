//! Consistency check of the whole store: refs, commits, tree nodes and values.
//!
//! Every object reachable from a ref is fetched once, re-hashed under the kind its referrer
//! expects, decoded strictly, re-encoded and compared byte for byte. Tree nodes get the
//! invariant checks of [`crate::prolly::NodeStore::verify`] (levels, strict key order,
//! children's first/last keys and counts, size bound, chunk boundaries), but incrementally:
//! each node is checked once however many commits share it, so a long history costs
//! O(distinct objects), where verifying every commit's tree would cost O(commits x tree).
//! The check keeps going after a problem and reports every one.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::{Commit, Repo, BRANCH_PREFIX, HEAD, SYMBOLIC};
use crate::object::{peek_kind, Blob, Kind, Object, ObjectId};
use crate::prolly::chunker::{is_boundary, MAX_NODE};
use crate::prolly::Node;
use crate::store::{ObjectStore, RefStore};

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// An object, by id.
    Object(ObjectId),
    /// A ref, by name.
    Ref(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Object(id) => write!(f, "object {id}"),
            Subject::Ref(name) => write!(f, "ref {name}"),
        }
    }
}

/// The kind of problem found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A reachable object is not in the store.
    Missing,
    /// Stored bytes do not hash to their id, do not decode, or do not re-encode to the same
    /// bytes.
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

/// What a checked node tells its parent.
#[derive(Clone)]
struct Summary {
    level: u8,
    items: usize,
    first: Option<Box<[u8]>>,
    last: Option<Box<[u8]>>,
    count: u64,
    ends_at_boundary: bool,
    last_child: Option<ObjectId>,
}

struct Checker<'a> {
    repo: &'a Repo,
    rep: FsckReport,
    fetched: HashSet<ObjectId>,
    nodes: HashMap<ObjectId, Option<Summary>>,
    values: HashSet<ObjectId>,
    roots: HashSet<ObjectId>,
    spine: HashSet<ObjectId>,
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
    fn fetch(&mut self, id: &ObjectId, kind: Kind, from: &str) -> Option<Vec<u8>> {
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
                    format!("unreadable kind tag: {e} ({from})"),
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

    fn check_commits(&mut self, starts: Vec<(ObjectId, String)>) {
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
            let here = format!("root of commit {}", id.short(12));
            self.check_root(&c.root, &here);
            for (i, p) in c.parents.iter().enumerate().rev() {
                if !seen.contains(p) {
                    todo.push((*p, format!("parent {} of commit {}", i + 1, id.short(12))));
                }
            }
        }
    }

    fn check_root(&mut self, root: &ObjectId, from: &str) {
        let Some(s) = self.check_node(root, from) else {
            return;
        };
        if self.roots.insert(*root) && s.level > 0 && s.items < 2 {
            self.object(
                root,
                FindingKind::Invariant,
                "internal root with fewer than two children".into(),
            );
        }
    }

    /// Checks one node and (once) everything below it; returns what its parent needs.
    fn check_node(&mut self, id: &ObjectId, from: &str) -> Option<Summary> {
        if let Some(s) = self.nodes.get(id) {
            return s.clone();
        }
        let summary = self.check_node_once(id, from);
        self.nodes.insert(*id, summary.clone());
        summary
    }

    fn check_node_once(&mut self, id: &ObjectId, from: &str) -> Option<Summary> {
        let bytes = self.fetch(id, Kind::Node, from)?;
        let node = self.decode::<Node>(id, &bytes, from)?;
        let mut bad = Vec::new();
        let size = node.items_len();
        if size > MAX_NODE {
            bad.push(format!("node holds {size} bytes of items, over {MAX_NODE}"));
        }
        if node
            .items
            .windows(2)
            .any(|w| w[0].last_key() >= &w[1].key[..])
        {
            bad.push("items not in strictly ascending key order".into());
        }
        if node.level > 0 && node.items.iter().any(|it| it.key > it.last) {
            bad.push("an item's first key is after its last key".into());
        }
        let mut s = 0;
        let mut ends_at_boundary = false;
        for (i, it) in node.items.iter().enumerate() {
            let before = s;
            s += it.encoded_len(node.level);
            ends_at_boundary = is_boundary(it.last_key(), node.level, before, s);
            if ends_at_boundary && i + 1 < node.items.len() {
                bad.push(format!("chunk boundary after item {i} inside the node"));
                break;
            }
        }
        let here = format!("child of node {}", id.short(12));
        if node.level == 0 {
            let vfrom = format!("value in leaf {}", id.short(12));
            for it in &node.items {
                self.check_value(&it.id, &vfrom);
            }
        } else {
            let n = node.items.len();
            for (i, it) in node.items.iter().enumerate() {
                let Some(child) = self.check_node(&it.id, &here) else {
                    continue;
                };
                let c = it.id.short(12);
                if child.level + 1 != node.level {
                    bad.push(format!("child {c} has level {}", child.level));
                }
                if child.count == 0 {
                    bad.push(format!("child {c} is empty"));
                } else {
                    if child.first.as_deref() != Some(&it.key[..]) {
                        bad.push(format!("child {c} first key differs from its item"));
                    }
                    if child.last.as_deref() != Some(it.last_key()) {
                        bad.push(format!("child {c} last key differs from its item"));
                    }
                }
                if child.count != it.count {
                    bad.push(format!(
                        "child {c} holds {} keys, its item says {}",
                        child.count, it.count
                    ));
                }
                if i + 1 < n {
                    self.require_boundary(&it.id);
                }
            }
        }
        for b in bad {
            self.object(id, FindingKind::Invariant, b);
        }
        let leaf = node.level == 0;
        Some(Summary {
            level: node.level,
            items: node.items.len(),
            first: node.first_key().map(Into::into),
            last: node.last_key().map(Into::into),
            count: if leaf {
                node.items.len() as u64
            } else {
                node.count()
            },
            ends_at_boundary,
            last_child: if leaf {
                None
            } else {
                node.items.last().map(|it| it.id)
            },
        })
    }

    /// A node that is not the last of its level must end at a chunk boundary, and so must
    /// its last child, and so on down (each checked once).
    fn require_boundary(&mut self, id: &ObjectId) {
        let mut cur = *id;
        loop {
            if !self.spine.insert(cur) {
                return;
            }
            let Some(Some(s)) = self.nodes.get(&cur).cloned() else {
                return;
            };
            if !s.ends_at_boundary {
                self.object(
                    &cur,
                    FindingKind::Invariant,
                    "node ends where the chunking rule puts no boundary".into(),
                );
            }
            match s.last_child {
                Some(c) => cur = c,
                None => return,
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

impl Repo {
    /// Checks the whole store and reports every problem, never stopping at the first.
    ///
    /// Refs: `HEAD` is set and is either a symbolic ref to an existing branch or a commit id;
    /// every other ref holds a commit id. From every ref, every reachable commit (through all
    /// parents), tree node and value is fetched once, its kind and hash checked, decoded
    /// strictly and re-encoded to the same bytes. Commits' roots must be tree nodes and their
    /// parents commits ([`FindingKind::WrongKind`] otherwise). Tree nodes are checked for the
    /// invariants of store-format.md section 6, once per node however many commits share
    /// it. Stored objects that nothing reaches are counted, not reported.
    pub fn fsck(&self) -> FsckReport {
        let mut ck = Checker {
            repo: self,
            rep: FsckReport::default(),
            fetched: HashSet::new(),
            nodes: HashMap::new(),
            values: HashSet::new(),
            roots: HashSet::new(),
            spine: HashSet::new(),
        };
        let starts = ck.check_refs();
        ck.check_commits(starts);
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
