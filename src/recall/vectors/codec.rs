//! The vector cache file (`cache/vectors.bin`): derived data, never hashed, replaced whole
//! by renaming a new file over it, and read in place (mapped). All numbers little-endian.
//!
//! ```text
//! magic      8 bytes  "MVEC\0\0\0\x02"
//! model      u32 length, then that many bytes of UTF-8 (the model's id)
//! dims       u32
//! pool       u64      vectors held (each of a distinct value)
//! keys       u64      keys of the root, in key order
//! repeats    u64      keys of the root whose vector is not the next new one
//! root       u8 flag, then 32 bytes (zero when none)
//! ids        pool × 12 bytes    the first bytes of the value (content hash) of each vector
//! scales     pool × f16         see quant.rs
//! vectors    pool × dims × i8
//! repeats    repeats × (u32 key, u32 vector), ascending keys
//! checksum   u64      xxh3 of every byte before it
//! ```
//!
//! The vectors of the root's keys come first, in key order of their first key, so a search
//! reads the file front to back: walking the keys in order, a key's vector is the next one
//! not yet used, unless the repeats name it (a value that an earlier key has too). Vectors of
//! values not at the root (another branch, an older revision) follow, kept so that reading
//! there again embeds nothing.
//!
//! Version 1 (`MVEC\0\0\0\x01`) kept whole 32-byte ids, f32 scales and a vector number for
//! every key (424 bytes a memory at 384 dimensions, against 398 now); [`upgrade`] rewrites
//! one as version 2 with the same numbers, so opening it embeds nothing again.

use std::sync::Arc;

use crate::embed::F16;

use crate::object::ObjectId;

/// The file's first bytes.
pub(super) const MAGIC: &[u8; 8] = b"MVEC\0\0\0\x02";

/// Version 1's first bytes.
const MAGIC_V1: &[u8; 8] = b"MVEC\0\0\0\x01";

/// Bytes of a value id kept: 96 bits, so that two values of a store sharing them is not to
/// be expected (under one chance in 10^17 among a million values) and cannot be forced on
/// a value someone else wrote (a second preimage of 96 bits of BLAKE3).
pub const ID_PREFIX: usize = 12;

/// The bytes a vector is keyed by: the first [`ID_PREFIX`] bytes of its value's id.
pub type IdPrefix = [u8; ID_PREFIX];

/// The prefix of `id`.
pub fn prefix_of(id: &ObjectId) -> IdPrefix {
    let mut p = [0u8; ID_PREFIX];
    p.copy_from_slice(&id.as_bytes()[..ID_PREFIX]);
    p
}

/// Why a vector file cannot be used (it is then rebuilt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Damaged;

/// The bytes of a vector file: mapped from the file, or built in memory.
pub(super) enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// Where each part of a checked vector file is.
#[derive(Clone)]
pub(super) struct Layout {
    pub(super) bytes: Arc<Backing>,
    pub(super) model: String,
    pub(super) dims: usize,
    pub(super) pool: usize,
    pub(super) keys: usize,
    pub(super) repeats: usize,
    pub(super) root: Option<ObjectId>,
    pub(super) ids_at: usize,
    pub(super) scales_at: usize,
    pub(super) vectors_at: usize,
    pub(super) repeats_at: usize,
}

/// A little reader over a byte slice that fails past its end.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Damaged> {
        let end = self.at.checked_add(n).ok_or(Damaged)?;
        let s = self.b.get(self.at..end).ok_or(Damaged)?;
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, Damaged> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| Damaged)?,
        ))
    }
    fn u64(&mut self) -> Result<u64, Damaged> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| Damaged)?,
        ))
    }
    fn count(&mut self) -> Result<usize, Damaged> {
        usize::try_from(self.u64()?).map_err(|_| Damaged)
    }
    fn root(&mut self) -> Result<Option<ObjectId>, Damaged> {
        let flag = self.take(1)?[0];
        let root_bytes: [u8; 32] = self.take(32)?.try_into().map_err(|_| Damaged)?;
        match flag {
            0 => Ok(None),
            1 => Ok(Some(ObjectId::from_bytes(root_bytes))),
            _ => Err(Damaged),
        }
    }
}

/// The bytes before the checksum, when the checksum at the end of `b` matches them.
fn checked_body(b: &[u8]) -> Result<&[u8], Damaged> {
    let body_len = b.len().checked_sub(8).ok_or(Damaged)?;
    let sum = u64::from_le_bytes(b[body_len..].try_into().map_err(|_| Damaged)?);
    if xxhash_rust::xxh3::xxh3_64(&b[..body_len]) != sum {
        return Err(Damaged);
    }
    Ok(&b[..body_len])
}

/// Checks the file in `bytes` (magic, sizes, checksum, repeats in range) and finds its parts.
pub(super) fn read(bytes: Arc<Backing>) -> Result<Layout, Damaged> {
    let b: &[u8] = &bytes;
    let body = checked_body(b)?;
    let mut r = Reader { b: body, at: 0 };
    if r.take(8)? != MAGIC {
        return Err(Damaged);
    }
    let model_len = r.u32()? as usize;
    let model = std::str::from_utf8(r.take(model_len)?)
        .map_err(|_| Damaged)?
        .to_string();
    let dims = r.u32()? as usize;
    let pool = r.count()?;
    let keys = r.count()?;
    let repeats = r.count()?;
    let root = r.root()?;
    let ids_at = r.at;
    r.take(pool.checked_mul(ID_PREFIX).ok_or(Damaged)?)?;
    let scales_at = r.at;
    r.take(pool.checked_mul(2).ok_or(Damaged)?)?;
    let vectors_at = r.at;
    r.take(pool.checked_mul(dims).ok_or(Damaged)?)?;
    let repeats_at = r.at;
    let table = r.take(repeats.checked_mul(8).ok_or(Damaged)?)?;
    if r.at != body.len() || dims == 0 || repeats > keys || keys - repeats > pool {
        return Err(Damaged);
    }
    // Keys ascending and listed, vectors held.
    let mut last: Option<u32> = None;
    for e in table.chunks_exact(8) {
        let key = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        let vector = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
        if key as usize >= keys || vector as usize >= pool || last.is_some_and(|l| key <= l) {
            return Err(Damaged);
        }
        last = Some(key);
    }
    Ok(Layout {
        bytes,
        model,
        dims,
        pool,
        keys,
        repeats,
        root,
        ids_at,
        scales_at,
        vectors_at,
        repeats_at,
    })
}

/// What a new vector file holds.
pub(super) struct Parts<'a> {
    pub(super) model: &'a str,
    pub(super) dims: usize,
    pub(super) root: Option<&'a ObjectId>,
    pub(super) ids: &'a [IdPrefix],
    pub(super) scales: &'a [F16],
    /// `ids.len() × dims` numbers.
    pub(super) vectors: &'a [i8],
    /// The vector of each key of the root, in key order.
    pub(super) slots: &'a [u32],
}

/// The bytes of a vector file.
pub(super) fn write(p: &Parts<'_>) -> Vec<u8> {
    // Walking the keys, the keys whose vector is not the next new one.
    let mut next = 0u32;
    let mut repeats: Vec<(u32, u32)> = Vec::new();
    for (k, &s) in p.slots.iter().enumerate() {
        if s == next {
            next += 1;
        } else {
            repeats.push((k as u32, s));
        }
    }
    let mut out = Vec::with_capacity(
        104 + p.model.len() + p.ids.len() * (ID_PREFIX + 2 + p.dims) + repeats.len() * 8,
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(p.model.len() as u32).to_le_bytes());
    out.extend_from_slice(p.model.as_bytes());
    out.extend_from_slice(&(p.dims as u32).to_le_bytes());
    out.extend_from_slice(&(p.ids.len() as u64).to_le_bytes());
    out.extend_from_slice(&(p.slots.len() as u64).to_le_bytes());
    out.extend_from_slice(&(repeats.len() as u64).to_le_bytes());
    match p.root {
        Some(r) => {
            out.push(1);
            out.extend_from_slice(r.as_bytes());
        }
        None => {
            out.push(0);
            out.extend_from_slice(&[0; 32]);
        }
    }
    for id in p.ids {
        out.extend_from_slice(id);
    }
    for s in p.scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend(p.vectors.iter().map(|&x| x as u8));
    for (k, v) in repeats {
        out.extend_from_slice(&k.to_le_bytes());
        out.extend_from_slice(&v.to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A version-1 file in `bytes` rewritten as this version (the same vectors, ids cut to
/// their prefix, scales rounded to F16); `None` when it is not a sound version-1 file.
pub(super) fn upgrade(bytes: &[u8]) -> Option<Vec<u8>> {
    let body = checked_body(bytes).ok()?;
    let mut r = Reader { b: body, at: 0 };
    if r.take(8).ok()? != MAGIC_V1 {
        return None;
    }
    let model_len = r.u32().ok()? as usize;
    let model = std::str::from_utf8(r.take(model_len).ok()?).ok()?;
    let dims = r.u32().ok()? as usize;
    let pool = r.count().ok()?;
    let keys = r.count().ok()?;
    let root = r.root().ok()?;
    let ids = r.take(pool.checked_mul(32)?).ok()?;
    let scales = r.take(pool.checked_mul(4)?).ok()?;
    let vectors = r.take(pool.checked_mul(dims)?).ok()?;
    let slots = r.take(keys.checked_mul(4)?).ok()?;
    if r.at != body.len() || dims == 0 {
        return None;
    }
    let ids: Vec<IdPrefix> = ids
        .chunks_exact(32)
        .map(|c| c[..ID_PREFIX].try_into().unwrap_or([0; ID_PREFIX]))
        .collect();
    let scales: Vec<F16> = scales
        .chunks_exact(4)
        .map(|c| F16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let vectors: Vec<i8> = vectors.iter().map(|&x| x as i8).collect();
    let slots: Vec<u32> = slots
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if slots.iter().any(|&s| s as usize >= pool) {
        return None;
    }
    Some(write(&Parts {
        model,
        dims,
        root: root.as_ref(),
        ids: &ids,
        scales: &scales,
        vectors: &vectors,
        slots: &slots,
    }))
}

impl Layout {
    /// The id prefix of vector `i`.
    pub(super) fn id(&self, i: usize) -> IdPrefix {
        let at = self.ids_at + i * ID_PREFIX;
        let mut b = [0u8; ID_PREFIX];
        b.copy_from_slice(&self.bytes[at..at + ID_PREFIX]);
        b
    }

    /// The scale of vector `i`, as stored.
    pub(super) fn scale16(&self, i: usize) -> F16 {
        let at = self.scales_at + i * 2;
        F16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// The scales of the first `n` vectors.
    pub(super) fn scales16(&self, n: usize) -> Vec<F16> {
        self.bytes[self.scales_at..self.scales_at + 2 * n.min(self.pool)]
            .chunks_exact(2)
            .map(|c| F16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    /// The numbers of vector `i`.
    pub(super) fn vector(&self, i: usize) -> &[i8] {
        let at = i * self.dims;
        &self.all_vectors()[at..at + self.dims]
    }

    /// The numbers of every vector, one after the other.
    pub(super) fn all_vectors(&self) -> &[i8] {
        let b = &self.bytes[self.vectors_at..self.vectors_at + self.pool * self.dims];
        // SAFETY: i8 and u8 have one size and alignment, and every bit pattern is valid.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(b.as_ptr().cast::<i8>(), b.len())
        }
    }

    /// The vector of each key of the root, in key order.
    pub(super) fn slots(&self) -> Vec<u32> {
        let table = &self.bytes[self.repeats_at..self.repeats_at + 8 * self.repeats];
        let mut repeats = table.chunks_exact(8).map(|e| {
            (
                u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize,
                u32::from_le_bytes([e[4], e[5], e[6], e[7]]),
            )
        });
        let mut pending = repeats.next();
        let mut next = 0u32;
        let mut out = Vec::with_capacity(self.keys);
        for k in 0..self.keys {
            match pending {
                Some((key, v)) if key == k => {
                    out.push(v);
                    pending = repeats.next();
                }
                _ => {
                    out.push(next);
                    next += 1;
                }
            }
        }
        out
    }
}
