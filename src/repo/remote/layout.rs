//! The layout of a remote in object storage (`store-format.md`, "Remotes").
//!
//! ```text
//! memoir-remote.json                      {"format":"memoir-remote","version":1}
//! packs/<64 hex>.pack                     objects; the name is BLAKE3 of the file
//! packs/<64 hex>.idx                      the pack's index; written after the pack
//! refs/<escaped branch>/<20-digit seq>    one immutable version of a branch (JSON)
//! ```
//!
//! A pack is `MEMRPAK1`, a u32 count, then per object its 32-byte id, u32 length and bytes,
//! sorted by id (all integers little-endian). Its index is `MEMRIDX1`, the count, per object
//! the id, the u64 offset of its bytes and the u32 length, then the pack's 32-byte BLAKE3
//! hash. A pack without an index is incomplete (an interrupted push) and is ignored.

use serde::{Deserialize, Serialize};

use super::{parse_commit, RemoteError, RemoteResult};
use crate::object::{peek_kind, ObjectId};
use crate::repo::revision::validate_branch_name;

/// The marker object that makes a prefix a memoir remote.
pub const MARKER: &str = "memoir-remote.json";
/// The remote layout version this build reads and writes.
pub const LAYOUT_VERSION: u64 = 1;
/// Where packs and their indexes live.
pub const PACKS: &str = "packs/";
/// Where ref versions live.
pub const REFS: &str = "refs/";
/// First bytes of a pack.
pub const PACK_MAGIC: &[u8; 8] = b"MEMRPAK1";
/// First bytes of a pack index.
pub const INDEX_MAGIC: &[u8; 8] = b"MEMRIDX1";
/// A push splits its objects into packs of about this many bytes at most, so an
/// interrupted push resumes pack by pack.
pub const MAX_PACK_BYTES: u64 = 32 << 20;
/// The largest object a remote may hold: four times the largest memory content, far above
/// any object memoir writes. A pack index naming a longer one is damage.
pub const MAX_OBJECT_BYTES: u64 = 64 << 20;
/// The largest pack a fetch reads. Packs pushed by earlier versions could pass
/// [`MAX_PACK_BYTES`] by one object and their record heads: hence the margin.
pub const MAX_PACK_FILE_BYTES: u64 = 2 * MAX_PACK_BYTES + MAX_OBJECT_BYTES;
/// The largest marker read (the marker is 39 bytes).
pub const MAX_MARKER_BYTES: u64 = 1 << 10;
/// The largest ref version read (one holds a branch name of at most 100 bytes, two commit
/// ids and three numbers: under 500 bytes).
pub const MAX_REF_VERSION_BYTES: u64 = 4 << 10;
const INDEX_ENTRY: usize = 32 + 8 + 4;
const PACK_RECORD_HEAD: usize = 32 + 4;
const PACK_HEAD: u64 = 8 + 4;

/// The most objects a pack of `pack_size` bytes can hold (each has a record head).
pub fn max_pack_objects(pack_size: u64) -> u64 {
    pack_size.saturating_sub(PACK_HEAD) / PACK_RECORD_HEAD as u64
}

/// The most bytes the index of a pack of `pack_size` bytes can have.
pub fn max_index_bytes(pack_size: u64) -> u64 {
    12 + max_pack_objects(pack_size) * INDEX_ENTRY as u64 + 32
}

/// The bytes a pack of `objects` takes: its head, then a record per object.
pub fn pack_bytes<'a>(objects: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    objects
        .into_iter()
        .map(|b| (PACK_RECORD_HEAD + b.len()) as u64)
        .sum::<u64>()
        + PACK_HEAD
}

/// The marker's bytes.
pub fn marker_bytes() -> Vec<u8> {
    format!("{{\"format\":\"memoir-remote\",\"version\":{LAYOUT_VERSION}}}\n").into_bytes()
}

/// Checks a marker read from a remote.
pub fn check_marker(bytes: &[u8], url: &str) -> RemoteResult<()> {
    #[derive(Deserialize)]
    struct Marker {
        format: String,
        version: u64,
    }
    let m: Marker = serde_json::from_slice(bytes).map_err(|_| {
        RemoteError::NotARemote(format!("{url}: {MARKER} is not a memoir remote marker"))
    })?;
    if m.format != "memoir-remote" {
        return Err(RemoteError::NotARemote(format!(
            "{url}: {MARKER} names format '{}', not memoir-remote",
            m.format
        )));
    }
    if m.version != LAYOUT_VERSION {
        return Err(RemoteError::NotARemote(format!(
            "{url} has remote layout version {}; this memoir reads version {LAYOUT_VERSION}",
            m.version
        )));
    }
    Ok(())
}

/// A branch name as one path segment: bytes other than ASCII letters, digits, `.`, `_` and
/// `-` become `~XX` (upper-case hex); `~` cannot occur in a branch name, so this reverses.
pub fn escape_branch(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("~{b:02X}"));
        }
    }
    out
}

/// The branch name of an escaped segment (`None`: not one [`escape_branch`] makes).
pub fn unescape_branch(segment: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(segment.len());
    let mut it = segment.bytes();
    while let Some(b) = it.next() {
        if b == b'~' {
            let hi = (it.next()? as char).to_digit(16)?;
            let lo = (it.next()? as char).to_digit(16)?;
            bytes.push((hi * 16 + lo) as u8);
        } else {
            bytes.push(b);
        }
    }
    let name = String::from_utf8(bytes).ok()?;
    (escape_branch(&name) == segment && validate_branch_name(&name).is_ok()).then_some(name)
}

/// The prefix under which `branch`'s versions live.
pub fn ref_dir(branch: &str) -> String {
    format!("{REFS}{}/", escape_branch(branch))
}

/// The name of version `seq` of `branch`.
pub fn ref_version_name(branch: &str, seq: u64) -> String {
    format!("{}{seq:020}", ref_dir(branch))
}

/// The branch and sequence number a ref version's name holds.
pub fn parse_ref_name(name: &str) -> Option<(String, u64)> {
    let rest = name.strip_prefix(REFS)?;
    let (branch, seq) = rest.split_once('/')?;
    if seq.len() != 20 || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((unescape_branch(branch)?, seq.parse().ok()?))
}

/// The name of a pack.
pub fn pack_name(hash: &str) -> String {
    format!("{PACKS}{hash}.pack")
}

/// The name of a pack's index.
pub fn index_name(hash: &str) -> String {
    format!("{PACKS}{hash}.idx")
}

/// The hash a pack or index name holds, and whether it is an index.
pub fn parse_pack_name(name: &str) -> Option<(String, bool)> {
    let rest = name.strip_prefix(PACKS)?;
    let (hash, index) = match rest.strip_suffix(".idx") {
        Some(h) => (h, true),
        None => (rest.strip_suffix(".pack")?, false),
    };
    (hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
    .then(|| (hash.to_string(), index))
}

/// One version of a remote branch: what a push recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefVersion {
    /// The branch.
    pub branch: String,
    /// Its sequence number (1 for the first version).
    pub seq: u64,
    /// The commit the branch names (hex).
    pub commit: String,
    /// The commit of the previous version (absent for the first).
    pub previous: Option<String>,
    /// Whether the push replaced history that was not an ancestor (`push --force`).
    pub forced: bool,
    /// When it was pushed (Unix seconds, the pusher's clock).
    pub time: i64,
}

impl RefVersion {
    /// The JSON bytes stored.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec(self).expect("a ref version serializes");
        v.push(b'\n');
        v
    }

    /// Reads the version stored as `name`, which must agree with what it holds.
    pub fn from_bytes(bytes: &[u8], name: &str) -> RemoteResult<RefVersion> {
        let bad = |why: String| RemoteError::Corrupt(format!("ref version {name}: {why}"));
        let v: RefVersion =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("not a ref version ({e})")))?;
        if parse_ref_name(name) != Some((v.branch.clone(), v.seq)) {
            return Err(bad("its branch or number differs from its name".into()));
        }
        parse_commit(&v.commit, name)?;
        if let Some(p) = &v.previous {
            parse_commit(p, name)?;
        }
        Ok(v)
    }

    /// The commit as an id (checked by [`RefVersion::from_bytes`]).
    pub fn commit_id(&self) -> RemoteResult<ObjectId> {
        parse_commit(&self.commit, &self.branch)
    }
}

/// One object of a pack, as its index lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackEntry {
    /// The object.
    pub id: ObjectId,
    /// Where its bytes start in the pack.
    pub offset: u64,
    /// How many bytes it has.
    pub len: u32,
}

/// A pack ready to upload.
#[derive(Debug, Clone)]
pub struct BuiltPack {
    /// Its hash (hex): the name.
    pub hash: String,
    /// The pack's bytes.
    pub pack: Vec<u8>,
    /// Its index's bytes.
    pub index: Vec<u8>,
    /// How many objects it holds.
    pub objects: u64,
}

/// Builds a pack of `objects` (sorted by id here, duplicates dropped).
pub fn build_pack(mut objects: Vec<(ObjectId, Vec<u8>)>) -> BuiltPack {
    objects.sort_by_key(|a| a.0);
    objects.dedup_by(|a, b| a.0 == b.0);
    let body: usize = objects
        .iter()
        .map(|(_, b)| PACK_RECORD_HEAD + b.len())
        .sum();
    let mut pack = Vec::with_capacity(12 + body);
    pack.extend_from_slice(PACK_MAGIC);
    pack.extend_from_slice(&(objects.len() as u32).to_le_bytes());
    let mut index = Vec::with_capacity(12 + objects.len() * INDEX_ENTRY + 32);
    index.extend_from_slice(INDEX_MAGIC);
    index.extend_from_slice(&(objects.len() as u32).to_le_bytes());
    for (id, bytes) in &objects {
        pack.extend_from_slice(id.as_bytes());
        pack.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        index.extend_from_slice(id.as_bytes());
        index.extend_from_slice(&(pack.len() as u64).to_le_bytes());
        index.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        pack.extend_from_slice(bytes);
    }
    let hash = blake3::hash(&pack);
    index.extend_from_slice(hash.as_bytes());
    BuiltPack {
        hash: hash.to_hex().to_string(),
        pack,
        index,
        objects: objects.len() as u64,
    }
}

/// Reads the index of pack `hash`, which is `pack_size` bytes long: its entries, checked to
/// be sorted, to lie wholly inside the pack, to be at most [`MAX_OBJECT_BYTES`] long, and to
/// name this pack.
pub fn read_index(bytes: &[u8], hash: &str, pack_size: u64) -> RemoteResult<Vec<PackEntry>> {
    let bad = |why: &str| RemoteError::Corrupt(format!("pack index {hash}: {why}"));
    if bytes.len() < 12 + 32 || &bytes[..8] != INDEX_MAGIC {
        return Err(bad("does not begin with the index magic"));
    }
    let count = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    if count as u64 > max_pack_objects(pack_size) {
        return Err(bad(&format!(
            "it claims {count} objects, more than a pack of {pack_size} bytes can hold"
        )));
    }
    if Some(bytes.len()) != count.checked_mul(INDEX_ENTRY).map(|n| n + 12 + 32) {
        return Err(bad("its length does not match its count"));
    }
    if blake3::Hash::from_bytes(bytes[bytes.len() - 32..].try_into().expect("32 bytes"))
        .to_hex()
        .as_str()
        != hash
    {
        return Err(bad("it names another pack"));
    }
    let mut out = Vec::with_capacity(count);
    for e in bytes[12..12 + count * INDEX_ENTRY].chunks_exact(INDEX_ENTRY) {
        let entry = PackEntry {
            id: ObjectId::from_bytes(e[..32].try_into().expect("32 bytes")),
            offset: u64::from_le_bytes(e[32..40].try_into().expect("8 bytes")),
            len: u32::from_le_bytes(e[40..44].try_into().expect("4 bytes")),
        };
        if out.last().is_some_and(|p: &PackEntry| p.id >= entry.id) {
            return Err(bad("its ids are not sorted"));
        }
        if u64::from(entry.len) > MAX_OBJECT_BYTES {
            return Err(bad(&format!(
                "an entry is {} bytes long; an object has at most {MAX_OBJECT_BYTES}",
                entry.len
            )));
        }
        let end = entry.offset.checked_add(u64::from(entry.len));
        if entry.offset < PACK_HEAD + PACK_RECORD_HEAD as u64 || end.is_none_or(|e| e > pack_size) {
            return Err(bad("an entry lies outside the pack"));
        }
        out.push(entry);
    }
    Ok(out)
}

/// Checks that `bytes` are the object `id` (its kind tag read, its hash recomputed).
pub fn verify_object(id: &ObjectId, bytes: &[u8], from: &str) -> RemoteResult<()> {
    let kind = peek_kind(bytes).map_err(|_| {
        RemoteError::Corrupt(format!(
            "object {} in {from} is not an object (no kind tag)",
            id.to_hex()
        ))
    })?;
    if ObjectId::of(kind, bytes) != *id {
        return Err(RemoteError::Corrupt(format!(
            "object {} in {from} does not hash to its id",
            id.to_hex()
        )));
    }
    Ok(())
}

/// The objects of `entries` (read from the pack's index) in the whole pack `pack`, which is
/// checked against its name, and each object against its id.
pub fn read_pack(
    pack: &[u8],
    hash: &str,
    entries: &[PackEntry],
) -> RemoteResult<Vec<(ObjectId, Vec<u8>)>> {
    if blake3::hash(pack).to_hex().as_str() != hash {
        return Err(RemoteError::Corrupt(format!(
            "pack {hash} does not hash to its name"
        )));
    }
    entries
        .iter()
        .map(|e| {
            let span = usize::try_from(e.offset)
                .ok()
                .and_then(|s| Some(s..s.checked_add(e.len as usize)?));
            let bytes = span.and_then(|r| pack.get(r)).ok_or_else(|| {
                RemoteError::Corrupt(format!("pack {hash} is shorter than its index"))
            })?;
            verify_object(&e.id, bytes, &format!("pack {hash}"))?;
            Ok((e.id, bytes.to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{Blob, Object};

    #[test]
    fn branch_names_escape_to_one_segment_and_back() {
        for b in ["main", "feature/x", "agent.one_2-b", "ünï/côde", "a+b"] {
            let e = escape_branch(b);
            assert!(!e.contains('/'), "{e}");
            assert_eq!(unescape_branch(&e).as_deref(), Some(b));
        }
        assert_eq!(escape_branch("feature/x"), "feature~2Fx");
        assert_eq!(unescape_branch("feature~2fx"), None, "one spelling only");
        assert_eq!(unescape_branch("a~2"), None);
        let name = ref_version_name("feature/x", 7);
        assert_eq!(name, "refs/feature~2Fx/00000000000000000007");
        assert_eq!(parse_ref_name(&name), Some(("feature/x".into(), 7)));
        assert_eq!(parse_ref_name("refs/main/7"), None);
    }

    #[test]
    fn packs_round_trip_and_refuse_damage() {
        let objs: Vec<(ObjectId, Vec<u8>)> = (0..5)
            .map(|i| Blob(format!("value {i}").into_bytes()).to_bytes_and_id())
            .collect();
        let built = build_pack(objs.iter().rev().cloned().collect());
        assert_eq!(built.objects, 5);
        let size = built.pack.len() as u64;
        let entries = read_index(&built.index, &built.hash, size).unwrap();
        let back = read_pack(&built.pack, &built.hash, &entries).unwrap();
        let mut want = objs.clone();
        want.sort_by_key(|a| a.0);
        assert_eq!(back, want);

        let mut damaged = built.pack.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(matches!(
            read_pack(&damaged, &built.hash, &entries),
            Err(RemoteError::Corrupt(_))
        ));
        let other = "0".repeat(64);
        assert!(read_index(&built.index, &other, size).is_err());
        assert!(read_index(&built.index, &built.hash, size - 1).is_err());
        let e = entries[0];
        let mut flipped = built.pack[e.offset as usize..][..e.len as usize].to_vec();
        flipped[0] ^= 0x40;
        assert!(verify_object(&e.id, &flipped, "test").is_err());
    }

    #[test]
    fn index_sizes_are_checked_against_the_pack() {
        let (id, bytes) = Blob(b"hello".to_vec()).to_bytes_and_id();
        let built = build_pack(vec![(id, bytes)]);
        let size = built.pack.len() as u64;
        assert_eq!(max_pack_objects(size), 1);
        assert_eq!(max_index_bytes(size), built.index.len() as u64);
        let with = |count: u32, offset: u64, len: u32| {
            let mut idx = built.index.clone();
            idx[8..12].copy_from_slice(&count.to_le_bytes());
            idx[44..52].copy_from_slice(&offset.to_le_bytes());
            idx[52..56].copy_from_slice(&len.to_le_bytes());
            read_index(&idx, &built.hash, size)
        };
        assert!(with(1, 48, 8).is_ok());
        for (count, offset, len, says) in [
            (40_000_000, 48, 8, "claims"),
            (1, 48, 0xFFFF_FFF0, "at most"),
            (1, u64::MAX - 2, 8, "outside"),
            (1, 0, 8, "outside"),
            (1, 49, 8, "outside"),
        ] {
            let e = with(count, offset, len).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        assert!(read_pack(
            &built.pack,
            &built.hash,
            &[PackEntry {
                id,
                offset: 48,
                len: 9
            }]
        )
        .is_err());
    }

    #[test]
    fn ref_versions_must_match_their_names() {
        let v = RefVersion {
            branch: "main".into(),
            seq: 2,
            commit: "ab".repeat(32),
            previous: Some("cd".repeat(32)),
            forced: false,
            time: 5,
        };
        let name = ref_version_name("main", 2);
        assert_eq!(RefVersion::from_bytes(&v.to_bytes(), &name).unwrap(), v);
        assert!(RefVersion::from_bytes(&v.to_bytes(), &ref_version_name("main", 3)).is_err());
        assert!(RefVersion::from_bytes(b"{}", &name).is_err());
    }
}

#[cfg(test)]
mod vectors {
    use super::*;
    use crate::object::{Blob, Object};

    /// The remote layout's test vectors, as `store-format.md` lists them.
    #[test]
    fn remote_vectors() {
        let (id, bytes) = Blob(b"hello".to_vec()).to_bytes_and_id();
        let built = build_pack(vec![(id, bytes)]);
        let pack_hex: String = built.pack.iter().map(|b| format!("{b:02x}")).collect();
        let index_hex: String = built.index.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(pack_hex, "4d454d5250414b31010000002704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b86320800000082024568656c6c6f");
        assert_eq!(index_hex, "4d454d5249445831010000002704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b8632300000000000000008000000801d82b3d4c0767f207d0e127e19cff8d52385a852cf6f36b6ecc14dc749e800");
        assert_eq!(escape_branch("agents/ünï"), "agents~2F~C3~BCn~C3~AF");
        assert_eq!(
            ref_version_name("agents/a", 1),
            "refs/agents~2Fa/00000000000000000001"
        );
        let v = RefVersion {
            branch: "main".into(),
            seq: 2,
            commit: "ab".repeat(32),
            previous: Some("cd".repeat(32)),
            forced: false,
            time: 1767225600,
        };
        assert_eq!(
            String::from_utf8(v.to_bytes()).unwrap(),
            format!(
                "{{\"branch\":\"main\",\"seq\":2,\"commit\":\"{}\",\"previous\":\"{}\",\"forced\":false,\"time\":1767225600}}\n",
                "ab".repeat(32),
                "cd".repeat(32)
            )
        );
        assert_eq!(
            built.hash,
            "801d82b3d4c0767f207d0e127e19cff8d52385a852cf6f36b6ecc14dc749e800"
        );
    }
}
