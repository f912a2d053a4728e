//! The commit graph cache: derived data, not history. It holds every known commit's parents,
//! root, timestamp and generation number, with Bloom filters of the keys each commit
//! changed, so that walks, merge bases and blame need not read and decode commits one by
//! one.
//!
//! It is kept beside the store (`<store>/cache/commit-graph`, only in memory for a store
//! without a directory), never hashed, never part of history, and can be deleted at any
//! time: everything in it is recomputed from the commits. Entries are named by commit id
//! and commits are immutable, so an entry can never be stale, only missing; entries for
//! commits the store does not hold (a cache copied from another store, commits removed by
//! gc) are never asked for and do no harm. A file that is unreadable, of another version,
//! fails its checksum or is inconsistent is ignored and rebuilt from the commits.
//!
//! Entries are appended in topological order (every parent before its children), so a
//! commit's parents are positions smaller than its own. Extending the graph to a tip reads
//! the commits that are not in it yet; change filters are computed separately, on demand
//! (blame), because they cost a tree diff each.
//!
//! Change filters: one per parent slot. A commit with parents has one filter per parent,
//! holding the encoded keys whose value id differs between the parent's tree and the
//! commit's tree; a first commit has one slot holding every key of its tree. A filter is
//! either not computed yet, "unknown" (more than [`MAX_FILTER_KEYS`] keys changed: every
//! key may have changed), or a Bloom filter of 20 bits per entry and 10 probes (no false
//! negatives; about 1 in 10,000 false positives). A filter with no words means nothing changed.
//! Besides the keys themselves, a filter holds, for each changed key, an entry for its
//! namespace and one for each run of its leading path segments ([`FilterKey::namespace`],
//! [`FilterKey::path_prefix`]), so that a log restricted to `preferences.*` or to a
//! namespace can pass over commits that changed nothing there without reading their trees.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

use xxhash_rust::xxh3::xxh3_128;

use super::{Repo, RepoResult};
use crate::key::{NS_END, SEG_SEP};
use crate::object::{ObjectError, ObjectId};
use crate::prolly::{IdMap, KeyRange};
use crate::store::write_cache_file;

mod columns;
mod derived;
use columns::{Column, Fixed, Image};
pub use derived::GraphCache;

/// More changed keys than this in one slot make its filter "unknown".
pub const MAX_FILTER_KEYS: usize = 4096;
const BITS_PER_KEY: usize = 20;
const PROBES: u64 = 10;
/// The filter parameters as recorded in the header: a file made with others is rebuilt.
const PARAMS: u32 = ((BITS_PER_KEY as u32) << 16) | PROBES as u32;
const MAGIC: &[u8; 8] = b"MEMCGR02";
/// First byte of a filter entry naming a namespace (never the first byte of an encoded key,
/// which is UTF-8).
const NAMESPACE_ENTRY: u8 = 0xFE;
/// First byte of a filter entry naming leading path segments.
const PREFIX_ENTRY: u8 = 0xFF;

/// Adds to `out` the entries a changed encoded key puts in a filter besides itself: its
/// namespace, and each run of its leading path segments (the whole path included).
fn key_entries(key: &[u8], out: &mut Vec<Vec<u8>>) {
    let Some(ns_end) = key.iter().position(|&b| b == NS_END) else {
        return;
    };
    let mut ns = vec![NAMESPACE_ENTRY];
    ns.extend_from_slice(&key[..ns_end]);
    out.push(ns);
    let path = &key[ns_end + 1..];
    for (i, &b) in path.iter().enumerate() {
        if b == SEG_SEP {
            let mut e = vec![PREFIX_ENTRY];
            e.extend_from_slice(&path[..i]);
            out.push(e);
        }
    }
    let mut e = vec![PREFIX_ENTRY];
    e.extend_from_slice(path);
    out.push(e);
}
const NONE: u32 = u32::MAX;
/// Filter length marking a filter not computed yet.
const NOT_COMPUTED: u32 = u32::MAX;
/// Filter length marking a slot where every key may have changed.
const UNKNOWN: u32 = u32::MAX - 1;
const HEADER: usize = 8 + 4 * 4;
const COMMIT_BYTES: usize = 32 + 32 + 8 + 4 + 4;
const SLOT_BYTES: usize = 12;
const CHECKSUM: usize = 16;

/// Where the commit graph cache of the store at `store_dir` lives.
pub fn cache_path(store_dir: &Path) -> PathBuf {
    store_dir.join("cache").join("commit-graph")
}

/// One parent slot of a commit: the parent (or none, for a first commit's slot) and its
/// change filter (`off`/`len` in words, `len` may be [`NOT_COMPUTED`] or [`UNKNOWN`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    parent: u32,
    off: u32,
    len: u32,
}

impl Fixed for Slot {
    const SIZE: usize = SLOT_BYTES;
    fn decode(b: &[u8]) -> Self {
        Slot {
            parent: u32::decode(&b[0..4]),
            off: u32::decode(&b[4..8]),
            len: u32::decode(&b[8..12]),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        for v in [self.parent, self.off, self.len] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// The answer of a change filter for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// The key's value is certainly the same as in the parent.
    No,
    /// The key's value may differ (or the filter is unknown): read the trees.
    Maybe,
}

/// A change filter as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Not computed yet.
    NotComputed,
    /// Too many keys changed: every key may have.
    Unknown,
    /// A Bloom filter's words (none: nothing changed).
    Bloom(Vec<u64>),
}

/// A key prepared for filter queries (its two hashes).
#[derive(Debug, Clone, Copy)]
pub struct FilterKey(u64, u64);

impl FilterKey {
    /// Hashes an encoded key.
    pub fn new(key: &[u8]) -> FilterKey {
        let h = xxh3_128(key);
        FilterKey(h as u64, ((h >> 64) as u64) | 1)
    }

    /// The entry every changed key of namespace `namespace` adds to a filter.
    pub fn namespace(namespace: &str) -> FilterKey {
        let mut b = vec![NAMESPACE_ENTRY];
        b.extend_from_slice(namespace.as_bytes());
        FilterKey::new(&b)
    }

    /// The entry every changed key whose first segments are those of the dotted path
    /// `prefix` (whatever its namespace) adds to a filter.
    pub fn path_prefix(prefix: &str) -> FilterKey {
        let mut b = vec![PREFIX_ENTRY];
        b.extend(prefix.bytes().map(|c| if c == b'.' { SEG_SEP } else { c }));
        FilterKey::new(&b)
    }

    fn bits(self, nbits: u64) -> impl Iterator<Item = u64> {
        (0..PROBES).map(move |i| self.0.wrapping_add(i.wrapping_mul(self.1)) % nbits)
    }
}

impl Default for CommitGraph {
    fn default() -> Self {
        CommitGraph::new()
    }
}

/// Lookups by id answered by scanning the ids before the id index is built: a read that asks
/// for a few commits (its tips, which are near the end) does not hash every id.
const SCANS_BEFORE_INDEX: u32 = 8;

/// The commit graph cache; see the module docs. A graph loaded from its file reads the file
/// in place (module `columns`); commits and filters added since are held in memory.
#[derive(Debug)]
pub struct CommitGraph {
    ids: Column<ObjectId>,
    roots: Column<ObjectId>,
    timestamps: Column<i64>,
    generations: Column<u32>,
    /// Slots of commit `i`: `slots[ends[i - 1]..ends[i]]` (from 0 for the first commit).
    ends: Column<u32>,
    slots: Column<Slot>,
    words: Column<u64>,
    /// Position by id, built on first need (see [`SCANS_BEFORE_INDEX`]). Ids are unique in
    /// every file this code writes; were one repeated, its last position would count, in
    /// the index as in a scan.
    index: OnceLock<IdMap<u32>>,
    /// Lookups answered by a scan so far.
    scans: AtomicU32,
    /// Changed since loaded or saved.
    dirty: bool,
}

impl Clone for CommitGraph {
    fn clone(&self) -> Self {
        CommitGraph {
            ids: self.ids.clone(),
            roots: self.roots.clone(),
            timestamps: self.timestamps.clone(),
            generations: self.generations.clone(),
            ends: self.ends.clone(),
            slots: self.slots.clone(),
            words: self.words.clone(),
            index: self.index.clone(),
            scans: AtomicU32::new(self.scans.load(Ordering::Relaxed)),
            dirty: self.dirty,
        }
    }
}

/// Two graphs are equal when they hold the same commits, slots and filters (whether their
/// id index is built yet does not matter).
impl PartialEq for CommitGraph {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids
            && self.roots == other.roots
            && self.timestamps == other.timestamps
            && self.generations == other.generations
            && self.ends == other.ends
            && self.slots == other.slots
            && self.words == other.words
            && self.dirty == other.dirty
    }
}

impl CommitGraph {
    /// An empty graph.
    pub fn new() -> CommitGraph {
        CommitGraph {
            ids: Column::default(),
            roots: Column::default(),
            timestamps: Column::default(),
            generations: Column::default(),
            ends: Column::default(),
            slots: Column::default(),
            words: Column::default(),
            index: OnceLock::new(),
            scans: AtomicU32::new(0),
            dirty: false,
        }
    }

    /// Number of commits.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the graph holds no commit.
    pub fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }

    /// Whether it changed since it was loaded or saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The position of a commit, if known.
    pub fn position(&self, id: &ObjectId) -> Option<u32> {
        if let Some(ix) = self.index.get() {
            return ix.get(id).copied();
        }
        if self.scans.fetch_add(1, Ordering::Relaxed) >= SCANS_BEFORE_INDEX {
            return self.index().get(id).copied();
        }
        (0..self.ids.len())
            .rev()
            .find(|&i| self.ids.get(i) == *id)
            .map(|p| p as u32)
    }

    /// The id index, built if it is not yet.
    fn index(&self) -> &IdMap<u32> {
        self.index.get_or_init(|| {
            let mut ix = IdMap::with_capacity_and_hasher(self.ids.len(), Default::default());
            for (i, id) in self.ids.iter().enumerate() {
                ix.insert(id, i as u32);
            }
            ix
        })
    }

    /// The id index, built if it is not yet, for a change.
    fn index_mut(&mut self) -> &mut IdMap<u32> {
        self.index();
        self.index.get_mut().expect("just built")
    }

    /// The commit at a position.
    pub fn id(&self, pos: u32) -> ObjectId {
        self.ids.get(pos as usize)
    }

    /// Its tree root.
    pub fn root(&self, pos: u32) -> ObjectId {
        self.roots.get(pos as usize)
    }

    /// Its timestamp.
    pub fn timestamp(&self, pos: u32) -> i64 {
        self.timestamps.get(pos as usize)
    }

    /// Its generation number: 1 for a first commit, else one more than its parents' maximum.
    pub fn generation(&self, pos: u32) -> u32 {
        self.generations.get(pos as usize)
    }

    fn slot_range(&self, pos: u32) -> std::ops::Range<usize> {
        let start = match pos {
            0 => 0,
            p => self.ends.get(p as usize - 1) as usize,
        };
        start..self.ends.get(pos as usize) as usize
    }

    /// The slots of a commit.
    fn slots_of(&self, pos: u32) -> impl Iterator<Item = Slot> + '_ {
        self.slot_range(pos).map(|i| self.slots.get(i))
    }

    /// Its parents' positions, in the commit's order.
    pub fn parents(&self, pos: u32) -> impl Iterator<Item = u32> + '_ {
        self.slots_of(pos)
            .filter(|s| s.parent != NONE)
            .map(|s| s.parent)
    }

    /// Slot `i` of commit `pos`.
    fn slot(&self, pos: u32, i: usize) -> Slot {
        let r = self.slot_range(pos);
        assert!(i < r.len(), "slot {i} of a commit with {}", r.len());
        self.slots.get(r.start + i)
    }

    /// Number of parents.
    pub fn parent_count(&self, pos: u32) -> usize {
        self.parents(pos).count()
    }

    /// The change filter of parent slot `i` of commit `pos`.
    pub fn filter(&self, pos: u32, i: usize) -> Filter {
        let s = self.slot(pos, i);
        match s.len {
            NOT_COMPUTED => Filter::NotComputed,
            UNKNOWN => Filter::Unknown,
            n => Filter::Bloom(
                (s.off as usize..(s.off + n) as usize)
                    .map(|w| self.words.get(w))
                    .collect(),
            ),
        }
    }

    /// The only parent of commit `pos` when it has exactly one and its change filter rules
    /// `key` out (the key's value is the parent's), in one look at its slot.
    pub fn unchanged_parent(&self, pos: u32, key: FilterKey) -> Option<u32> {
        let r = self.slot_range(pos);
        if r.len() != 1 {
            return None;
        }
        let s = self.slots.get(r.start);
        (s.parent != NONE && self.slot_rules_out(s, key)).then_some(s.parent)
    }

    /// Whether a slot's filter says `key` certainly did not change.
    fn slot_rules_out(&self, s: Slot, key: FilterKey) -> bool {
        if s.len == NOT_COMPUTED || s.len == UNKNOWN {
            return false;
        }
        let nbits = u64::from(s.len) * 64;
        s.len == 0
            || key
                .bits(nbits)
                .any(|b| self.words.get(s.off as usize + (b / 64) as usize) & (1 << (b % 64)) == 0)
    }

    /// Whether `key` may have changed between parent number `i` of commit `pos` and the
    /// commit (for a first commit, `i` = 0 asks whether its tree may hold the key).
    pub fn changed(&self, pos: u32, i: usize, key: FilterKey) -> Changed {
        if self.slot_rules_out(self.slot(pos, i), key) {
            Changed::No
        } else {
            Changed::Maybe
        }
    }

    fn filters_missing(&self, pos: u32) -> bool {
        self.slots_of(pos).any(|s| s.len == NOT_COMPUTED)
    }

    /// Appends a commit whose parents are all in the graph.
    fn push(&mut self, id: ObjectId, root: ObjectId, timestamp: i64, parents: &[u32]) {
        let pos = self.ids.len() as u32;
        let generation = parents
            .iter()
            .map(|&p| self.generations.get(p as usize))
            .max()
            .unwrap_or(0)
            .saturating_add(1);
        self.ids.push(id);
        self.roots.push(root);
        self.timestamps.push(timestamp);
        self.generations.push(generation);
        if parents.is_empty() {
            self.slots.push(Slot {
                parent: NONE,
                off: 0,
                len: NOT_COMPUTED,
            });
        }
        for &p in parents {
            self.slots.push(Slot {
                parent: p,
                off: 0,
                len: NOT_COMPUTED,
            });
        }
        self.ends.push(self.slots.len() as u32);
        self.index_mut().insert(id, pos);
        self.dirty = true;
    }

    fn set_filter(&mut self, slot: usize, keys: Option<&[Vec<u8>]>) {
        let mut s = self.slots.get(slot);
        match keys {
            None => {
                s.len = UNKNOWN;
                s.off = 0;
            }
            Some([]) => {
                s.len = 0;
                s.off = 0;
            }
            Some(keys) => {
                let mut entries = Vec::new();
                for k in keys {
                    key_entries(k, &mut entries);
                }
                entries.sort_unstable();
                entries.dedup();
                let n = ((keys.len() + entries.len()) * BITS_PER_KEY).div_ceil(64);
                let mut words = vec![0u64; n];
                let nbits = n as u64 * 64;
                for k in keys.iter().chain(&entries) {
                    for b in FilterKey::new(k).bits(nbits) {
                        words[(b / 64) as usize] |= 1 << (b % 64);
                    }
                }
                s.off = self.words.len() as u32;
                s.len = n as u32;
                self.words.extend(words);
            }
        }
        self.slots.set(slot, s);
        self.dirty = true;
    }

    /// The file bytes: see `store-format.md`, "Derived caches".
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.ids.len();
        let mut out = Vec::with_capacity(
            HEADER + n * COMMIT_BYTES + self.slots.len() * SLOT_BYTES + self.words.len() * 8 + 16,
        );
        out.extend_from_slice(MAGIC);
        for v in [n, self.slots.len(), self.words.len(), PARAMS as usize] {
            out.extend_from_slice(&(v as u32).to_le_bytes());
        }
        self.ids.encode_into(&mut out);
        self.roots.encode_into(&mut out);
        self.timestamps.encode_into(&mut out);
        self.generations.encode_into(&mut out);
        self.ends.encode_into(&mut out);
        self.slots.encode_into(&mut out);
        self.words.encode_into(&mut out);
        let sum = xxh3_128(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Reads the file bytes (copied); `None` when they are damaged, inconsistent or of
    /// another version.
    pub fn from_bytes(bytes: &[u8]) -> Option<CommitGraph> {
        CommitGraph::from_image(Arc::new(Image::Owned(bytes.into())))
    }

    /// The graph whose file bytes are `image`, read in place; `None` when they are damaged,
    /// inconsistent or of another version.
    fn from_image(image: Arc<Image>) -> Option<CommitGraph> {
        let bytes = &image[..];
        if bytes.len() < HEADER + CHECKSUM || &bytes[..8] != MAGIC {
            return None;
        }
        let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
        if xxh3_128(body).to_le_bytes() != sum {
            return None;
        }
        let u32_at = |b: &[u8], i: usize| u32::decode(&b[i..i + 4]);
        let n = u32_at(body, 8) as usize;
        let ns = u32_at(body, 12) as usize;
        let nw = u32_at(body, 16) as usize;
        let expect = (n as u64) * COMMIT_BYTES as u64
            + ns as u64 * SLOT_BYTES as u64
            + nw as u64 * 8
            + HEADER as u64;
        if body.len() as u64 != expect || u32_at(body, 20) != PARAMS {
            return None;
        }
        let mut at = HEADER;
        let mut take = |count: usize, size: usize| {
            let start = at;
            at += count * size;
            start
        };
        let g = CommitGraph {
            ids: Column::from_image(&image, take(n, 32), n),
            roots: Column::from_image(&image, take(n, 32), n),
            timestamps: Column::from_image(&image, take(n, 8), n),
            generations: Column::from_image(&image, take(n, 4), n),
            ends: Column::from_image(&image, take(n, 4), n),
            slots: Column::from_image(&image, take(ns, SLOT_BYTES), ns),
            words: Column::from_image(&image, take(nw, 8), nw),
            index: OnceLock::new(),
            scans: AtomicU32::new(0),
            dirty: false,
        };
        // Consistency: slots ascending and in range, parents before children, generations
        // and filter ranges right. A file that passes its checksum but not this was not
        // written by this code, and is not trusted.
        let (ends, slots, gens) = (g.ends.image(), g.slots.image(), g.generations.image());
        let generation_of = |i: usize| u32::decode(&gens[i * 4..i * 4 + 4]);
        let mut start = 0usize;
        for (i, e) in ends.chunks_exact(4).enumerate() {
            let end = u32::decode(e) as usize;
            if end <= start || end > ns {
                return None;
            }
            let mut generation = 0u32;
            for c in slots[start * SLOT_BYTES..end * SLOT_BYTES].chunks_exact(SLOT_BYTES) {
                let s = Slot::decode(c);
                if s.parent == NONE {
                    if end - start != 1 {
                        return None;
                    }
                } else {
                    if s.parent as usize >= i {
                        return None;
                    }
                    generation = generation.max(generation_of(s.parent as usize));
                }
                if s.len != NOT_COMPUTED
                    && s.len != UNKNOWN
                    && s.off as u64 + s.len as u64 > nw as u64
                {
                    return None;
                }
            }
            if generation_of(i) != generation.saturating_add(1) {
                return None;
            }
            start = end;
        }
        if start != ns {
            return None;
        }
        Some(g)
    }

    /// Keeps only the commits `keep` accepts whose parents are all kept (a kept commit's
    /// parents are kept, so positions stay in topological order); returns how many went.
    pub fn retain(&mut self, keep: &dyn Fn(&ObjectId) -> bool) -> usize {
        let mut new = CommitGraph::new();
        let mut map: Vec<u32> = vec![NONE; self.ids.len()];
        for i in 0..self.ids.len() {
            let pos = i as u32;
            let id = self.ids.get(i);
            if !keep(&id)
                || self
                    .slots_of(pos)
                    .any(|s| s.parent != NONE && map[s.parent as usize] == NONE)
            {
                continue;
            }
            map[i] = new.ids.len() as u32;
            let parents: Vec<u32> = self.parents(pos).map(|p| map[p as usize]).collect();
            new.push(id, self.roots.get(i), self.timestamps.get(i), &parents);
            let first = new.slot_range(new.ids.len() as u32 - 1).start;
            for (j, s) in self.slots_of(pos).enumerate() {
                let mut slot = new.slots.get(first + j);
                slot.len = s.len;
                if s.len != NOT_COMPUTED && s.len != UNKNOWN && s.len > 0 {
                    slot.off = new.words.len() as u32;
                    new.words
                        .extend((s.off..s.off + s.len).map(|w| self.words.get(w as usize)));
                }
                new.slots.set(first + j, slot);
            }
        }
        let gone = self.ids.len() - new.ids.len();
        if gone > 0 {
            *self = new;
        }
        gone
    }

    /// Loads the graph cached at `path`; missing or damaged gives an empty graph.
    pub fn load(path: &Path) -> CommitGraph {
        Image::map(path)
            .and_then(|image| CommitGraph::from_image(Arc::new(image)))
            .unwrap_or_default()
    }

    /// Writes the graph to `path`, atomically and durably (a synced temporary file renamed
    /// over the old one).
    pub fn save(&mut self, path: &Path) -> RepoResult<()> {
        write_cache_file(path, &self.to_bytes())?;
        self.dirty = false;
        Ok(())
    }

    /// Adds every commit reachable from `tips` that the graph lacks, reading it from the
    /// store (filters are left to [`CommitGraph::fill_filters`]).
    pub fn extend(&mut self, repo: &Repo, tips: &[ObjectId]) -> RepoResult<()> {
        // Depth-first, appending a commit once all its parents are in.
        let mut stack: Vec<(ObjectId, super::Commit)> = Vec::new();
        let mut on_stack: HashMap<ObjectId, ()> = HashMap::new();
        self.index();
        let known = |g: &CommitGraph, id: &ObjectId| g.index().contains_key(id);
        for t in tips {
            if known(self, t) || on_stack.contains_key(t) {
                continue;
            }
            stack.push((*t, repo.read_commit(t)?));
            on_stack.insert(*t, ());
            while let Some((id, c)) = stack.last() {
                let missing = c.parents.iter().find(|p| !known(self, p)).copied();
                match missing {
                    Some(p) => {
                        if on_stack.contains_key(&p) {
                            return Err(ObjectError::Corrupt {
                                id: *id,
                                reason: "the commit graph has a cycle".into(),
                            }
                            .into());
                        }
                        let pc = repo.read_commit(&p)?;
                        stack.push((p, pc));
                        on_stack.insert(p, ());
                    }
                    None => {
                        let (id, c) = stack.pop().expect("non-empty");
                        on_stack.remove(&id);
                        let ix = self.index();
                        let parents: Vec<u32> = c.parents.iter().map(|p| ix[p]).collect();
                        self.push(id, c.root, c.timestamp, &parents);
                    }
                }
            }
        }
        Ok(())
    }

    /// The commits reachable from `tips` (which must be in the graph) whose change filters
    /// are not computed yet.
    pub fn missing_filters(&self, tips: &[ObjectId]) -> Vec<u32> {
        // Usually every filter is computed (each blame saves those it computed): one pass
        // over the slots says so without walking the graph.
        if self.slots.iter().all(|s| s.len != NOT_COMPUTED) {
            return Vec::new();
        }
        let mut seen = vec![false; self.ids.len()];
        let mut stack: Vec<u32> = Vec::new();
        for t in tips {
            let t = self.position(t).expect("tips are in the graph");
            if !seen[t as usize] {
                seen[t as usize] = true;
                stack.push(t);
            }
        }
        let mut todo = Vec::new();
        while let Some(pos) = stack.pop() {
            if self.filters_missing(pos) {
                todo.push(pos);
            }
            for s in self.slots_of(pos) {
                if s.parent != NONE && !seen[s.parent as usize] {
                    seen[s.parent as usize] = true;
                    stack.push(s.parent);
                }
            }
        }
        todo
    }

    /// Computes the change filters of the commits `todo` from their trees.
    pub fn fill_filters(&mut self, repo: &Repo, todo: &[u32]) -> RepoResult<()> {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for &pos in todo {
            let root = self.root(pos);
            for slot in self.slot_range(pos) {
                let s = self.slots.get(slot);
                if s.len != NOT_COMPUTED {
                    continue;
                }
                keys.clear();
                let mut over = false;
                if s.parent == NONE {
                    repo.tree().scan(&root, &KeyRange::all(), &mut |k, _| {
                        over = keys.len() == MAX_FILTER_KEYS;
                        if !over {
                            keys.push(k.to_vec());
                        }
                        !over
                    })?;
                } else {
                    let proot = self.root(s.parent);
                    if proot != root {
                        repo.tree().diff(&proot, &root, &mut |c| {
                            over = keys.len() == MAX_FILTER_KEYS;
                            if !over {
                                keys.push(c.key.to_vec());
                            }
                            !over
                        })?;
                    }
                }
                self.set_filter(slot, (!over).then_some(&keys[..]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
