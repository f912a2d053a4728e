//! Hostile bytes: every decoder returns a typed error (never panics), whatever decodes is
//! canonical (re-encodes to the same bytes), and every damaged stored object is reported as
//! corruption naming its id.

use std::sync::Arc;

use memoir::key::Key;
use memoir::object::{Blob, Kind, Object, ObjectError, ObjectId, Objects};
use memoir::prolly::{Item, Node, NodeStore};
use memoir::store::{MemoryBackend, ObjectStore};
use proptest::prelude::*;

fn sample_node(level: u8, n: usize) -> Node {
    let items = (0..n)
        .map(|i| {
            let k = Key::new("default", &format!("a.b{i:03}")).unwrap().encode();
            let id = ObjectId::of(Kind::Blob, &i.to_le_bytes());
            if level == 0 {
                Item::leaf(&k, id)
            } else {
                Item {
                    last: [&k[..], b"z"].concat().into(),
                    key: k.into(),
                    id,
                    count: 1 + i as u64 * 1000,
                }
            }
        })
        .collect();
    Node { level, items }
}

fn samples() -> Vec<Vec<u8>> {
    vec![
        sample_node(0, 5).encode(),
        sample_node(1, 4).encode(),
        sample_node(0, 0).encode(),
        Blob(b"some value".to_vec()).encode(),
        memoir::repo::Commit {
            root: NodeStore::empty_id(),
            parents: vec![NodeStore::empty_id(); 2],
            author: "a".into(),
            timestamp: -5,
            message: "m".into(),
            metadata: [
                ("k".to_string(), "v".to_string()),
                ("kk".to_string(), "w".to_string()),
            ]
            .into_iter()
            .collect(),
        }
        .encode(),
    ]
}

/// Decoding must not panic; if it succeeds, re-encoding gives back the same bytes.
fn decode_all(bytes: &[u8]) {
    if let Ok(n) = Node::decode(bytes) {
        assert_eq!(n.encode(), bytes, "node decoded from non-canonical bytes");
    }
    if let Ok(b) = Blob::decode(bytes) {
        assert_eq!(b.encode(), bytes, "blob decoded from non-canonical bytes");
    }
    let _ = memoir::object::peek_kind(bytes);
    if let Ok(c) = memoir::repo::Commit::decode(bytes) {
        assert_eq!(c.encode(), bytes, "commit decoded from non-canonical bytes");
    }
    if let Ok(k) = Key::decode(bytes) {
        assert_eq!(k.encode(), bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        decode_all(&bytes);
    }

    #[test]
    fn mutated_objects_never_panic(which in 0usize..5, edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..6)) {
        let mut b = samples()[which].clone();
        for (pos, val, op) in edits {
            if b.is_empty() { break; }
            let p = pos % b.len();
            match op {
                0 => b[p] ^= val | 1,
                1 => b.truncate(p),
                _ => b.insert(p, val),
            }
        }
        decode_all(&b);
    }
}

#[test]
fn every_bit_flip_and_truncation_is_reported_as_corruption_of_that_object() {
    let mem = Arc::new(MemoryBackend::new());
    let objects = Objects::new(mem.clone() as Arc<dyn ObjectStore>);
    let node = sample_node(0, 3);
    let id = objects.write(&node).unwrap();
    let good = node.encode();
    let mut cases = Vec::new();
    for bit in 0..good.len() * 8 {
        let mut b = good.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        cases.push(b);
    }
    for len in 0..good.len() {
        cases.push(good[..len].to_vec());
    }
    let mut extended = good.clone();
    extended.push(0);
    cases.push(extended);
    let n_cases = cases.len();
    for bad in cases {
        mem.overwrite_raw(id.as_bytes(), &bad);
        match objects.read::<Node>(&id) {
            Err(ObjectError::Corrupt { id: named, .. }) => assert_eq!(named, id),
            other => panic!("damaged object read as {other:?}"),
        }
        // The raw read checks them the same way.
        assert!(
            matches!(objects.read_bytes(&id, Kind::Node), Err(ObjectError::Corrupt { id: named, .. }) if named == id)
        );
        let ns = NodeStore::new(mem.clone() as Arc<dyn ObjectStore>, 64);
        assert!(ns.get(&id, b"default\0a").is_err());
        let rep = ns.verify(&id);
        assert_eq!(rep.violations.len(), 1);
        assert_eq!(rep.violations[0].node, id);
    }
    assert!(n_cases > 800);
    // A missing object is its own error, and a put of the right bytes repairs the damage.
    mem.overwrite_raw(id.as_bytes(), b"junk");
    assert_eq!(
        objects.store().put(id.as_bytes(), &good).unwrap(),
        memoir::store::PutOutcome::Repaired
    );
    assert_eq!(objects.read::<Node>(&id).unwrap(), node);
    assert_eq!(&objects.read_bytes(&id, Kind::Node).unwrap()[..], &good[..]);
    objects.store().delete(id.as_bytes()).unwrap();
    assert!(matches!(objects.read::<Node>(&id), Err(ObjectError::Missing(m)) if m == id));
    assert!(matches!(objects.read_bytes(&id, Kind::Node), Err(ObjectError::Missing(m)) if m == id));
}

#[test]
fn an_object_of_another_kind_is_refused() {
    let mem = Arc::new(MemoryBackend::new());
    let objects = Objects::new(mem.clone() as Arc<dyn ObjectStore>);
    let blob_id = objects.write(&Blob(b"x".to_vec())).unwrap();
    assert!(matches!(
        objects.read::<Node>(&blob_id),
        Err(ObjectError::Corrupt { .. })
    ));
    assert_eq!(objects.read::<Blob>(&blob_id).unwrap(), Blob(b"x".to_vec()));
}

#[test]
fn prefixes_resolve_uniquely_or_say_why() {
    let mem = Arc::new(MemoryBackend::new());
    let objects = Objects::new(mem as Arc<dyn ObjectStore>);
    let ids: Vec<ObjectId> = (0..2000u32)
        .map(|i| objects.write(&Blob(i.to_le_bytes().to_vec())).unwrap())
        .collect();
    let id = ids[17];
    assert_eq!(objects.resolve_prefix(&id.to_hex()).unwrap(), id);
    assert_eq!(objects.resolve_prefix(&id.short(12)).unwrap(), id);
    assert_eq!(
        objects
            .resolve_prefix(&id.short(11).to_uppercase())
            .unwrap(),
        id
    );
    // With 2,000 ids some 4-digit prefix is shared: find one and expect ambiguity.
    let mut shorts: Vec<String> = ids.iter().map(|i| i.short(4)).collect();
    shorts.sort();
    let dup = shorts
        .windows(2)
        .find(|w| w[0] == w[1])
        .map(|w| w[0].clone());
    let dup = dup.expect("2,000 ids share some 4-digit prefix");
    match objects.resolve_prefix(&dup) {
        Err(ObjectError::Ambiguous { candidates, .. }) => {
            assert!(candidates.len() >= 2);
            assert!(candidates.iter().all(|c| c.short(4) == dup));
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    let absent = (0..u16::MAX)
        .map(|n| format!("{n:04x}ab"))
        .find(|p| !ids.iter().any(|i| i.to_hex().starts_with(p.as_str())))
        .unwrap();
    assert!(matches!(
        objects.resolve_prefix(&absent),
        Err(ObjectError::PrefixNotFound(_))
    ));
    for bad in ["", "abc", "xyz1", &"0".repeat(65)] {
        assert!(matches!(
            objects.resolve_prefix(bad),
            Err(ObjectError::BadPrefix(_))
        ));
    }
}
