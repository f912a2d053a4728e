//! The test vectors of `store-format.md`, checked byte for byte, and interoperability of the
//! canonical CBOR profile with a general CBOR implementation (ciborium).

use std::sync::Arc;

use memoir::key::Key;
use memoir::object::{Blob, Kind, Object, ObjectId};
use memoir::prolly::chunker::boundary_hash;
use memoir::prolly::{Item, Node, NodeStore, Proof};
use memoir::store::{MemoryBackend, ObjectStore};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn blob_id(text: &str) -> ObjectId {
    Blob(text.as_bytes().to_vec()).to_bytes_and_id().0
}

/// The key of vector tree entry `i` (format appendix, "1,000-key tree").
fn vector_key(i: u32) -> Key {
    let ns = if i.is_multiple_of(5) {
        "codebase:onboard"
    } else {
        "default"
    };
    Key::new(ns, &format!("topic{}.sub{}.item{i:04}", i % 10, i % 7)).unwrap()
}

fn vector_leaf() -> Node {
    Node {
        level: 0,
        items: vec![
            Item::leaf(
                &Key::new("default", "a.b").unwrap().encode(),
                blob_id("one"),
            ),
            Item::leaf(
                &Key::new("default", "a.c").unwrap().encode(),
                blob_id("two"),
            ),
        ],
    }
}

fn vector_internal() -> Node {
    let leaf = vector_leaf();
    let (leaf_id, _) = leaf.to_bytes_and_id();
    Node {
        level: 1,
        items: vec![
            Item {
                key: leaf.items[0].key.clone(),
                last: leaf.items[1].key.clone(),
                id: leaf_id,
                count: 2,
            },
            Item {
                key: Key::new("default", "z").unwrap().encode().into(),
                last: Key::new("default", "z.z").unwrap().encode().into(),
                id: leaf_id,
                count: 300,
            },
        ],
    }
}

#[test]
fn key_encoding_vectors() {
    let cases = [
        (
            "default",
            "preferences.coding.testing",
            "64656661756c7400707265666572656e63657301636f64696e670174657374696e67",
        ),
        (
            "codebase:onboard",
            "a",
            "636f6465626173653a6f6e626f6172640061",
        ),
        // Keys are normalised to NFC: the decomposed and the composed spelling of
        // `café.crème` are one key, encoded composed.
        (
            "default",
            "cafe\u{301}.cre\u{300}me",
            "64656661756c7400636166c3a9016372c3a86d65",
        ),
        (
            "default",
            "caf\u{e9}.cr\u{e8}me",
            "64656661756c7400636166c3a9016372c3a86d65",
        ),
    ];
    for (ns, path, want) in cases {
        assert_eq!(
            hex(&Key::new(ns, path).unwrap().encode()),
            want,
            "{ns}:{path}"
        );
    }
}

#[test]
fn object_vectors() {
    let (id, bytes) = Blob(b"hello".to_vec()).to_bytes_and_id();
    assert_eq!(hex(&bytes), "82024568656c6c6f");
    assert_eq!(id.to_hex(), BLOB_HELLO_ID);

    let (id, bytes) = Node {
        level: 0,
        items: vec![],
    }
    .to_bytes_and_id();
    assert_eq!(hex(&bytes), "830100".to_string() + "80");
    assert_eq!(id.to_hex(), EMPTY_TREE_ID);
    assert_eq!(NodeStore::empty_id(), id);

    let (id, bytes) = vector_leaf().to_bytes_and_id();
    assert_eq!(hex(&bytes), LEAF_BYTES);
    assert_eq!(id.to_hex(), LEAF_ID);

    let (id, bytes) = vector_internal().to_bytes_and_id();
    assert_eq!(hex(&bytes), INTERNAL_BYTES);
    assert_eq!(id.to_hex(), INTERNAL_ID);
}

#[test]
fn boundary_hash_vectors() {
    let k = Key::new("default", "preferences.coding.testing")
        .unwrap()
        .encode();
    assert_eq!(
        [
            boundary_hash(&k, 0),
            boundary_hash(&k, 1),
            boundary_hash(&k, 2)
        ],
        BOUNDARY_HASHES
    );
}

#[test]
fn thousand_key_tree_root() {
    let ns = NodeStore::new(Arc::new(MemoryBackend::new()) as Arc<dyn ObjectStore>, 1024);
    let mut entries: Vec<(Vec<u8>, ObjectId)> = (0..1000u32)
        .map(|i| (vector_key(i).encode(), blob_id(&format!("memory {i}"))))
        .collect();
    entries.sort();
    let root = ns.build_sorted(entries).unwrap();
    let rep = ns.verify(&root);
    assert!(rep.violations.is_empty());
    assert_eq!(rep.nodes_per_level, THOUSAND_NODES_PER_LEVEL.to_vec());
    assert_eq!(root.to_hex(), THOUSAND_ROOT_ID);
}

/// Proofs (format section 11): the two-entry leaf as a whole tree, and the 1,000-key tree.
#[test]
fn proof_vectors() {
    let ns = NodeStore::new(Arc::new(MemoryBackend::new()) as Arc<dyn ObjectStore>, 1024);
    let leaf = vector_leaf();
    let root = ns
        .build_sorted(leaf.items.iter().map(|it| (it.key.to_vec(), it.id)))
        .unwrap();
    assert_eq!(root.to_hex(), LEAF_ID);
    let key = Key::new("default", "a.b").unwrap().encode();
    let proof = ns.prove(&root, &key).unwrap();
    assert_eq!(hex(&proof.to_bytes()), PROOF_LEAF_BYTES);
    assert_eq!(proof.verify(&root, &key).unwrap(), Some(blob_id("one")));
    let absent = Key::new("default", "a.a").unwrap().encode();
    assert_eq!(
        ns.prove(&root, &absent)
            .unwrap()
            .verify(&root, &absent)
            .unwrap(),
        None
    );

    let mut entries: Vec<(Vec<u8>, ObjectId)> = (0..1000u32)
        .map(|i| (vector_key(i).encode(), blob_id(&format!("memory {i}"))))
        .collect();
    entries.sort();
    let root = ns.build_sorted(entries).unwrap();
    assert_eq!(root.to_hex(), THOUSAND_ROOT_ID);
    let key = vector_key(123).encode();
    let bytes = ns.prove(&root, &key).unwrap().to_bytes();
    assert_eq!(
        (bytes.len(), blake3::hash(&bytes).to_hex().to_string()),
        (PROOF_THOUSAND_LEN, PROOF_THOUSAND_BLAKE3.to_string())
    );
    let proof = Proof::from_bytes(&bytes).unwrap();
    assert_eq!(proof.nodes.len(), 2);
    assert_eq!(
        proof.verify(&root, &key).unwrap(),
        Some(blob_id("memory 123"))
    );
}

/// Our canonical bytes are ordinary CBOR: ciborium reads them, and writes the same value back
/// to the same bytes.
#[test]
fn ciborium_reads_and_reproduces_our_bytes() {
    for bytes in [
        Blob(b"hello".to_vec()).encode(),
        vector_leaf().encode(),
        vector_internal().encode(),
        Node {
            level: 0,
            items: vec![],
        }
        .encode(),
    ] {
        let v: ciborium::Value = ciborium::from_reader(&bytes[..]).unwrap();
        let mut again = Vec::new();
        ciborium::into_writer(&v, &mut again).unwrap();
        assert_eq!(hex(&again), hex(&bytes));
        assert_eq!(
            memoir::object::peek_kind(&bytes).ok(),
            Some(if bytes[1] == 1 {
                Kind::Node
            } else {
                Kind::Blob
            })
        );
    }
}

const BLOB_HELLO_ID: &str = "2704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b8632";
const EMPTY_TREE_ID: &str = "96a29adf78b232752b5f2e2fc3f8efe270ecb1f9e4e1e5ab5aa0162f3f7f9fac";
const LEAF_BYTES: &str = "83010082824b64656661756c7400610162582001447dace7f352825bfa87f5906ab519c0119e24d0e6d0af66b4f1e1a5d9c5c7824b64656661756c740061016358203a341f382e9be7a78f017a2cce327d8cb49b180bc1c8318d58ada7d02d5ac082";
const LEAF_ID: &str = "71c9b062ad0f7623cb521bf69fd9c7e5da51b3a572901efec53ee89a70a53c80";
const INTERNAL_BYTES: &str = "83010182844b64656661756c74006101624b64656661756c7400610163582071c9b062ad0f7623cb521bf69fd9c7e5da51b3a572901efec53ee89a70a53c8002844964656661756c74007a4b64656661756c74007a017a582071c9b062ad0f7623cb521bf69fd9c7e5da51b3a572901efec53ee89a70a53c8019012c";
const INTERNAL_ID: &str = "5843a21e7fc384b7ca380ac92496ceb5100273371df2846d085d290cdb8b7017";
const BOUNDARY_HASHES: [u32; 3] = [16668207, 663478011, 3749629131];
const THOUSAND_NODES_PER_LEVEL: [u64; 2] = [20, 1];
const PROOF_LEAF_BYTES: &str = "83014b64656661756c740061016281586283010082824b64656661756c7400610162582001447dace7f352825bfa87f5906ab519c0119e24d0e6d0af66b4f1e1a5d9c5c7824b64656661756c740061016358203a341f382e9be7a78f017a2cce327d8cb49b180bc1c8318d58ada7d02d5ac082";
const PROOF_THOUSAND_LEN: usize = 5969;
const PROOF_THOUSAND_BLAKE3: &str =
    "f322af8ac5ce0fd47e2f587d1ebc7409623383be96ddd61679df31600d081f8f";
const THOUSAND_ROOT_ID: &str = "7894dde9fe77b9c081f56a1e204134eebe8964fbeb0ac0841353d6fa47f936e6";

fn vector_commit() -> memoir::repo::Commit {
    memoir::repo::Commit {
        root: NodeStore::empty_id(),
        parents: vec![blob_id("parent")],
        author: "Ada <ada@example.org>".into(),
        timestamp: 1_767_225_600,
        message: "Store a.b in default".into(),
        metadata: [("actor", "agent-1"), ("source", "cli")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn commit_vector() {
    let (id, bytes) = vector_commit().to_bytes_and_id();
    assert_eq!(hex(&bytes), COMMIT_BYTES);
    assert_eq!(id.to_hex(), COMMIT_ID);
    assert_eq!(
        memoir::repo::Commit::decode(&bytes).unwrap(),
        vector_commit()
    );
    let v: ciborium::Value = ciborium::from_reader(&bytes[..]).unwrap();
    let mut again = Vec::new();
    ciborium::into_writer(&v, &mut again).unwrap();
    assert_eq!(again, bytes);
}

const COMMIT_BYTES: &str = "8703582096a29adf78b232752b5f2e2fc3f8efe270ecb1f9e4e1e5ab5aa0162f3f7f9fac815820999f3814a40fb3616d7ca1c23877871d19ce13467e60947b7a1bdec3bf26bd4075416461203c616461406578616d706c652e6f72673e1a6955b9007453746f726520612e6220696e2064656661756c74a2656163746f72676167656e742d3166736f7572636563636c69";
const COMMIT_ID: &str = "3b2cb5b7dfae19b8826c1919fd3ef2150b69dc604ae6b7bb650e78a081d0b858";

/// Section 1: a pack record and its index entry, byte for byte (blob `hello`, the first
/// object of a new store, sits at offset 8 of pack 1).
#[test]
fn pack_record_and_index_entry_vectors() {
    use memoir::store::{OpenOptions, Store};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let store = Store::create(&path, &OpenOptions::default()).unwrap();
    let (id, bytes) = Blob(b"hello".to_vec()).to_bytes_and_id();
    store.put(id.as_bytes(), &bytes).unwrap();
    store.flush().unwrap();
    drop(store);
    let pack = std::fs::read(path.join("packs").join("pack-00000001")).unwrap();
    assert_eq!(
        hex(&pack),
        "4d454d5041434b31\
         2704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b8632\
         00000008\
         82024568656c6c6f"
    );
    // The object index is derived from the packs: a tail this short has no index file yet
    // (the file's layout is checked by `index_vector` in src/store/pack_index.rs), and the
    // database holds no entry for the object.
    assert!(!path.join("packs").join("pack-00000001.idx").exists());
    let db = crate::common::open_sled_when_free(&path.join("db"));
    let mut trees: Vec<Vec<u8>> = db.tree_names().iter().map(|n| n.to_vec()).collect();
    trees.sort();
    assert_eq!(
        trees,
        vec![
            b"__sled__default".to_vec(),
            b"meta".to_vec(),
            b"refs".to_vec()
        ]
    );
    assert!(db.open_tree("refs").unwrap().is_empty());
    drop(db);
    let store = Store::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(
        store.get(id.as_bytes()).unwrap().as_deref(),
        Some(&bytes[..])
    );
}

/// Derived caches: the change filter of a commit that changed only `default:a.b` (the key,
/// its namespace entry and its path-prefix entries `a` and `a.b`: 4 entries, 2 words), as
/// little-endian words.
#[test]
fn commit_graph_filter_vector() {
    use memoir::repo::graph_cache::{Changed, Filter, FilterKey};
    use memoir::repo::{Repo, Signature};
    use memoir::store::{OpenOptions, Store};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(&dir.path().join("s"), &OpenOptions::default()).unwrap();
    let sig = Signature::new("Ada <ada@example.org>", 1_767_225_600);
    let repo = Repo::init(store, &sig, "Initialize store").unwrap();
    let value = repo.objects().write(&Blob(b"one".to_vec())).unwrap();
    let key = Key::new("default", "a.b").unwrap();
    let c = repo
        .commit(
            "main",
            vec![memoir::prolly::Edit::Put(key.encode(), value)],
            &sig,
            "Store a.b in default",
        )
        .unwrap();
    let g = repo.commit_graph(&[c], true).unwrap();
    let pos = g.position(&c).unwrap();
    let Filter::Bloom(words) = g.filter(pos, 0) else {
        panic!("a Bloom filter")
    };
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(hex(&bytes), COMMIT_FILTER);
    for probe in [
        FilterKey::new(&key.encode()),
        FilterKey::namespace("default"),
        FilterKey::path_prefix("a"),
        FilterKey::path_prefix("a.b"),
    ] {
        assert_eq!(g.changed(pos, 0, probe), Changed::Maybe);
    }
    for probe in [
        FilterKey::namespace("work"),
        FilterKey::path_prefix("b"),
        FilterKey::path_prefix("a.c"),
    ] {
        assert_eq!(g.changed(pos, 0, probe), Changed::No);
    }
}

const COMMIT_FILTER: &str = "000831c6545708238c100100a80a3140";

/// The lexical cache file of two documents (format, "Derived caches"): its length and blake3,
/// and that it reads back and answers.
#[test]
fn lexical_cache_vector() {
    use memoir::recall::lexical::{Doc, LexicalIndex, Query};
    let mut idx = LexicalIndex::new();
    for (path, content, value, actor) in [
        ("notes.alpha", "Alpha beta.", "a", Some("agent-1")),
        ("notes.beta", "Beta gamma.", "b", None),
    ] {
        let key = Key::parse(path, "default").expect("key").encode();
        let doc = Doc {
            namespace: "default".into(),
            path: path.into(),
            content: content.into(),
            timestamp: 1_700_000_000.0,
            actors: actor.into_iter().map(str::to_string).collect(),
        };
        idx.insert(&key, blob_id(value), &doc);
    }
    let bytes = idx.to_bytes().expect("bytes");
    assert_eq!(&bytes[..8], b"MEMLEX08");
    assert_eq!(
        (bytes.len(), hex(blake3::hash(&bytes).as_bytes())),
        (
            612,
            "55a0936ac1211ba0686bf687d01493b5494c0fd1bb8070400fa9130fabf24316".to_string()
        )
    );
    let back = LexicalIndex::from_bytes(&bytes).expect("reads back");
    let hits = back.search(&Query {
        text: "gamma",
        limit: 5,
        ..Default::default()
    });
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, "notes.beta");
    let by_agent = back.search(&Query {
        text: "beta",
        actor: Some("agent-1"),
        limit: 5,
        ..Default::default()
    });
    assert_eq!(by_agent.len(), 1);
    assert_eq!(by_agent[0].path, "notes.alpha");
    assert_eq!(by_agent[0].actor.as_deref(), Some("agent-1"));

    // `cache/lexical.delta`: the same file with `notes.alpha` removed.
    let mut changed = LexicalIndex::from_bytes(&bytes).expect("reads back");
    changed.remove(&Key::parse("notes.alpha", "default").expect("key").encode());
    let delta = changed.delta_bytes().expect("a delta");
    assert_eq!(&delta[..8], b"MEMLXD04");
    // After the magic, the file's checksum and no root (33 zero bytes): D = 1 (document 0), then
    // R = 3 removed postings (term, document, place in the term's postings, key-path and
    // content frequencies): `alpha`
    // (term 0) once in each, `beta` (1) in the content, `notes` (3) in the key path.
    let mut removed = Vec::new();
    removed.extend_from_slice(&1u32.to_le_bytes());
    removed.extend_from_slice(&0u32.to_le_bytes());
    removed.extend_from_slice(&3u32.to_le_bytes());
    for (t, k, c) in [(0u32, 1u16, 1u16), (1, 0, 1), (3, 1, 0)] {
        removed.extend_from_slice(&t.to_le_bytes());
        // Document 0, the first of each term's postings.
        removed.extend_from_slice(&0u32.to_le_bytes());
        removed.extend_from_slice(&0u32.to_le_bytes());
        removed.extend_from_slice(&k.to_le_bytes());
        removed.extend_from_slice(&c.to_le_bytes());
    }
    assert_eq!(
        &delta[8 + 16 + 33..8 + 16 + 33 + removed.len()],
        &removed[..]
    );
    assert_eq!(
        (delta.len(), hex(blake3::hash(&delta).as_bytes())),
        (
            137,
            "25a7d4eaef120b7a5062f51898549271b58f84590e7f5eefd286b50ddb381fd9".to_string()
        )
    );
    let mut back = LexicalIndex::from_bytes(&bytes).expect("reads back");
    back.apply_delta(&delta).expect("applies");
    let hits = back.search(&Query {
        text: "beta",
        limit: 5,
        ..Default::default()
    });
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["notes.beta"]);
}

/// `cache/lexical.idx` (format, "Derived caches"), a term's entries under each parent: 64
/// documents `default:notes.n00` to `default:notes.n63` with content `Common.`, the first
/// `Common common.`, no root, timestamp 1,700,000,000 and value the id of the blob `v`.
#[test]
fn lexical_cache_parent_rows_vector() {
    use memoir::recall::lexical::{Doc, LexicalIndex};
    let mut idx = LexicalIndex::new();
    for i in 0..64 {
        let path = format!("notes.n{i:02}");
        let key = Key::parse(&path, "default").expect("key").encode();
        let doc = Doc {
            namespace: "default".into(),
            path,
            content: if i == 0 { "Common common." } else { "Common." }.into(),
            timestamp: 1_700_000_000.0,
            actors: Vec::new(),
        };
        idx.insert(&key, blob_id("v"), &doc);
    }
    let bytes = idx.to_bytes().expect("bytes");
    // One parent (number 0); `common` in every document, twice in one; `notes` in every
    // key path once: parent, key-path and content sums, documents holding it (u32), the
    // largest key-path and content frequencies and the smallest (u16).
    let row = |sums: [u32; 4], tfs: [u16; 4]| -> Vec<u8> {
        let mut r: Vec<u8> = sums.iter().flat_map(|x| x.to_le_bytes()).collect();
        r.extend(tfs.iter().flat_map(|x| x.to_le_bytes()));
        r
    };
    for expected in [
        row([0, 0, 65, 64], [0, 2, 0, 1]),
        row([0, 64, 0, 64], [1, 0, 1, 0]),
    ] {
        assert!(
            bytes.windows(24).any(|w| w == &expected[..]),
            "entry {expected:?}"
        );
    }
    assert_eq!(
        (bytes.len(), hex(blake3::hash(&bytes).as_bytes())),
        (
            12_343,
            "8e3a602f7e578abc0361732fa068681361f74f57e2bae14fd1599b49ebceebe1".to_string()
        )
    );
}

/// `cache/vectors.bin` (format, "Derived caches"): three keys of the root whose values are
/// the blobs `a`, `b`, `a` (two vectors; the third key repeats the first's), dimensions 4,
/// model `m`, root the id of the blob `root`.
#[test]
fn vector_cache_vector() {
    use memoir::recall::VectorIndex;
    let docs = [
        (blob_id("a"), "a"),
        (blob_id("b"), "b"),
        (blob_id("a"), "a"),
    ];
    let (index, _) = VectorIndex::default()
        .synced("m", &blob_id("root"), &docs, &mut |texts: &[&str]| {
            Ok::<_, ()>(
                texts
                    .iter()
                    .map(|t| match *t {
                        "a" => vec![0.6, -0.8, 0.0, 0.0],
                        _ => vec![0.0, 0.0, 0.6, 0.8],
                    })
                    .collect(),
            )
        })
        .unwrap();
    let bytes = index.bytes();
    assert_eq!(&bytes[..8], b"MVEC\0\0\0\x02");
    assert_eq!(
        (bytes.len(), hex(blake3::hash(bytes).as_bytes())),
        (
            126,
            "d72ca412101f1bd7441153d5e2d3390782666c0fbe493884a84abb2326b5e0bb".to_string()
        )
    );
    // After the 74 bytes of the header, the id prefixes; the repeat is key 2, vector 0.
    assert_eq!(&bytes[74..86], &blob_id("a").as_bytes()[..12]);
    assert_eq!(&bytes[110..118], &[2, 0, 0, 0, 0, 0, 0, 0]);
    let c = index.cosines(&[0.6, -0.8, 0.0, 0.0]);
    assert!((c[0] - 1.0).abs() < 0.01 && c[1].abs() < 0.01 && (c[2] - 1.0).abs() < 0.01);
}
