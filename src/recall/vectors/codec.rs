//! The vector cache file (`cache/vectors.bin`): derived data, never hashed, replaced whole
//! by renaming a new file over it, and read in place (mapped). All numbers little-endian.
//!
//! ```text
//! magic      8 bytes  "MVEC\0\0\0\x01"
//! model      u32 length, then that many bytes of UTF-8 (the model's id)
//! dims       u32
//! pool       u64      vectors held (each of a distinct value)
//! keys       u64      keys of the root, in key order
//! root       u8 flag, then 32 bytes (zero when none)
//! ids        pool × 32 bytes    the value (content hash) of each vector
//! scales     pool × f32         see quant.rs
//! vectors    pool × dims × i8
//! slots      keys × u32         the vector of each key of the root
//! checksum   u64      xxh3 of every byte before it
//! ```
//!
//! The vectors of the root's keys come first, in key order, so a search reads the file
//! front to back; vectors of values not at the root (another branch, an older revision)
//! follow, kept so that reading there again embeds nothing.

use std::sync::Arc;

use crate::object::ObjectId;

/// The file's first bytes.
pub(super) const MAGIC: &[u8; 8] = b"MVEC\0\0\0\x01";

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
    pub(super) root: Option<ObjectId>,
    pub(super) ids_at: usize,
    pub(super) scales_at: usize,
    pub(super) vectors_at: usize,
    pub(super) slots_at: usize,
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
}

/// Checks the file in `bytes` (magic, sizes, checksum, slots in range) and finds its parts.
pub(super) fn read(bytes: Arc<Backing>) -> Result<Layout, Damaged> {
    let b: &[u8] = &bytes;
    let body_len = b.len().checked_sub(8).ok_or(Damaged)?;
    let sum = u64::from_le_bytes(b[body_len..].try_into().map_err(|_| Damaged)?);
    if xxhash_rust::xxh3::xxh3_64(&b[..body_len]) != sum {
        return Err(Damaged);
    }
    let mut r = Reader {
        b: &b[..body_len],
        at: 0,
    };
    if r.take(8)? != MAGIC {
        return Err(Damaged);
    }
    let model_len = r.u32()? as usize;
    let model = std::str::from_utf8(r.take(model_len)?)
        .map_err(|_| Damaged)?
        .to_string();
    let dims = r.u32()? as usize;
    let pool = usize::try_from(r.u64()?).map_err(|_| Damaged)?;
    let keys = usize::try_from(r.u64()?).map_err(|_| Damaged)?;
    let flag = r.take(1)?[0];
    let root_bytes: [u8; 32] = r.take(32)?.try_into().map_err(|_| Damaged)?;
    let root = match flag {
        0 => None,
        1 => Some(ObjectId::from_bytes(root_bytes)),
        _ => return Err(Damaged),
    };
    let ids_at = r.at;
    r.take(pool.checked_mul(32).ok_or(Damaged)?)?;
    let scales_at = r.at;
    r.take(pool.checked_mul(4).ok_or(Damaged)?)?;
    let vectors_at = r.at;
    r.take(pool.checked_mul(dims).ok_or(Damaged)?)?;
    let slots_at = r.at;
    let slots = r.take(keys.checked_mul(4).ok_or(Damaged)?)?;
    if r.at != body_len || dims == 0 {
        return Err(Damaged);
    }
    if slots
        .chunks_exact(4)
        .any(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize >= pool)
    {
        return Err(Damaged);
    }
    Ok(Layout {
        bytes,
        model,
        dims,
        pool,
        keys,
        root,
        ids_at,
        scales_at,
        vectors_at,
        slots_at,
    })
}

/// What a new vector file holds.
pub(super) struct Parts<'a> {
    pub(super) model: &'a str,
    pub(super) dims: usize,
    pub(super) root: Option<&'a ObjectId>,
    pub(super) ids: &'a [ObjectId],
    pub(super) scales: &'a [f32],
    /// `ids.len() × dims` numbers.
    pub(super) vectors: &'a [i8],
    pub(super) slots: &'a [u32],
}

/// The bytes of a vector file.
pub(super) fn write(p: &Parts<'_>) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(96 + p.model.len() + p.ids.len() * (36 + p.dims) + p.slots.len() * 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(p.model.len() as u32).to_le_bytes());
    out.extend_from_slice(p.model.as_bytes());
    out.extend_from_slice(&(p.dims as u32).to_le_bytes());
    out.extend_from_slice(&(p.ids.len() as u64).to_le_bytes());
    out.extend_from_slice(&(p.slots.len() as u64).to_le_bytes());
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
        out.extend_from_slice(id.as_bytes());
    }
    for s in p.scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend(p.vectors.iter().map(|&x| x as u8));
    for s in p.slots {
        out.extend_from_slice(&s.to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

impl Layout {
    /// The value of vector `i`.
    pub(super) fn id(&self, i: usize) -> ObjectId {
        let at = self.ids_at + i * 32;
        let mut b = [0u8; 32];
        b.copy_from_slice(&self.bytes[at..at + 32]);
        ObjectId::from_bytes(b)
    }

    /// The scale of vector `i`.
    pub(super) fn scale(&self, i: usize) -> f32 {
        let at = self.scales_at + i * 4;
        let b = &self.bytes[at..at + 4];
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The numbers of vector `i`.
    pub(super) fn vector(&self, i: usize) -> &[i8] {
        let at = self.vectors_at + i * self.dims;
        let b = &self.bytes[at..at + self.dims];
        // SAFETY: i8 and u8 have one size and alignment, and every bit pattern is valid.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(b.as_ptr().cast::<i8>(), b.len())
        }
    }

    /// The vector of the root's key number `k` (in key order).
    pub(super) fn slot(&self, k: usize) -> usize {
        let at = self.slots_at + k * 4;
        let b = &self.bytes[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
    }
}
