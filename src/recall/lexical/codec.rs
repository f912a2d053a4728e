//! The cache file: the whole index as one frozen part (layout in store-format.md, "Derived
//! caches"), and the byte readers and writers the delta file shares.

use xxhash_rust::xxh3::xxh3_128;

use super::frozen::Base;
use super::index::Posting;
use super::{LexicalIndex, Params};
use crate::object::ObjectId;
use crate::recall::{CacheError, RecallError, RecallResult};

/// First bytes of a full cache file (layout version 4).
const CACHE_MAGIC: &[u8] = b"MEMLEX04";

/// Bytes of a full cache file before its tables: magic, key weight, root, eight counts.
const HEADER_LEN: usize = 8 + 8 + 33 + 8 * 4;

impl LexicalIndex {
    /// The whole index as bytes, for a cache file (layout in store-format.md, "Derived
    /// caches"): both parts merged into one frozen part, ready to search once loaded.
    pub fn to_bytes(&self) -> Vec<u8> {
        let order = self.live_in_key_order();
        let mut renumber = vec![u32::MAX; self.base.n_docs() + self.docs.len()];
        for (i, &d) in order.iter().enumerate() {
            renumber[d as usize] = i as u32;
        }
        let mut term_text = String::new();
        let mut term_off = vec![0u32];
        let mut post_off = vec![0u32];
        let mut postings: Vec<Posting> = Vec::new();
        for (name, t) in self.terms_after(None) {
            let start = postings.len();
            self.each_posting(t, &mut |p| {
                postings.push(Posting {
                    doc: renumber[p.doc as usize],
                    ..*p
                })
            });
            if postings.len() == start {
                continue;
            }
            postings[start..].sort_unstable_by_key(|p| p.doc);
            term_text.push_str(name);
            term_off.push(term_text.len() as u32);
            post_off.push(postings.len() as u32);
        }
        let mut keys = Vec::new();
        let mut key_off = vec![0u32];
        let mut ns_text = String::new();
        let mut ns_off = vec![0u32];
        let mut path_text = String::new();
        let mut path_off = vec![0u32];
        let mut content_text = String::new();
        let mut content_off = vec![0u32];
        let mut tail = Vec::with_capacity(order.len() * 48);
        let (mut stamps, mut lens) = (Vec::new(), Vec::new());
        for &d in &order {
            let Some(e) = self.doc(d) else { continue };
            keys.extend_from_slice(e.key);
            key_off.push(keys.len() as u32);
            ns_text.push_str(e.namespace);
            ns_off.push(ns_text.len() as u32);
            path_text.push_str(e.path);
            path_off.push(path_text.len() as u32);
            content_text.push_str(e.content);
            content_off.push(content_text.len() as u32);
            tail.extend_from_slice(e.value.as_bytes());
            stamps.extend_from_slice(&e.timestamp.to_le_bytes());
            lens.extend_from_slice(&e.len.to_le_bytes());
        }
        let mut w = Vec::with_capacity(
            HEADER_LEN
                + 8 * (term_off.len() + key_off.len() * 4)
                + term_text.len()
                + 8 * postings.len()
                + keys.len()
                + ns_text.len()
                + path_text.len()
                + content_text.len()
                + tail.len() * 2,
        );
        w.extend_from_slice(CACHE_MAGIC);
        w.extend_from_slice(&self.params.key_weight.to_le_bytes());
        put_root(&mut w, self.root.as_ref());
        for n in [
            order.len(),
            term_off.len() - 1,
            postings.len(),
            keys.len(),
            term_text.len(),
            ns_text.len(),
            path_text.len(),
            content_text.len(),
        ] {
            put_u32(&mut w, n as u32);
        }
        put_u32s(&mut w, &term_off);
        w.extend_from_slice(term_text.as_bytes());
        put_u32s(&mut w, &post_off);
        for p in &postings {
            put_u32(&mut w, p.doc);
            w.extend_from_slice(&p.key_tf.to_le_bytes());
            w.extend_from_slice(&p.content_tf.to_le_bytes());
        }
        put_u32s(&mut w, &key_off);
        w.extend_from_slice(&keys);
        put_u32s(&mut w, &ns_off);
        w.extend_from_slice(ns_text.as_bytes());
        put_u32s(&mut w, &path_off);
        w.extend_from_slice(path_text.as_bytes());
        put_u32s(&mut w, &content_off);
        w.extend_from_slice(content_text.as_bytes());
        w.extend_from_slice(&tail);
        w.extend_from_slice(&stamps);
        w.extend_from_slice(&lens);
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        w
    }

    /// Reads bytes written by [`LexicalIndex::to_bytes`] as the frozen part of an index;
    /// any damage, or a file made with another key weight, is an error.
    pub fn from_bytes(bytes: &[u8]) -> RecallResult<LexicalIndex> {
        let body = checked_body(bytes, CACHE_MAGIC)?;
        let mut r = Reader {
            b: body,
            at: CACHE_MAGIC.len(),
        };
        let key_weight = f64::from_le_bytes(r.array()?);
        if key_weight.to_bits() != Params::default().key_weight.to_bits() {
            return Err(damaged());
        }
        let root = get_root(&mut r)?;
        let mut c = [0usize; 8];
        for x in &mut c {
            *x = r.u32()? as usize;
        }
        let [n, nt, np, kb, tb, nb, pb, cb] = c;
        // The sizes must account for the file exactly before anything is allocated.
        let want = HEADER_LEN as u64
            + 8 * (nt as u64 + 1)
            + tb as u64
            + 8 * np as u64
            + 16 * (n as u64 + 1)
            + (kb as u64 + nb as u64 + pb as u64 + cb as u64)
            + 48 * n as u64;
        if want != body.len() as u64 {
            return Err(damaged());
        }
        let term_off = r.u32s(nt + 1)?;
        let term_text = r.text(tb)?;
        let post_off = r.u32s(nt + 1)?;
        let mut postings = Vec::with_capacity(np);
        for ch in r.take(8 * np)?.chunks_exact(8) {
            postings.push(Posting {
                doc: u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]),
                key_tf: u16::from_le_bytes([ch[4], ch[5]]),
                content_tf: u16::from_le_bytes([ch[6], ch[7]]),
            });
        }
        let key_off = r.u32s(n + 1)?;
        let keys = r.take(kb)?.to_vec();
        let ns_off = r.u32s(n + 1)?;
        let ns_text = r.text(nb)?;
        let path_off = r.u32s(n + 1)?;
        let path_text = r.text(pb)?;
        let content_off = r.u32s(n + 1)?;
        let content_text = r.text(cb)?;
        let values: Vec<ObjectId> = r
            .take(32 * n)?
            .chunks_exact(32)
            .map(|ch| {
                let mut id = [0u8; 32];
                id.copy_from_slice(ch);
                ObjectId::from_bytes(id)
            })
            .collect();
        let timestamps = r.f64s(n)?;
        let lens = r.f64s(n)?;

        check_offsets(&term_off, tb, Some(&term_text))?;
        check_offsets(&post_off, np, None)?;
        check_offsets(&key_off, kb, None)?;
        check_offsets(&ns_off, nb, Some(&ns_text))?;
        check_offsets(&path_off, pb, Some(&path_text))?;
        check_offsets(&content_off, cb, Some(&content_text))?;
        let base = Base {
            sum: Some(xxh3_128(body)),
            term_off,
            term_text,
            post_off,
            postings,
            key_off,
            keys,
            ns_off,
            ns_text,
            path_off,
            path_text,
            content_off,
            content_text,
            values,
            timestamps,
            lens,
        };
        for i in 1..nt {
            if base.term(i - 1) >= base.term(i) {
                return Err(damaged());
            }
        }
        for i in 0..nt {
            let ps = base.term_postings(i);
            if ps.last().is_some_and(|p| p.doc as usize >= n)
                || ps.windows(2).any(|w| w[0].doc >= w[1].doc)
            {
                return Err(damaged());
            }
        }
        for i in 1..n {
            if base.key(i - 1) >= base.key(i) {
                return Err(damaged());
            }
        }
        if base.lens.iter().any(|l| !(l.is_finite() && *l >= 0.0)) {
            return Err(damaged());
        }
        let total_len = base.lens.iter().sum();
        Ok(LexicalIndex {
            root,
            dead: vec![false; n],
            base_live: n,
            base,
            total_len,
            ..LexicalIndex::new()
        })
    }
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

/// An offset table must start at 0, never decrease and end at `end`; for text, every offset
/// must fall on a character boundary.
fn check_offsets(off: &[u32], end: usize, text: Option<&str>) -> RecallResult<()> {
    let ok = off.first() == Some(&0)
        && off.last().map(|&e| e as usize) == Some(end)
        && off.windows(2).all(|w| w[0] <= w[1])
        && text.is_none_or(|t| off.iter().all(|&o| t.is_char_boundary(o as usize)));
    if ok {
        Ok(())
    } else {
        Err(damaged())
    }
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
    fn f64s(&mut self, n: usize) -> RecallResult<Vec<f64>> {
        let b = self.take(n.checked_mul(8).ok_or_else(damaged)?)?;
        Ok(b.chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                f64::from_le_bytes(a)
            })
            .collect())
    }
    pub(super) fn bytes(&mut self) -> RecallResult<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub(super) fn text(&mut self, n: usize) -> RecallResult<String> {
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| damaged())
    }
    pub(super) fn string(&mut self) -> RecallResult<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| damaged())
    }
}
