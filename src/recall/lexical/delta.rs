//! The delta file: the changes since the file part, saved beside the cache file while they
//! are few.

use xxhash_rust::xxh3::xxh3_128;

use super::codec::{
    checked_body, damaged, get_root, put_bytes, put_root, put_u32, put_u32s, Reader,
};
use super::index::{Entry, Posting};
use super::removed::{Removed, RemovedPostings};
use super::LexicalIndex;
use crate::object::ObjectId;
use crate::recall::{CacheError, RecallResult};

/// First bytes of a delta cache file (layout version 4).
const DELTA_MAGIC: &[u8] = b"MEMLXD04";

impl LexicalIndex {
    /// The changes since the file part, as bytes for a delta cache file (layout in
    /// store-format.md): the root reflected, the documents of the file part removed and the overlay
    /// documents. `None` when the index has no file part read from a cache file, which
    /// a delta could name.
    pub fn delta_bytes(&self) -> Option<Vec<u8>> {
        let sum = self.base.sum?;
        let mut w = Vec::new();
        w.extend_from_slice(DELTA_MAGIC);
        w.extend_from_slice(&sum.to_le_bytes());
        put_root(&mut w, self.root.as_ref());
        let dead: Vec<u32> = (0..self.base.n_docs())
            .filter(|&i| self.dead[i])
            .map(|i| i as u32)
            .collect();
        put_u32(&mut w, dead.len() as u32);
        put_u32s(&mut w, &dead);
        // The removed documents' postings, by term number then document.
        let removed = self.removed_postings.sorted();
        put_u32(&mut w, removed.len() as u32);
        for (t, r) in removed {
            w.extend_from_slice(&t.to_le_bytes());
            w.extend_from_slice(&r.posting.doc.to_le_bytes());
            w.extend_from_slice(&r.at.to_le_bytes());
            w.extend_from_slice(&r.posting.key_tf.to_le_bytes());
            w.extend_from_slice(&r.posting.content_tf.to_le_bytes());
        }
        put_u32(&mut w, self.by_key.len() as u32);
        for &slot in self.by_key.values() {
            let Some(e) = self.docs.get(slot as usize).and_then(Option::as_ref) else {
                continue;
            };
            put_bytes(&mut w, &e.key);
            w.extend_from_slice(e.value.as_bytes());
            put_bytes(&mut w, e.namespace.as_bytes());
            put_bytes(&mut w, e.path.as_bytes());
            put_bytes(&mut w, e.content.as_bytes());
            w.extend_from_slice(&e.timestamp.to_le_bytes());
            put_u32(&mut w, e.actors.len() as u32);
            for a in &e.actors {
                put_bytes(&mut w, a.as_bytes());
            }
            w.extend_from_slice(&e.len.to_le_bytes());
            put_u32(&mut w, e.terms.len() as u32);
            for &(t, k, c) in &e.terms {
                put_bytes(&mut w, self.term_names[t as usize].as_bytes());
                w.extend_from_slice(&k.to_le_bytes());
                w.extend_from_slice(&c.to_le_bytes());
            }
        }
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        Some(w)
    }

    /// Applies a delta written by [`LexicalIndex::delta_bytes`] to an index just read by
    /// [`LexicalIndex::from_bytes`]. A delta that is damaged, names another file part or
    /// contradicts this one is an error and leaves the index untouched.
    pub fn apply_delta(&mut self, bytes: &[u8]) -> RecallResult<()> {
        let body = checked_body(bytes, DELTA_MAGIC)?;
        let mut r = Reader {
            b: body,
            at: DELTA_MAGIC.len(),
        };
        let base_sum = u128::from_le_bytes(r.array()?);
        let n = self.base.n_docs();
        if self.base.sum != Some(base_sum) || self.pending_changes() != 0 {
            return Err(CacheError::ForeignDelta.into());
        }
        let root = get_root(&mut r)?;
        let nd = r.u32()? as usize;
        if nd > n {
            return Err(damaged());
        }
        let dead = r.u32s(nd)?;
        if dead.last().is_some_and(|&d| d as usize >= n) || dead.windows(2).any(|w| w[0] >= w[1]) {
            return Err(damaged());
        }
        let nr = r.u32()? as usize;
        let rows = r.take(nr.checked_mul(16).ok_or_else(damaged)?)?;
        let (terms, mut is_dead) = (self.base.n_terms(), vec![false; n]);
        for &d in &dead {
            is_dead[d as usize] = true;
        }
        let (mut removed_terms, mut removed) = (Vec::with_capacity(nr), Vec::with_capacity(nr));
        for c in rows.chunks_exact(16) {
            let u32_at = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
            let (t, doc, at) = (u32_at(0), u32_at(4), u32_at(8));
            let posting = Posting {
                doc,
                key_tf: u16::from_le_bytes([c[12], c[13]]),
                content_tf: u16::from_le_bytes([c[14], c[15]]),
            };
            // Ascending by term then document, of the file's terms and removed documents.
            // (Where each lies is not checked here, which would read every term's place
            // in the file; a search clamps it to the term's postings.)
            if t as usize >= terms
                || !is_dead.get(doc as usize).copied().unwrap_or(false)
                || removed_terms
                    .last()
                    .zip(removed.last())
                    .is_some_and(|(&u, q): (&u32, &Removed)| (u, q.posting.doc) >= (t, doc))
            {
                return Err(damaged());
            }
            removed_terms.push(t);
            removed.push(Removed { posting, at });
        }
        let ne = r.u32()? as usize;
        if ne > body.len() {
            return Err(damaged());
        }
        let mut entries: Vec<(Entry, Vec<String>)> = Vec::with_capacity(ne);
        for _ in 0..ne {
            let key = r.bytes()?.to_vec();
            let value = ObjectId::from_bytes(r.array()?);
            let namespace = r.string()?;
            let path = r.string()?;
            let content = r.string()?;
            let timestamp = f64::from_le_bytes(r.array()?);
            let na = r.u32()? as usize;
            if na > body.len() {
                return Err(damaged());
            }
            let actors = (0..na)
                .map(|_| r.string())
                .collect::<RecallResult<Vec<String>>>()?;
            let len = f64::from_le_bytes(r.array()?);
            let nt = r.u32()? as usize;
            if nt > body.len() || !(len.is_finite() && len >= 0.0) {
                return Err(damaged());
            }
            let mut names = Vec::with_capacity(nt);
            let mut terms = Vec::with_capacity(nt);
            for i in 0..nt {
                names.push(r.string()?);
                let k = u16::from_le_bytes(r.array()?);
                let c = u16::from_le_bytes(r.array()?);
                terms.push((i as u32, k, c));
            }
            let mut sorted: Vec<&String> = names.iter().collect();
            sorted.sort();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(damaged());
            }
            // Keys ascend; a key present in the file part must be among the removed.
            if entries.last().is_some_and(|(e, _)| e.key >= key)
                || self
                    .base
                    .find_key(&key)
                    .is_some_and(|i| dead.binary_search(&(i as u32)).is_err())
            {
                return Err(damaged());
            }
            entries.push((
                Entry {
                    key,
                    value,
                    namespace,
                    path,
                    content,
                    timestamp,
                    actors,
                    len,
                    terms,
                },
                names,
            ));
        }
        if r.at != body.len() {
            return Err(damaged());
        }
        // Checked in full: nothing below can fail.
        for d in dead {
            let d = d as usize;
            self.dead[d] = true;
            self.base_live -= 1;
            self.total_len -= self.base.len_at(d);
        }
        self.parents.take();
        self.removed_postings = RemovedPostings::from_sorted(removed_terms, removed);
        for (mut e, names) in entries {
            for (t, name) in e.terms.iter_mut().zip(&names) {
                t.0 = self.term_id(name);
            }
            e.terms.sort_unstable_by_key(|t| t.0);
            self.attach(e);
        }
        self.root = root;
        Ok(())
    }
}
