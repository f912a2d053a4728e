//! Integration tests of the store layer: the backend contract (run on every backend), the
//! store directory (create/open/refusals/reopen) and the LOCK, across threads and processes.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use memoir::store::{
    Backend, BackendKind, MemoryBackend, ObjectStore, OpenOptions, PutOutcome, RawId, RefStore,
    RestingHead, Store, StoreError, FORMAT_FILE, FORMAT_VERSION, LOCK_FILE,
};
use proptest::prelude::*;

/// Environment variable that turns `lock_holder_child` into a lock holder for that path.
const HOLD_ENV: &str = "MEMOIR_TEST_HOLD_LOCK";

fn id(prefix: &[u8], last: u8) -> RawId {
    let mut id = [0u8; 32];
    id[..prefix.len()].copy_from_slice(prefix);
    id[31] = last;
    id
}

fn opts(timeout_ms: u64) -> OpenOptions {
    OpenOptions {
        lock_timeout: Duration::from_millis(timeout_ms),
        ..OpenOptions::default()
    }
}

fn new_sled_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(&dir.path().join("s"), &OpenOptions::default()).unwrap();
    (dir, store)
}

// ---------------------------------------------------------------------------------------
// The contract every backend satisfies.
// ---------------------------------------------------------------------------------------

fn contract(b: &dyn Backend) {
    objects_contract(b);
    refs_contract(b);
    concurrent_cas_contract(b);
    b.flush().unwrap();
    b.size_on_disk().unwrap();
}

fn objects_contract(b: &dyn Backend) {
    let a = id(b"a", 1);
    assert_eq!(b.get(&a).unwrap(), None);
    assert!(!b.contains(&a).unwrap());

    // put / get / contains, dedup, repair.
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Written);
    assert!(b.contains(&a).unwrap());
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Existing);
    assert_eq!(b.put(&a, b"damaged").unwrap(), PutOutcome::Repaired);
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"damaged"[..]));
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Repaired);
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"one"[..]));
    // Empty bytes are a value like any other.
    let e = id(b"e", 0);
    assert_eq!(b.put(&e, b"").unwrap(), PutOutcome::Written);
    assert_eq!(b.get(&e).unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(b.put(&e, b"").unwrap(), PutOutcome::Existing);

    // put_many: new, existing, repaired, and a repeated id seeing its earlier entry.
    let ab2 = id(b"ab", 2);
    let ab3 = id(b"ab", 3);
    let out = b
        .put_many(&[
            (ab2, b"two".to_vec()),
            (a, b"one".to_vec()),
            (e, b"not empty".to_vec()),
            (ab3, b"three".to_vec()),
            (ab3, b"three".to_vec()),
            (ab2, b"TWO".to_vec()),
        ])
        .unwrap();
    assert_eq!(
        out,
        vec![
            PutOutcome::Written,
            PutOutcome::Existing,
            PutOutcome::Repaired,
            PutOutcome::Written,
            PutOutcome::Existing,
            PutOutcome::Repaired,
        ]
    );
    assert_eq!(b.get(&ab2).unwrap().as_deref(), Some(&b"TWO"[..]));
    assert_eq!(b.get(&ab3).unwrap().as_deref(), Some(&b"three"[..]));
    assert_eq!(b.get(&e).unwrap().as_deref(), Some(&b"not empty"[..]));
    assert_eq!(b.put_many(&[]).unwrap(), vec![]);

    // More ids around the prefixes, including the extremes.
    let extra = [
        id(b"", 0),
        id(b"b", 9),
        id(b"aa", 7),
        id(b"abc", 4),
        [0xff; 32],
    ];
    for x in &extra {
        assert_eq!(b.put(x, x).unwrap(), PutOutcome::Written);
    }
    let mut all: Vec<RawId> = vec![a, e, ab2, ab3];
    all.extend(extra);
    all.sort();

    // ids_with_prefix: sorted, exactly the matching ids.
    for prefix in [
        &b""[..],
        b"a",
        b"ab",
        b"abc",
        b"abd",
        b"b",
        b"z",
        &[0xff][..],
        &ab3[..],
        &[0u8; 32][..],
    ] {
        let want: Vec<RawId> = all
            .iter()
            .copied()
            .filter(|i| i.starts_with(prefix))
            .collect();
        assert_eq!(
            b.ids_with_prefix(prefix).unwrap(),
            want,
            "prefix {prefix:?}"
        );
    }
    assert!(b.ids_with_prefix(&[0u8; 33]).unwrap().is_empty());

    // for_each_id: everything in order, and an early stop.
    let mut seen = Vec::new();
    b.for_each_id(&mut |i| {
        seen.push(i);
        true
    })
    .unwrap();
    assert_eq!(seen, all);
    let mut seen = Vec::new();
    b.for_each_id(&mut |i| {
        seen.push(i);
        seen.len() < 2
    })
    .unwrap();
    assert_eq!(seen, all[..2].to_vec());

    // delete.
    assert!(b.delete(&ab2).unwrap());
    assert!(!b.delete(&ab2).unwrap());
    assert_eq!(b.get(&ab2).unwrap(), None);
    assert!(!b.contains(&ab2).unwrap());
    assert_eq!(b.ids_with_prefix(b"ab").unwrap(), vec![ab3, id(b"abc", 4)]);
    assert_eq!(b.put(&ab2, b"back").unwrap(), PutOutcome::Written);
}

fn refs_contract(b: &dyn Backend) {
    let main = "refs/heads/main";
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Expecting a value on an absent ref fails, reporting absence.
    assert_eq!(b.cas_ref(main, Some(b"x"), Some(b"y")).unwrap(), Err(None));
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Create with expected None.
    assert_eq!(b.cas_ref(main, None, Some(b"c1")).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c1"[..]));
    // Creating again, or a wrong expectation, fails with the current value, changing nothing.
    assert_eq!(
        b.cas_ref(main, None, Some(b"c2")).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(
        b.cas_ref(main, Some(b"c0"), Some(b"c2")).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(
        b.cas_ref(main, Some(b"c0"), None).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c1"[..]));
    // Update, then delete with new = None.
    assert_eq!(b.cas_ref(main, Some(b"c1"), Some(b"c2")).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c2"[..]));
    assert_eq!(b.cas_ref(main, Some(b"c2"), None).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Deleting an absent ref with expected None is a successful no-op.
    assert_eq!(b.cas_ref(main, None, None).unwrap(), Ok(()));

    // list_refs: prefix filter and sorting by name.
    let names = [
        "refs/heads/main",
        "HEAD",
        "refs/heads/dev",
        "refs/heads/a/b",
        "refs/heads/é",
        "refs/heads/Z",
        "refs/tags/v1",
        "refs/heads",
        "refs/headsx",
    ];
    for (i, n) in names.iter().enumerate() {
        assert_eq!(b.cas_ref(n, None, Some(&[i as u8])).unwrap(), Ok(()));
    }
    let expect = |prefix: &str| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, n)| (n.to_string(), vec![i as u8]))
            .collect();
        v.sort();
        v
    };
    for prefix in [
        "",
        "refs/",
        "refs/heads/",
        "refs/heads",
        "refs/tags/",
        "H",
        "nope",
    ] {
        assert_eq!(b.list_refs(prefix).unwrap(), expect(prefix), "{prefix:?}");
    }
    assert_eq!(b.list_refs("refs/heads/").unwrap().len(), 5);
    // Clean up so the concurrency part starts from a known state.
    for (i, n) in names.iter().enumerate() {
        assert_eq!(b.cas_ref(n, Some(&[i as u8]), None).unwrap(), Ok(()));
    }
    assert!(b.list_refs("").unwrap().is_empty());
}

/// Compare-and-swap is atomic: concurrent increments through CAS loops never lose one.
fn concurrent_cas_contract(b: &dyn Backend) {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 50;
    let name = "counter";
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    let mut current = b.get_ref(name).unwrap();
                    loop {
                        let n = current
                            .as_deref()
                            .map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()));
                        match b
                            .cas_ref(name, current.as_deref(), Some(&(n + 1).to_be_bytes()))
                            .unwrap()
                        {
                            Ok(()) => break,
                            Err(now) => current = now,
                        }
                    }
                }
            });
        }
    });
    let v = b.get_ref(name).unwrap().unwrap();
    assert_eq!(u64::from_be_bytes(v.try_into().unwrap()), THREADS * ROUNDS);
    assert_eq!(
        b.cas_ref(name, Some(&(THREADS * ROUNDS).to_be_bytes()), None)
            .unwrap(),
        Ok(())
    );
}

#[test]
fn contract_memory_backend() {
    contract(&MemoryBackend::new());
}

#[test]
fn contract_memory_store() {
    let s = Store::memory();
    assert_eq!(s.kind(), BackendKind::Memory);
    contract(&s);
}

#[test]
fn contract_sled_store() {
    let (_dir, s) = new_sled_store();
    assert_eq!(s.kind(), BackendKind::Sled);
    contract(&s);
    assert!(s.size_on_disk().unwrap() > 0);
}

#[test]
fn contract_sled_backend_via_accessor() {
    let (_dir, s) = new_sled_store();
    contract(s.backend());
}

#[test]
fn store_hands_out_as_trait_objects() {
    let (_dir, s) = new_sled_store();
    let objects: Arc<dyn ObjectStore> = Arc::new(s.clone());
    let refs: Arc<dyn RefStore> = Arc::new(s.clone());
    let shared = Arc::new(s);
    let backend: Arc<dyn Backend> = shared.clone();
    objects.put(&[1; 32], b"x").unwrap();
    refs.cas_ref("HEAD", None, Some(b"h")).unwrap().unwrap();
    assert_eq!(backend.get(&[1; 32]).unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(shared.get_ref("HEAD").unwrap().as_deref(), Some(&b"h"[..]));
}

#[test]
fn overwrite_raw_injects_damage_that_put_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let i = [3; 32];
    for s in [Store::memory(), Store::create(&path, &opts(0)).unwrap()] {
        assert_eq!(s.put(&i, b"good").unwrap(), PutOutcome::Written);
        s.overwrite_raw(&i, b"bad").unwrap();
        assert_eq!(s.get(&i).unwrap().as_deref(), Some(&b"bad"[..]));
        assert_eq!(s.put(&i, b"good").unwrap(), PutOutcome::Repaired);
        assert_eq!(s.get(&i).unwrap().as_deref(), Some(&b"good"[..]));
    }
}

// ---------------------------------------------------------------------------------------
// Model test: the sled store behaves exactly like the memory backend.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Put(u8, Vec<u8>),
    PutMany(Vec<(u8, Vec<u8>)>),
    Delete(u8),
    Cas(u8, Option<u8>, Option<u8>),
    Prefix(Vec<u8>),
}

fn small_id(i: u8) -> RawId {
    // Few distinct ids sharing prefixes, so dedup, repair and prefix scans all happen.
    id(&[i % 4, i % 3], i)
}

fn op() -> impl Strategy<Value = Op> {
    let bytes = prop::collection::vec(0u8..3, 0..3);
    prop_oneof![
        (0u8..12, bytes.clone()).prop_map(|(i, b)| Op::Put(i, b)),
        prop::collection::vec((0u8..12, bytes), 0..5).prop_map(Op::PutMany),
        (0u8..12).prop_map(Op::Delete),
        (0u8..3, prop::option::of(0u8..3), prop::option::of(0u8..3))
            .prop_map(|(n, e, v)| Op::Cas(n, e, v)),
        prop::collection::vec(0u8..4, 0..3).prop_map(Op::Prefix),
    ]
}

fn apply(b: &dyn Backend, op: &Op) -> String {
    match op {
        Op::Put(i, v) => format!("{:?}", b.put(&small_id(*i), v).unwrap()),
        Op::PutMany(items) => {
            let items: Vec<(RawId, Vec<u8>)> = items
                .iter()
                .map(|(i, v)| (small_id(*i), v.clone()))
                .collect();
            format!("{:?}", b.put_many(&items).unwrap())
        }
        Op::Delete(i) => format!("{:?}", b.delete(&small_id(*i)).unwrap()),
        Op::Cas(n, e, v) => {
            let e = e.map(|x| vec![x]);
            let v = v.map(|x| vec![x]);
            format!(
                "{:?}",
                b.cas_ref(&format!("r{n}"), e.as_deref(), v.as_deref())
                    .unwrap()
            )
        }
        Op::Prefix(p) => format!("{:?}", b.ids_with_prefix(p).unwrap()),
    }
}

/// Every object (id, bytes) and every ref (name, value), in order.
type Dump = (Vec<(RawId, Option<Vec<u8>>)>, Vec<(String, Vec<u8>)>);

fn dump(b: &dyn Backend) -> Dump {
    let mut ids = Vec::new();
    b.for_each_id(&mut |i| {
        ids.push(i);
        true
    })
    .unwrap();
    let objects = ids.into_iter().map(|i| (i, b.get(&i).unwrap())).collect();
    (objects, b.list_refs("").unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sled_matches_memory(ops in prop::collection::vec(op(), 0..40)) {
        let model = MemoryBackend::new();
        let (_dir, sled) = new_sled_store();
        for op in &ops {
            prop_assert_eq!(apply(&model, op), apply(&sled, op), "op {:?}", op);
        }
        prop_assert_eq!(dump(&model), dump(&sled));
    }
}

// ---------------------------------------------------------------------------------------
// The store directory.
// ---------------------------------------------------------------------------------------

#[test]
fn create_lays_out_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/new/store");
    let s = Store::create(&path, &OpenOptions::default()).unwrap();
    assert_eq!(s.path(), Some(path.as_path()));
    assert_eq!(s.kind(), BackendKind::Sled);
    assert_eq!(
        fs::read_to_string(path.join(FORMAT_FILE)).unwrap(),
        format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
    );
    assert_eq!(fs::read(path.join(LOCK_FILE)).unwrap(), b"");
    assert!(path.join("db").is_dir());
    assert!(path.join("packs").is_dir());
    let mut names: Vec<String> = fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["FORMAT", "LOCK", "db", "packs"]);

    // An existing empty directory is fine too.
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    Store::create(&empty, &OpenOptions::default()).unwrap();
}

#[test]
fn sled_reopen_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let objects: BTreeMap<RawId, Vec<u8>> = (0..300u32)
        .map(|n| {
            let mut i = [0u8; 32];
            i[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
            (i, n.to_le_bytes().repeat((n % 17) as usize))
        })
        .collect();
    let refs: Vec<(String, Vec<u8>)> = vec![
        ("HEAD".into(), b"refs/heads/main".to_vec()),
        ("refs/heads/dev".into(), vec![2; 32]),
        ("refs/heads/main".into(), vec![1; 32]),
    ];
    {
        let s = Store::create(&path, &OpenOptions::default()).unwrap();
        let batch: Vec<(RawId, Vec<u8>)> = objects
            .iter()
            .take(100)
            .map(|(i, b)| (*i, b.clone()))
            .collect();
        s.put_many(&batch).unwrap();
        for (i, b) in objects.iter().skip(100) {
            assert_eq!(s.put(i, b).unwrap(), PutOutcome::Written);
        }
        for (n, v) in &refs {
            s.cas_ref(n, None, Some(v)).unwrap().unwrap();
        }
        s.flush().unwrap();
    }
    let s = Store::open(&path, &opts(0)).unwrap();
    assert_eq!(s.kind(), BackendKind::Sled);
    assert_eq!(s.path(), Some(path.as_path()));
    let (stored, stored_refs) = dump(&s);
    let want: Vec<(RawId, Option<Vec<u8>>)> =
        objects.iter().map(|(i, b)| (*i, Some(b.clone()))).collect();
    assert_eq!(stored, want);
    assert_eq!(stored_refs, refs);
    for (i, b) in &objects {
        assert_eq!(s.put(i, b).unwrap(), PutOutcome::Existing);
    }
}

#[test]
fn create_refuses_non_empty_directory_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes");
    fs::create_dir_all(path.join("sub")).unwrap();
    fs::write(path.join("todo.txt"), b"keep me").unwrap();
    fs::write(path.join("sub/deep.txt"), b"me too").unwrap();
    let err = Store::create(&path, &OpenOptions::default()).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotEmpty { path: p } if p == &path),
        "{err:?}"
    );
    let mut names: Vec<String> = fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["sub", "todo.txt"]);
    assert_eq!(fs::read(path.join("todo.txt")).unwrap(), b"keep me");
    assert_eq!(fs::read(path.join("sub/deep.txt")).unwrap(), b"me too");

    // A lone LOCK file (someone else's half-made store) is not ours to take over either.
    let half = dir.path().join("half");
    fs::create_dir(&half).unwrap();
    fs::write(half.join(LOCK_FILE), b"").unwrap();
    assert!(matches!(
        Store::create(&half, &OpenOptions::default()),
        Err(StoreError::NotEmpty { .. })
    ));

    // A plain file is not a place for a store.
    let file = dir.path().join("file");
    fs::write(&file, b"x").unwrap();
    assert!(matches!(
        Store::create(&file, &OpenOptions::default()),
        Err(StoreError::Io { .. })
    ));
    assert_eq!(fs::read(&file).unwrap(), b"x");
}

#[test]
fn create_on_existing_store_is_already_exists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let s = Store::create(&path, &OpenOptions::default()).unwrap();
    s.cas_ref("HEAD", None, Some(b"h")).unwrap().unwrap();
    s.flush().unwrap();
    // While open, and after closing.
    assert!(matches!(
        Store::create(&path, &OpenOptions::default()),
        Err(StoreError::AlreadyExists { .. })
    ));
    drop(s);
    let err = Store::create(&path, &OpenOptions::default()).unwrap_err();
    assert!(
        matches!(&err, StoreError::AlreadyExists { path: p } if p == &path),
        "{err:?}"
    );
    let s = Store::open(&path, &opts(0)).unwrap();
    assert_eq!(s.get_ref("HEAD").unwrap().as_deref(), Some(&b"h"[..]));
}

fn not_a_store_reason(path: &Path) -> String {
    match Store::open(path, &opts(0)) {
        Err(StoreError::NotAStore { path: p, reason }) => {
            assert_eq!(p, path);
            reason
        }
        other => panic!("expected NotAStore for {path:?}, got {other:?}"),
    }
}

#[test]
fn open_refuses_what_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();

    let missing = dir.path().join("missing");
    assert!(not_a_store_reason(&missing).contains("does not exist"));
    assert!(!missing.exists());

    let file = dir.path().join("file");
    fs::write(&file, b"x").unwrap();
    assert!(not_a_store_reason(&file).contains("not a directory"));

    let plain = dir.path().join("plain");
    fs::create_dir(&plain).unwrap();
    fs::write(plain.join("a.txt"), b"a").unwrap();
    assert!(not_a_store_reason(&plain).contains("no FORMAT file"));
    // Opening did not leave a LOCK (or anything else) behind.
    assert_eq!(fs::read_dir(&plain).unwrap().count(), 1);

    let with_format = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        fs::create_dir(&p).unwrap();
        fs::create_dir(p.join("db")).unwrap();
        fs::write(p.join(FORMAT_FILE), text).unwrap();
        p
    };
    let garbage = with_format("garbage", b"\x00\xffnot a format file");
    assert!(not_a_store_reason(&garbage).contains("garbled"));
    let wrong_magic = with_format("magic", b"memoir-stor\nformat-version: 1\nbackend: sled\n");
    assert!(not_a_store_reason(&wrong_magic).contains("garbled"));
    let unknown = with_format(
        "unknown",
        b"memoir-store\nformat-version: 1\nbackend: rocksdb\n",
    );
    assert!(not_a_store_reason(&unknown).contains("unknown backend"));
    let huge = with_format("huge", &vec![b'x'; 100_000]);
    assert!(not_a_store_reason(&huge).contains("garbled"));

    let v3 = with_format("v3", b"memoir-store\nformat-version: 3\nbackend: sled\n");
    match Store::open(&v3, &opts(0)) {
        Err(StoreError::UnsupportedVersion {
            path,
            found,
            supported,
        }) => {
            assert_eq!((path, found, supported), (v3.clone(), 3, FORMAT_VERSION));
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }

    // A FORMAT directory is unreadable as a file.
    let format_dir = dir.path().join("format_dir");
    fs::create_dir_all(format_dir.join(FORMAT_FILE)).unwrap();
    assert!(not_a_store_reason(&format_dir).contains("FORMAT"));

    // Valid FORMAT, but the database directory is gone: refuse rather than open empty.
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);
    fs::remove_dir_all(path.join("db")).unwrap();
    assert!(not_a_store_reason(&path).contains("db/"));

    // Likewise without the packs.
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);
    fs::remove_dir_all(path.join("packs")).unwrap();
    assert!(not_a_store_reason(&path).contains("packs/"));
}

#[test]
fn forward_compatible_format_lines_are_ignored() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);
    fs::write(
        path.join(FORMAT_FILE),
        format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\ncreated-by: memoir 0.9\n"),
    )
    .unwrap();
    Store::open(&path, &opts(0)).unwrap();
}

// ---------------------------------------------------------------------------------------
// The lock.
// ---------------------------------------------------------------------------------------

#[test]
fn second_open_in_process_is_busy_until_last_clone_drops() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();

    // The store returned by `create` holds the lock.
    match Store::open(&path, &opts(0)) {
        Err(StoreError::Busy { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected Busy, got {other:?}"),
    }
    let start = Instant::now();
    match Store::open(&path, &opts(100)) {
        Err(StoreError::Busy { waited_ms, .. }) => assert!(waited_ms >= 100, "{waited_ms}"),
        other => panic!("expected Busy, got {other:?}"),
    }
    assert!(start.elapsed() >= Duration::from_millis(100));

    // A clone keeps the lock; the last drop releases it.
    let clone = s.clone();
    drop(s);
    assert!(matches!(
        Store::open(&path, &opts(0)),
        Err(StoreError::Busy { .. })
    ));
    drop(clone);
    let reopened = Store::open(&path, &opts(0)).unwrap();
    assert!(matches!(
        Store::open(&path, &opts(0)),
        Err(StoreError::Busy { .. })
    ));
    drop(reopened);
}

#[test]
fn waiting_opener_gets_the_lock_when_released() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let waiter = std::thread::spawn(move || Store::open(&path, &opts(5_000)).map(|_| ()));
    std::thread::sleep(Duration::from_millis(100));
    drop(s);
    waiter.join().unwrap().unwrap();
}

/// Not a test by itself: the lock holder that `busy_across_processes` starts in a child
/// process. Without the environment variable it does nothing.
#[test]
#[ignore = "helper process for busy_across_processes"]
fn lock_holder_child() {
    let Some(path) = std::env::var_os(HOLD_ENV) else {
        return;
    };
    let store = Store::open(Path::new(&path), &opts(5_000)).unwrap();
    store.put(&[7; 32], b"from the child").unwrap();
    store.flush().unwrap();
    // Hold until stdin closes or 3 s pass.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        let _ = tx.send(());
    });
    println!("\nlocked");
    let _ = rx.recv_timeout(Duration::from_secs(3));
    drop(store);
}

#[test]
fn busy_across_processes() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "lock_holder_child", "--ignored", "--nocapture"])
        .env(HOLD_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.trim() == "locked" => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lock holder never reported `locked`: {e}");
            }
        }
    }

    let start = Instant::now();
    let result = Store::open(&path, &opts(200));
    let took = start.elapsed();
    let busy = matches!(&result, Err(StoreError::Busy { path: p, waited_ms }) if p == &path && *waited_ms >= 200);
    drop(result);
    if !busy || took < Duration::from_millis(200) || took >= Duration::from_secs(2) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("expected Busy after 200..2000 ms, busy={busy}, took {took:?}");
    }

    // A killed holder never blocks anyone: the OS drops its lock with the process.
    child.kill().unwrap();
    child.wait().unwrap();
    let s = Store::open(&path, &opts(2_000)).unwrap();
    // What the holder flushed before dying is there.
    assert_eq!(
        s.get(&[7; 32]).unwrap().as_deref(),
        Some(&b"from the child"[..])
    );
}

// ---------------------------------------------------------------------------------------
// The resting head: what HEAD resolved to, published when the store closes.
// ---------------------------------------------------------------------------------------

/// A resting head whose ids are all `n` (on branch `main`).
fn rest(n: u8) -> RestingHead {
    RestingHead {
        branch: Some("main".into()),
        commit: [n; 32],
        root: [n.wrapping_add(100); 32],
    }
}

#[test]
fn resting_head_is_published_only_for_flushed_unchanged_refs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let head_file = path.join("cache").join("head");
    let store = Store::create(&path, &opts(1000)).unwrap();
    // HEAD as opened (nothing changed, nothing to flush) is published.
    store.note_head(store.refs_version(), rest(0));
    drop(store);
    assert_eq!(Store::resting_head(&path), Some(rest(0)));

    // A ref change removes the file before it happens; descriptions of older refs are ignored;
    // an unflushed change is not published.
    let store = Store::open(&path, &opts(1000)).unwrap();
    assert_eq!(store.refs_version(), 0);
    store
        .cas_ref("refs/heads/a", None, Some(b"1"))
        .unwrap()
        .unwrap();
    assert!(!head_file.exists());
    assert_eq!(store.refs_version(), 1);
    store.note_head(0, rest(1));
    drop(store);
    assert_eq!(Store::resting_head(&path), None);
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"1"), Some(b"2"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), rest(2));
    drop(store);
    assert_eq!(Store::resting_head(&path), None);

    // Changed, noted, flushed: published.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"2"), Some(b"3"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), rest(3));
    store.flush().unwrap();
    drop(store);
    assert_eq!(Store::resting_head(&path), Some(rest(3)));

    // A description followed by another change describes refs that are gone: not published.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"3"), Some(b"4"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), rest(4));
    store
        .cas_ref("refs/heads/b", None, Some(b"1"))
        .unwrap()
        .unwrap();
    store.flush().unwrap();
    drop(store);
    assert_eq!(Store::resting_head(&path), None);

    // The file describes the engine's log as it was at that close: any later write to the
    // log (every open writes to it) voids it, and so does damage to the file itself.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store.note_head(store.refs_version(), rest(5));
    drop(store);
    assert_eq!(Store::resting_head(&path), Some(rest(5)));
    let log = fs::OpenOptions::new()
        .write(true)
        .open(path.join("db").join("db"))
        .unwrap();
    let was = log.metadata().unwrap().modified().unwrap();
    log.set_modified(was + Duration::from_secs(1)).unwrap();
    assert_eq!(Store::resting_head(&path), None);
    log.set_modified(was).unwrap();
    drop(log);
    // (Restoring the time does not restore the change time: still void.)
    assert_eq!(Store::resting_head(&path), None);
    let store = Store::open(&path, &opts(1000)).unwrap();
    store.note_head(store.refs_version(), rest(6));
    drop(store);
    let good = fs::read(&head_file).unwrap();
    assert_eq!(Store::resting_head(&path), Some(rest(6)));
    for i in [0, 9, good.len() - 20, good.len() - 1] {
        let mut bad = good.clone();
        bad[i] ^= 0x40;
        fs::write(&head_file, &bad).unwrap();
        assert_eq!(Store::resting_head(&path), None, "byte {i} flipped");
    }
    fs::write(&head_file, &good[..good.len() - 1]).unwrap();
    assert_eq!(Store::resting_head(&path), None, "truncated");
    fs::write(&head_file, &good).unwrap();
    assert_eq!(Store::resting_head(&path), Some(rest(6)));
}

// ---------------------------------------------------------------------------------------
// Pack files.
// ---------------------------------------------------------------------------------------

/// Every regular file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn pack_files(store: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(store.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn reclaim_erases_deleted_objects_and_extra_copies_from_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let small_packs = OpenOptions {
        pack_bytes: 4096,
        ..OpenOptions::default()
    };
    let s = Store::create(&path, &small_packs).unwrap();
    let secret = b"the launch code is 0000-SECRET-0000".to_vec();
    let body = |i: u8| vec![i; 700];
    for i in 0..40u8 {
        s.put(&id(b"k", i), &body(i)).unwrap();
        if i == 17 || i == 33 {
            // Written twice: the second write leaves an extra copy in a later pack.
            s.put(&id(b"secret", 0), &secret).unwrap();
        }
    }
    s.flush().unwrap();
    let before = pack_files(&path);
    assert!(before.len() >= 5, "small packs roll over: {before:?}");
    let copies = |p: &Path| {
        files_under(p)
            .iter()
            .filter(|f| holds(&fs::read(f).unwrap(), &secret))
            .count()
    };
    assert_eq!(copies(&path), 2);

    // Deleting drops the index entry; the bytes stay until space is reclaimed, which may
    // happen in a later process (here: after a close that skipped it).
    assert!(s.delete(&id(b"secret", 0)).unwrap());
    assert!(!s.delete(&id(b"secret", 0)).unwrap());
    s.flush().unwrap();
    drop(s);
    let s = Store::open(&path, &small_packs).unwrap();
    assert_eq!(s.get(&id(b"secret", 0)).unwrap(), None);
    assert_eq!(copies(&path), 2);
    s.reclaim().unwrap();
    assert_eq!(
        copies(&path),
        0,
        "no file under the store holds the deleted bytes"
    );
    for i in 0..40u8 {
        assert_eq!(s.get(&id(b"k", i)).unwrap(), Some(body(i)), "object {i}");
    }
    // Emptied packs are removed; a second reclaim has nothing to do.
    for i in 0..35u8 {
        s.delete(&id(b"k", i)).unwrap();
    }
    s.flush().unwrap();
    s.reclaim().unwrap();
    let after = pack_files(&path);
    let total: u64 = files_under(&path.join("packs"))
        .iter()
        .map(|f| fs::metadata(f).unwrap().len())
        .sum();
    assert!(
        total <= 8 * after.len() as u64 + 5 * (36 + 700),
        "{total} bytes in {after:?}"
    );
    s.reclaim().unwrap();
    assert_eq!(pack_files(&path), after);
    drop(s);

    let s = Store::open(&path, &small_packs).unwrap();
    for i in 0..40u8 {
        let want = (i >= 35).then(|| body(i));
        assert_eq!(
            s.get(&id(b"k", i)).unwrap(),
            want,
            "object {i} after reopen"
        );
    }
    let mut ids = 0;
    s.for_each_id(&mut |_| {
        ids += 1;
        true
    })
    .unwrap();
    assert_eq!(ids, 5);
}

#[test]
fn a_torn_record_hides_nothing_from_reclaim() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let (old, new) = (id(b"old", 1), id(b"new", 2));
    s.put(&old, b"to be deleted").unwrap();
    s.flush().unwrap();
    drop(s);
    // A crash mid-append: a record head claiming 1,000 bytes, followed by only 3 of them.
    let pack = path.join("packs").join("pack-00000001");
    let mut torn = fs::read(&pack).unwrap();
    torn.extend_from_slice(&[9u8; 32]);
    torn.extend_from_slice(&1000u32.to_be_bytes());
    torn.extend_from_slice(b"abc");
    fs::write(&pack, &torn).unwrap();

    // Records written after the torn one are found through the index, not by parsing.
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    s.put(&new, b"written after the crash").unwrap();
    s.flush().unwrap();
    s.delete(&old).unwrap();
    s.flush().unwrap();
    s.reclaim().unwrap();
    assert_eq!(
        s.get(&new).unwrap().as_deref(),
        Some(&b"written after the crash"[..])
    );
    assert_eq!(s.get(&old).unwrap(), None);
    assert!(
        !pack.exists(),
        "the pack with the torn record was rewritten"
    );
    drop(s);
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(
        s.get(&new).unwrap().as_deref(),
        Some(&b"written after the crash"[..])
    );
}

#[test]
fn cut_or_missing_packs_read_as_damaged_objects_that_a_put_repairs() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let (a, b) = (id(b"a", 1), id(b"b", 2));
    s.put(&a, b"first object").unwrap();
    s.put(&b, b"second object, the last record").unwrap();
    s.flush().unwrap();
    drop(s);

    // Cut the last record short, as a crash before the pack's sync could.
    let pack = path.join("packs").join("pack-00000001");
    let len = fs::metadata(&pack).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&pack)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(s.get(&a).unwrap().as_deref(), Some(&b"first object"[..]));
    let damaged = s.get(&b).unwrap().unwrap();
    assert_ne!(damaged, b"second object, the last record");
    assert_eq!(
        s.put(&b, b"second object, the last record").unwrap(),
        PutOutcome::Repaired
    );
    assert_eq!(
        s.get(&b).unwrap().as_deref(),
        Some(&b"second object, the last record"[..])
    );
    s.flush().unwrap();
    drop(s);

    // A pack file that is gone entirely: every object in it reads as damaged, none as absent.
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    s.flush().unwrap();
    drop(s);
    fs::remove_file(&pack).unwrap();
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    assert!(s.contains(&a).unwrap());
    assert_eq!(s.get(&a).unwrap(), Some(Vec::new()));
    // (The new pack 1 may hold the new copy exactly where the old entry points.)
    assert_ne!(s.put(&a, b"first object").unwrap(), PutOutcome::Written);
    assert_eq!(s.get(&a).unwrap().as_deref(), Some(&b"first object"[..]));
}

#[test]
fn a_version_1_store_is_moved_into_packs_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old");
    fs::create_dir(&path).unwrap();
    // The version-1 layout: object bytes in sled's `objects` tree, refs in `refs`.
    let objects: Vec<(RawId, Vec<u8>)> = (0..300u16)
        .map(|i| (id(&i.to_be_bytes(), 9), vec![i as u8; 100 + i as usize]))
        .collect();
    {
        let db = sled::open(path.join("db")).unwrap();
        let t = db.open_tree("objects").unwrap();
        for (k, v) in &objects {
            t.insert(k, v.as_slice()).unwrap();
        }
        db.open_tree("refs")
            .unwrap()
            .insert("refs/heads/main", &[7u8; 32][..])
            .unwrap();
        db.flush().unwrap();
    }
    fs::write(
        path.join(FORMAT_FILE),
        "memoir-store\nformat-version: 1\nbackend: sled\n",
    )
    .unwrap();

    let s = Store::open(&path, &opts(0)).unwrap();
    for (k, v) in &objects {
        assert_eq!(s.get(k).unwrap().as_ref(), Some(v));
    }
    assert_eq!(s.get_ref("refs/heads/main").unwrap(), Some(vec![7u8; 32]));
    assert_eq!(
        fs::read_to_string(path.join(FORMAT_FILE)).unwrap(),
        format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
    );
    assert!(path.join("packs").join("pack-00000001").is_file());
    drop(s);
    let s = Store::open(&path, &opts(0)).unwrap();
    let mut n = 0;
    s.for_each_id(&mut |_| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, objects.len());
    assert_eq!(s.get(&objects[0].0).unwrap().as_ref(), Some(&objects[0].1));
    drop(s);
    // The old copy is gone from sled.
    let db = sled::open(path.join("db")).unwrap();
    assert!(!db.tree_names().iter().any(|n| n.as_ref() == b"objects"));
}
