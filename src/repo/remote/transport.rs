//! What a remote needs from object storage: whole-object reads and writes by name, byte
//! ranges, listing by prefix, deletion, and one conditional write (create if absent).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

/// A stored object of a remote, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name, relative to the remote's root (`packs/…`, `refs/…`).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written (Unix seconds).
    pub modified: i64,
}

/// A failed request to the object storage.
#[derive(Debug, thiserror::Error)]
pub struct TransportError {
    /// What was attempted (`get`, `put`, `list`, `delete`).
    pub op: &'static str,
    /// The object name or prefix.
    pub name: String,
    /// The remote, as its URL.
    pub remote: String,
    /// What the storage answered.
    pub message: String,
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.name.is_empty() {
            write!(f, "cannot {} {}: {}", self.op, self.remote, self.message)
        } else {
            write!(
                f,
                "{} {} on {}: {}",
                self.op, self.name, self.remote, self.message
            )
        }
    }
}

/// What [`Transport::get`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// No object has that name.
    Missing,
    /// The object is larger than the limit asked: its size (or at least this much when
    /// the storage did not say). Nothing past the limit was read.
    TooLarge(u64),
    /// The object's bytes.
    Bytes(Vec<u8>),
}

/// Object storage as remotes use it. Writes of a whole object are atomic (readers see all of
/// it or nothing), as S3 and a rename on a local file system guarantee.
pub trait Transport: Send + Sync {
    /// The remote's URL, for messages.
    fn url(&self) -> String;
    /// The bytes of `name`, if it has at most `limit` bytes: a remote is not trusted, so
    /// every read says how much it accepts, and no more is read or allocated.
    fn get(&self, name: &str, limit: u64) -> Result<Got, TransportError>;
    /// Byte ranges of `name` (which must exist), in the order asked.
    fn get_ranges(&self, name: &str, ranges: &[Range<u64>])
        -> Result<Vec<Vec<u8>>, TransportError>;
    /// Writes `name`, replacing any object of that name.
    fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), TransportError>;
    /// Writes `name` only if no object has that name: `Ok(false)` when one exists (and is
    /// left as it was). Of two concurrent calls for one name, at most one returns true.
    fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool, TransportError>;
    /// Every object whose name starts with `prefix`, sorted by name.
    fn list(&self, prefix: &str) -> Result<Vec<Entry>, TransportError>;
    /// Deletes `name` (no error when it is already gone).
    fn delete(&self, name: &str) -> Result<(), TransportError>;
}

/// A remote held in memory: for tests of the layer above transports.
#[derive(Debug, Default)]
pub struct MemoryTransport {
    objects: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl MemoryTransport {
    /// An empty remote.
    pub fn new() -> Self {
        Self::default()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.objects.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the bytes of `name` without any check (tests damage a remote with it).
    pub fn overwrite(&self, name: &str, bytes: Vec<u8>) {
        self.map().insert(name.to_string(), bytes);
    }
}

impl Transport for MemoryTransport {
    fn url(&self) -> String {
        "memory:".to_string()
    }

    fn get(&self, name: &str, limit: u64) -> Result<Got, TransportError> {
        Ok(match self.map().get(name) {
            None => Got::Missing,
            Some(b) if b.len() as u64 > limit => Got::TooLarge(b.len() as u64),
            Some(b) => Got::Bytes(b.clone()),
        })
    }

    fn get_ranges(
        &self,
        name: &str,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Vec<u8>>, TransportError> {
        let map = self.map();
        let bytes = map.get(name).ok_or_else(|| TransportError {
            op: "get",
            name: name.to_string(),
            remote: self.url(),
            message: "no such object".into(),
        })?;
        ranges
            .iter()
            .map(|r| {
                bytes
                    .get(r.start as usize..r.end as usize)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| TransportError {
                        op: "get",
                        name: name.to_string(),
                        remote: "memory:".into(),
                        message: format!("range {}..{} is past the end", r.start, r.end),
                    })
            })
            .collect()
    }

    fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.map().insert(name.to_string(), bytes);
        Ok(())
    }

    fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool, TransportError> {
        let mut map = self.map();
        if map.contains_key(name) {
            return Ok(false);
        }
        map.insert(name.to_string(), bytes);
        Ok(true)
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, TransportError> {
        Ok(self
            .map()
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| Entry {
                name: k.clone(),
                size: v.len() as u64,
                modified: 0,
            })
            .collect())
    }

    fn delete(&self, name: &str) -> Result<(), TransportError> {
        self.map().remove(name);
        Ok(())
    }
}
