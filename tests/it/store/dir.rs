//! The store directory.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use memoir::store::{
    ObjectStore, OpenOptions, PutOutcome, RawId, RefStore, Store, StoreError, FORMAT_FILE,
    FORMAT_VERSION, LOCK_FILE,
};

use super::contract::dump;
use super::{new_sled_store, opts, REOPEN_MS};

#[test]
fn create_lays_out_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/new/store");
    let s = Store::create(&path, &OpenOptions::default()).unwrap();
    assert_eq!(s.path(), Some(path.as_path()));
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
    let s = Store::open(&path, &opts(REOPEN_MS)).unwrap();
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

    // A lone LOCK file is what a create killed at its first step leaves: the next create
    // finishes the store (under that lock, so never while its first creator is still at it).
    let half = dir.path().join("half");
    fs::create_dir(&half).unwrap();
    fs::write(half.join(LOCK_FILE), b"").unwrap();
    let s = Store::create(&half, &OpenOptions::default()).unwrap();
    drop(s);
    assert!(half.join("FORMAT").is_file());

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
    let s = Store::open(&path, &opts(REOPEN_MS)).unwrap();
    assert_eq!(s.get_ref("HEAD").unwrap().as_deref(), Some(&b"h"[..]));
}

fn not_a_store_reason(path: &Path) -> String {
    match Store::open(path, &opts(REOPEN_MS)) {
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

    let v5 = with_format("v5", b"memoir-store\nformat-version: 5\nbackend: sled\n");
    match Store::open(&v5, &opts(REOPEN_MS)) {
        Err(StoreError::UnsupportedVersion {
            path,
            found,
            supported,
        }) => {
            assert_eq!((path, found, supported), (v5.clone(), 5, FORMAT_VERSION));
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }

    // A FORMAT directory is unreadable as a file.
    let format_dir = dir.path().join("format_dir");
    fs::create_dir_all(format_dir.join(FORMAT_FILE)).unwrap();
    assert!(not_a_store_reason(&format_dir).contains("FORMAT"));

    // Valid FORMAT, but the database directory is gone: refuse rather than open empty, as a
    // damaged store that `fsck --repair` can rebuild.
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);
    fs::remove_dir_all(path.join("db")).unwrap();
    match Store::open(&path, &opts(REOPEN_MS)) {
        Err(e @ StoreError::EngineDamaged { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("db/") && text.contains("fsck --repair"),
                "{text}"
            );
        }
        other => panic!("expected EngineDamaged, got {other:?}"),
    }

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
    Store::open(&path, &opts(REOPEN_MS)).unwrap();
}

/// A process killed while sled rewrote its snapshot on open leaves an unfinished
/// `snap.*.generating` file, which sled would take for the newest snapshot and refuse as
/// corrupt. The next open removes it and reads everything back.
#[test]
fn an_unfinished_sled_snapshot_is_removed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let objects: Vec<(RawId, Vec<u8>)> = (0..200u32)
        .map(|n| {
            let mut i = [0u8; 32];
            i[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
            (i, n.to_le_bytes().repeat(3))
        })
        .collect();
    for half in objects.chunks(100) {
        let s = match Store::open(&path, &opts(REOPEN_MS)) {
            Ok(s) => s,
            Err(_) => Store::create(&path, &OpenOptions::default()).unwrap(),
        };
        s.put_many(half).unwrap();
        let old = s.get_ref("refs/heads/main").unwrap();
        s.cas_ref("refs/heads/main", old.as_deref(), Some(&half[0].0))
            .unwrap()
            .unwrap();
        s.flush().unwrap();
    }
    let db = path.join("db");
    let snapshot = fs::read_dir(&db)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("snap.")
        })
        .expect("sled wrote a snapshot");
    let bytes = fs::read(&snapshot).unwrap();
    let unfinished = snapshot.with_file_name(format!(
        "{}.generating",
        snapshot.file_name().unwrap().to_string_lossy()
    ));
    fs::write(&unfinished, &bytes[..bytes.len() / 2]).unwrap();

    let s = Store::open(&path, &opts(REOPEN_MS)).expect("opens despite the unfinished snapshot");
    assert!(!unfinished.exists(), "the unfinished snapshot is removed");
    let (stored, refs) = dump(&s);
    let want: Vec<(RawId, Option<Vec<u8>>)> = objects
        .iter()
        .map(|(i, b)| (*i, Some(b.clone())))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect();
    assert_eq!(stored, want);
    assert_eq!(
        refs,
        vec![("refs/heads/main".to_string(), objects[100].0.to_vec())]
    );
}
