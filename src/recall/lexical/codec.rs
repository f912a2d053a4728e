//! The cache file: the whole index as one file part (layout in store-format.md, "Derived
//! caches"), read in place; and the byte readers and writers the delta file shares.

use std::path::Path;
use std::sync::Arc;

use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use super::file_part::{copied_map, Base, Bytes, Layout, ParentRow, Table, BLOCK};
use super::tables::{DocRow, DocTables};
use super::{LexicalIndex, Params};
use crate::object::ObjectId;
use crate::recall::{CacheError, RecallError, RecallResult};

/// First bytes of a full cache file (layout version 8).
const CACHE_MAGIC: &[u8] = b"MEMLEX08";

/// How many counts a cache file's header holds.
const COUNTS: usize = 15;

/// Bytes of a full cache file before its tables: magic, key weight, root, total length,
/// the counts.
const HEADER_LEN: usize = 8 + 8 + 33 + 8 + 4 * COUNTS;

/// Terms held by at least this many documents have their frequencies under each parent
/// stored (see [`super::file_part::Base::parent_sums`]); rarer ones are summed from their
/// postings when asked.
pub(super) const PARENT_SUMS_FROM: usize = 64;

/// Bytes of one per-parent entry of a term: parent number, the sums of its key-path and
/// content frequencies, the documents that hold it (u32 each), then the largest key-path
/// and content frequencies and the smallest of the documents that hold it (u16 each).
pub(super) const PARENT_ROW: usize = 24;

/// The counts a cache file's header holds: documents, terms, postings, parents, namespaces,
/// the byte lengths of the key, term, namespace, path, content and parent-key texts, the
/// stored per-parent sums, the actors, the byte length of their names and the documents'
/// actor numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    n: usize,
    nt: usize,
    np: usize,
    ng: usize,
    nk: usize,
    kb: usize,
    tb: usize,
    nb: usize,
    pb: usize,
    cb: usize,
    gb: usize,
    ns: usize,
    na: usize,
    ab: usize,
    da: usize,
}

impl Counts {
    fn list(&self) -> [usize; COUNTS] {
        [
            self.n, self.nt, self.np, self.ng, self.nk, self.kb, self.tb, self.nb, self.pb,
            self.cb, self.gb, self.ns, self.na, self.ab, self.da,
        ]
    }

    /// Where each table lies and the file's whole length, or `None` when that overflows.
    fn layout(&self) -> Option<(Layout, usize)> {
        let mut at = HEADER_LEN;
        let mut table = |n: usize, width: usize| -> Option<Table> {
            let t = Table { at, n };
            at = at.checked_add(n.checked_mul(width)?)?;
            Some(t)
        };
        let c = self;
        let mut t = Layout {
            term_off: table(c.nt + 1, 4)?,
            term_text: table(c.tb, 1)?,
            post_off: table(c.nt + 1, 4)?,
            postings: table(c.np, 8)?,
            key_off: table(c.n + 1, 4)?,
            keys: table(c.kb, 1)?,
            ns_off: table(c.nk + 1, 4)?,
            ns_text: table(c.nb, 1)?,
            doc_ns: table(c.n, 4)?,
            path_off: table(c.n + 1, 4)?,
            path_text: table(c.pb, 1)?,
            content_off: table(c.n + 1, 4)?,
            content_text: table(c.cb, 1)?,
            values: table(c.n, 32)?,
            timestamps: table(c.n, 8)?,
            lens: table(c.n, 8)?,
            parents: table(c.n, 4)?,
            dates: table(c.n, 9)?,
            date_order: table(c.n, 4)?,
            actor_off: table(c.na + 1, 4)?,
            actor_text: table(c.ab, 1)?,
            doc_actor_off: table(c.n + 1, 4)?,
            doc_actors: table(c.da, 4)?,
            actor_doc_off: table(c.na + 1, 4)?,
            actor_docs: table(c.da, 4)?,
            pkey_off: table(c.ng + 1, 4)?,
            pkey_text: table(c.gb, 1)?,
            parent_len: table(c.ng, 8)?,
            parent_docs: table(c.ng, 4)?,
            psum_off: table(c.nt + 1, 4)?,
            psums: table(c.ns, PARENT_ROW)?,
            sums: Table::default(),
        };
        let body = table(0, 0)?.at;
        t.sums = table(body.div_ceil(BLOCK), 8)?;
        let end = table(0, 0)?.at;
        Some((t, end.checked_add(16)?))
    }
}

/// Texts concatenated, with their offsets (first 0).
pub(super) struct Texts {
    off: Vec<u32>,
    text: Vec<u8>,
}

impl Texts {
    pub(super) fn new() -> Self {
        Texts {
            off: vec![0],
            text: Vec::new(),
        }
    }

    /// Appends one; false when the text passes what a u32 offset can address.
    pub(super) fn push(&mut self, b: &[u8]) -> bool {
        self.text.extend_from_slice(b);
        match u32::try_from(self.text.len()) {
            Ok(o) => {
                self.off.push(o);
                true
            }
            Err(_) => false,
        }
    }

    fn write_to<W: std::io::Write>(&self, w: &mut Blocks<'_, W>) -> std::io::Result<()> {
        w.u32s(&self.off)?;
        w.put(&self.text)
    }
}

impl LexicalIndex {
    /// The whole index as bytes, for a cache file (layout in store-format.md, "Derived
    /// caches"): both parts merged into one file part, ready to search in place. An error
    /// when the index is too large for the format's 32-bit offsets, or when its file part
    /// turned out damaged while it was read.
    pub fn to_bytes(&self) -> RecallResult<Vec<u8>> {
        let too_large = || RecallError::from(CacheError::TooLarge);
        let order = self.live_in_key_order();
        let mut renumber = vec![u32::MAX; self.base.n_docs() + self.docs.len()];
        for (i, &d) in order.iter().enumerate() {
            renumber[d as usize] = i as u32;
        }
        let mut terms = Texts::new();
        let mut post_off = vec![0u32];
        let mut postings: Vec<super::index::Posting> = Vec::new();
        for (name, t) in self.terms_after(None) {
            let start = postings.len();
            self.each_posting(t, |p| {
                postings.push(super::index::Posting {
                    doc: renumber[p.doc as usize],
                    ..*p
                })
            });
            if postings.len() == start {
                continue;
            }
            postings[start..].sort_unstable_by_key(|p| p.doc);
            let np = u32::try_from(postings.len()).map_err(|_| too_large())?;
            if !terms.push(name.as_bytes()) {
                return Err(too_large());
            }
            post_off.push(np);
        }
        let mut tables = DocTables::new();
        for &d in &order {
            let Some(e) = self.doc(d) else { continue };
            let actors = self.actors_of(d);
            let row = DocRow {
                key: e.key,
                namespace: e.namespace,
                path: e.path,
                content: e.content,
                value: &e.value,
                timestamp: e.timestamp,
                actors: &actors,
                len: e.len,
            };
            if !tables.push(&row) {
                return Err(too_large());
            }
        }
        let done = tables.finish().ok_or_else(too_large)?;
        let parts = done.parts(
            self.root.as_ref(),
            self.params.key_weight,
            &terms,
            &post_off,
            &postings,
        );
        let mut w = Vec::new();
        parts.write(&mut w).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => too_large(),
            _ => damaged(),
        })?;
        if self.base.damaged() {
            return Err(damaged());
        }
        Ok(w)
    }

    /// Reads bytes written by [`LexicalIndex::to_bytes`] as the file part of an index
    /// (copied, and checked in full); any damage, or a file made with another key weight, is
    /// an error.
    pub fn from_bytes(bytes: &[u8]) -> RecallResult<LexicalIndex> {
        if bytes.is_empty() {
            return Err(damaged());
        }
        let map = copied_map(bytes).map_err(|source| CacheError::Read {
            path: "(memory)".into(),
            source,
        })?;
        let index = Self::open(Arc::new(map))?;
        index.base.check_all();
        if index.base.damaged() {
            return Err(damaged());
        }
        Ok(index)
    }

    /// Opens the cache file at `path` in place: its header and block checksums are checked
    /// now, each block the first time a search reads it.
    pub fn open_file(path: &Path) -> RecallResult<LexicalIndex> {
        let file = std::fs::File::open(path).map_err(|source| CacheError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: cache files are only ever replaced by renaming a new file over them, never
        // written in place or truncated, so the mapped bytes do not change under the map.
        #[allow(unsafe_code)]
        let map: Bytes =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|source| CacheError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        Self::open(Arc::new(map))
    }

    /// The index whose file part is `bytes`, after checking its header, its size and the
    /// checksum of its header and block checksums.
    fn open(bytes: Arc<Bytes>) -> RecallResult<LexicalIndex> {
        let mut r = Reader {
            b: &bytes[..bytes.len().min(HEADER_LEN)],
            at: 0,
        };
        if r.take(CACHE_MAGIC.len())? != CACHE_MAGIC {
            return Err(damaged());
        }
        let key_weight = f64::from_le_bytes(r.array()?);
        if key_weight.to_bits() != Params::default().key_weight.to_bits() {
            return Err(damaged());
        }
        let root = get_root(&mut r)?;
        let total_len = f64::from_le_bytes(r.array()?);
        let mut c = [0usize; COUNTS];
        for x in &mut c {
            *x = r.u32()? as usize;
        }
        let [n, nt, np, ng, nk, kb, tb, nb, pb, cb, gb, ns, na, ab, da] = c;
        let counts = Counts {
            n,
            nt,
            np,
            ng,
            nk,
            kb,
            tb,
            nb,
            pb,
            cb,
            gb,
            ns,
            na,
            ab,
            da,
        };
        let (layout, size) = counts.layout().ok_or_else(damaged)?;
        if size != bytes.len() || !(total_len.is_finite() && total_len >= 0.0) {
            return Err(damaged());
        }
        let mut s = [0u8; 16];
        s.copy_from_slice(&bytes[size - 16..]);
        let sum = head_sum(&bytes[..size - 16], &layout);
        if sum != u128::from_le_bytes(s) {
            return Err(damaged());
        }
        Ok(LexicalIndex {
            root,
            dead: vec![false; n],
            base_live: n,
            total_len,
            base: Base::new(bytes, layout, sum),
            ..LexicalIndex::new()
        })
    }
}

/// Everything a cache file holds, in the order of its tables (see store-format.md):
/// what [`LexicalIndex::to_bytes`] and the builder of a whole index ([`super::build`]) both
/// write, through [`Parts::write`].
pub(super) struct Parts<'a> {
    pub(super) root: Option<&'a ObjectId>,
    pub(super) key_weight: f64,
    pub(super) total_len: f64,
    pub(super) terms: &'a Texts,
    pub(super) post_off: &'a [u32],
    pub(super) postings: &'a [super::index::Posting],
    pub(super) keys: &'a Texts,
    pub(super) ns: &'a Texts,
    pub(super) doc_ns: &'a [u32],
    pub(super) paths: &'a Texts,
    pub(super) contents: &'a Texts,
    pub(super) values: &'a [u8],
    pub(super) stamps: &'a [u8],
    pub(super) lens: &'a [u8],
    pub(super) doc_parent: &'a [u32],
    pub(super) dates: &'a [u8],
    pub(super) date_order: &'a [u32],
    pub(super) actors: &'a Texts,
    pub(super) doc_actor_off: &'a [u32],
    pub(super) doc_actors: &'a [u32],
    pub(super) actor_doc_off: &'a [u32],
    pub(super) actor_docs: &'a [u32],
    pub(super) pkeys: &'a Texts,
    pub(super) parent_len: &'a [u8],
    pub(super) parent_docs: &'a [u8],
}

impl Parts<'_> {
    /// Writes the file to `out`: header, tables, block checksums and the file's checksum. An
    /// `InvalidInput` error when a count passes what the format's u32s hold.
    pub(super) fn write(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let too_large = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let g = self.parent_len.len() / 8;
        let (psum_off, psums) =
            parent_sums(self.post_off, self.postings, self.doc_parent, g).ok_or_else(too_large)?;
        let counts = Counts {
            n: self.doc_ns.len(),
            nt: self.terms.off.len() - 1,
            np: self.postings.len(),
            ng: g,
            nk: self.ns.off.len() - 1,
            kb: self.keys.text.len(),
            tb: self.terms.text.len(),
            nb: self.ns.text.len(),
            pb: self.paths.text.len(),
            cb: self.contents.text.len(),
            gb: self.pkeys.text.len(),
            ns: psums.len() / PARENT_ROW,
            na: self.actors.off.len() - 1,
            ab: self.actors.text.len(),
            da: self.doc_actors.len(),
        };
        counts.layout().ok_or_else(too_large)?;
        let mut w = Blocks::new(out);
        let mut head = Vec::with_capacity(HEADER_LEN);
        head.extend_from_slice(CACHE_MAGIC);
        head.extend_from_slice(&self.key_weight.to_le_bytes());
        put_root(&mut head, self.root);
        head.extend_from_slice(&self.total_len.to_le_bytes());
        for c in counts.list() {
            put_u32(&mut head, u32::try_from(c).map_err(|_| too_large())?);
        }
        w.put(&head)?;
        self.terms.write_to(&mut w)?;
        w.u32s(self.post_off)?;
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in self.postings.chunks(8192) {
            buf.clear();
            for p in chunk {
                put_u32(&mut buf, p.doc);
                buf.extend_from_slice(&p.key_tf.to_le_bytes());
                buf.extend_from_slice(&p.content_tf.to_le_bytes());
            }
            w.put(&buf)?;
        }
        self.keys.write_to(&mut w)?;
        self.ns.write_to(&mut w)?;
        w.u32s(self.doc_ns)?;
        self.paths.write_to(&mut w)?;
        self.contents.write_to(&mut w)?;
        w.put(self.values)?;
        w.put(self.stamps)?;
        w.put(self.lens)?;
        w.u32s(self.doc_parent)?;
        w.put(self.dates)?;
        w.u32s(self.date_order)?;
        self.actors.write_to(&mut w)?;
        w.u32s(self.doc_actor_off)?;
        w.u32s(self.doc_actors)?;
        w.u32s(self.actor_doc_off)?;
        w.u32s(self.actor_docs)?;
        self.pkeys.write_to(&mut w)?;
        w.put(self.parent_len)?;
        w.put(self.parent_docs)?;
        w.u32s(&psum_off)?;
        w.put(&psums)?;
        w.finish(&head)
    }
}

/// A writer that checksums each [`BLOCK`] of what passes through it, then appends the
/// block checksums and the file's checksum (of the header and the block checksums).
struct Blocks<'w, W: std::io::Write> {
    out: &'w mut W,
    block: Vec<u8>,
    sums: Vec<u8>,
}

impl<'w, W: std::io::Write> Blocks<'w, W> {
    fn new(out: &'w mut W) -> Self {
        Blocks {
            out,
            block: Vec::with_capacity(BLOCK),
            sums: Vec::new(),
        }
    }

    fn put(&mut self, mut b: &[u8]) -> std::io::Result<()> {
        while !b.is_empty() {
            let take = (BLOCK - self.block.len()).min(b.len());
            self.block.extend_from_slice(&b[..take]);
            b = &b[take..];
            if self.block.len() == BLOCK {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    fn u32s(&mut self, ns: &[u32]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(4 * ns.len().min(16384));
        for chunk in ns.chunks(16384) {
            buf.clear();
            put_u32s(&mut buf, chunk);
            self.put(&buf)?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> std::io::Result<()> {
        self.sums
            .extend_from_slice(&xxh3_64(&self.block).to_le_bytes());
        self.out.write_all(&self.block)?;
        self.block.clear();
        Ok(())
    }

    fn finish(mut self, head: &[u8]) -> std::io::Result<()> {
        if !self.block.is_empty() {
            self.flush_block()?;
        }
        self.out.write_all(&self.sums)?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(head);
        h.update(&self.sums);
        self.out.write_all(&h.digest128().to_le_bytes())
    }
}

/// The per-parent entries of the terms held by [`PARENT_SUMS_FROM`] documents or more: per
/// term, the offset of its first entry (first 0, last the entry count), and the entries
/// ([`PARENT_ROW`] bytes each) by ascending parent number. A term whose sum passes a u32
/// has none (it is summed from its postings when asked). `None` when the entries pass a
/// u32 count.
fn parent_sums(
    post_off: &[u32],
    postings: &[super::index::Posting],
    doc_parent: &[u32],
    parents: usize,
) -> Option<(Vec<u32>, Vec<u8>)> {
    let mut off = vec![0u32];
    let mut out = Vec::new();
    let mut under = vec![ParentRow::NONE; parents];
    let mut touched: Vec<u32> = Vec::new();
    for w in post_off.windows(2) {
        let list = &postings[w[0] as usize..w[1] as usize];
        if list.len() >= PARENT_SUMS_FROM {
            let mut fits = true;
            for p in list {
                let parent = doc_parent[p.doc as usize];
                let s = &mut under[parent as usize];
                if s.docs == 0 {
                    touched.push(parent);
                }
                fits &= s.add(p);
            }
            touched.sort_unstable();
            for &g in &touched {
                let s = std::mem::replace(&mut under[g as usize], ParentRow::NONE);
                if fits {
                    put_u32(&mut out, g);
                    put_u32(&mut out, s.key_sum);
                    put_u32(&mut out, s.content_sum);
                    put_u32(&mut out, s.docs);
                    for f in [s.key_most, s.content_most, s.key_least, s.content_least] {
                        out.extend_from_slice(&f.to_le_bytes());
                    }
                }
            }
            touched.clear();
        }
        off.push(u32::try_from(out.len() / PARENT_ROW).ok()?);
    }
    Some((off, out))
}

/// The checksum of a cache file (what a delta names): of its header and its blocks'
/// checksums, which cover everything else.
fn head_sum(w: &[u8], t: &Layout) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&w[..HEADER_LEN]);
    h.update(&w[t.sums.at..t.sums.at + 8 * t.sums.n]);
    h.digest128()
}

pub(super) fn damaged() -> RecallError {
    CacheError::Damaged.into()
}

/// The bytes before the trailing checksum, when the checksum and the magic agree.
pub(super) fn checked_body<'a>(bytes: &'a [u8], magic: &[u8]) -> RecallResult<&'a [u8]> {
    if bytes.len() < magic.len() + 16 {
        return Err(damaged());
    }
    let (body, sum) = bytes.split_at(bytes.len() - 16);
    let mut s = [0u8; 16];
    s.copy_from_slice(sum);
    if xxh3_128(body) != u128::from_le_bytes(s) || !body.starts_with(magic) {
        return Err(damaged());
    }
    Ok(body)
}

pub(super) fn put_root(w: &mut Vec<u8>, root: Option<&ObjectId>) {
    match root {
        Some(r) => {
            w.push(1);
            w.extend_from_slice(r.as_bytes());
        }
        None => w.extend_from_slice(&[0u8; 33]),
    }
}

pub(super) fn get_root(r: &mut Reader<'_>) -> RecallResult<Option<ObjectId>> {
    let flag = r.take(1)?[0];
    let id: [u8; 32] = r.array()?;
    match flag {
        0 if id == [0u8; 32] => Ok(None),
        1 => Ok(Some(ObjectId::from_bytes(id))),
        _ => Err(damaged()),
    }
}

pub(super) fn put_u32(w: &mut Vec<u8>, n: u32) {
    w.extend_from_slice(&n.to_le_bytes());
}

pub(super) fn put_u32s(w: &mut Vec<u8>, ns: &[u32]) {
    for &n in ns {
        put_u32(w, n);
    }
}

pub(super) fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put_u32(w, b.len() as u32);
    w.extend_from_slice(b);
}

pub(super) struct Reader<'a> {
    pub(super) b: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> RecallResult<&'a [u8]> {
        if self.b.len() - self.at < n {
            return Err(CacheError::Truncated.into());
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    pub(super) fn array<const N: usize>(&mut self) -> RecallResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub(super) fn u32(&mut self) -> RecallResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(super) fn u32s(&mut self, n: usize) -> RecallResult<Vec<u32>> {
        let b = self.take(n.checked_mul(4).ok_or_else(damaged)?)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    pub(super) fn bytes(&mut self) -> RecallResult<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub(super) fn string(&mut self) -> RecallResult<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| damaged())
    }
}
