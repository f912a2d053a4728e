//! The cached head: what HEAD resolved to, published when the store closes.

use std::fs;
use std::time::Duration;

use memoir::store::{CachedHead, ObjectStore, RefStore, Store};

use super::opts;

/// A cached head whose ids are all `n` (on branch `main`).
fn head(n: u8) -> CachedHead {
    CachedHead {
        branch: Some("main".into()),
        commit: [n; 32],
        root: [n.wrapping_add(100); 32],
    }
}

#[test]
fn cached_head_is_published_only_for_flushed_unchanged_refs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let head_file = path.join("cache").join("head");
    let store = Store::create(&path, &opts(1000)).unwrap();
    // HEAD as opened (nothing changed, nothing to flush) is published.
    store.note_head(store.refs_version(), head(0));
    drop(store);
    assert_eq!(Store::cached_head(&path), Some(head(0)));

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
    store.note_head(0, head(1));
    drop(store);
    assert_eq!(Store::cached_head(&path), None);
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"1"), Some(b"2"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), head(2));
    drop(store);
    assert_eq!(Store::cached_head(&path), None);

    // Changed, noted, flushed: published.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"2"), Some(b"3"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), head(3));
    store.flush().unwrap();
    drop(store);
    assert_eq!(Store::cached_head(&path), Some(head(3)));

    // A description followed by another change describes refs that are gone: not published.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store
        .cas_ref("refs/heads/a", Some(b"3"), Some(b"4"))
        .unwrap()
        .unwrap();
    store.note_head(store.refs_version(), head(4));
    store
        .cas_ref("refs/heads/b", None, Some(b"1"))
        .unwrap()
        .unwrap();
    store.flush().unwrap();
    drop(store);
    assert_eq!(Store::cached_head(&path), None);

    // The file describes the engine's log as it was at that close: any later write to the
    // log (every open writes to it) voids it, and so does damage to the file itself.
    let store = Store::open(&path, &opts(1000)).unwrap();
    store.note_head(store.refs_version(), head(5));
    drop(store);
    assert_eq!(Store::cached_head(&path), Some(head(5)));
    let log = fs::OpenOptions::new()
        .write(true)
        .open(path.join("db").join("db"))
        .unwrap();
    let was = log.metadata().unwrap().modified().unwrap();
    log.set_modified(was + Duration::from_secs(1)).unwrap();
    assert_eq!(Store::cached_head(&path), None);
    log.set_modified(was).unwrap();
    drop(log);
    // (Restoring the time does not restore the change time: still void.)
    assert_eq!(Store::cached_head(&path), None);
    let store = Store::open(&path, &opts(1000)).unwrap();
    store.note_head(store.refs_version(), head(6));
    drop(store);
    let good = fs::read(&head_file).unwrap();
    assert_eq!(Store::cached_head(&path), Some(head(6)));
    for i in [0, 9, good.len() - 20, good.len() - 1] {
        let mut bad = good.clone();
        bad[i] ^= 0x40;
        fs::write(&head_file, &bad).unwrap();
        assert_eq!(Store::cached_head(&path), None, "byte {i} flipped");
    }
    fs::write(&head_file, &good[..good.len() - 1]).unwrap();
    assert_eq!(Store::cached_head(&path), None, "truncated");
    fs::write(&head_file, &good).unwrap();
    assert_eq!(Store::cached_head(&path), Some(head(6)));
}
