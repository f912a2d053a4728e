//! Opening a store of an older format rebuilds its database in the current one, and an
//! upgrade cut short by a crash is finished or undone by the next open.

use std::fs;
use std::io::Write;
use std::path::Path;

use memoir::store::{ObjectStore, RawId, RefStore, Store, FORMAT_FILE, FORMAT_VERSION};

use super::{id, opts};
use crate::common::{open_sled_when_free, pack_records as records_of};

/// The objects of the stores below.
fn objects() -> Vec<(RawId, Vec<u8>)> {
    (0..700u16)
        .map(|i| (id(&i.to_be_bytes(), 5), vec![i as u8; 50 + i as usize]))
        .collect()
}

/// A store at `path` in the version-2 layout: one `index` entry per object (pack u32,
/// offset u64, length u32, big-endian), FORMAT saying 2. The index a current build wrote
/// stays beside it, stale: an older build has since indexed object 0 again, at a second
/// copy, and deleted object 1.
fn make_v2_store(path: &Path, objects: &[(RawId, Vec<u8>)]) {
    {
        let s = Store::create(path, &opts(10_000)).unwrap();
        s.put_many(&objects[..600]).unwrap();
        s.flush().unwrap();
        s.put_many(&objects[600..]).unwrap();
        s.cas_ref("refs/heads/main", None, Some(&[7u8; 32]))
            .unwrap()
            .unwrap();
        s.flush().unwrap();
    }
    let first = path.join("packs").join("pack-00000001");
    let mut records = records_of(&first);
    let (id0, _, len0) = records[0];
    let mut pack = fs::OpenOptions::new().append(true).open(&first).unwrap();
    let end = fs::metadata(&first).unwrap().len();
    pack.write_all(&id0).unwrap();
    pack.write_all(&len0.to_be_bytes()).unwrap();
    pack.write_all(&objects[0].1).unwrap();
    records.push((id0, end, len0));
    let db = open_sled_when_free(&path.join("db"));
    // A version-2 database has no `meta` tree: no record of how far the packs are durable.
    db.drop_tree("meta").unwrap();
    let index = db.open_tree("index").unwrap();
    for (rid, offset, len) in &records {
        let mut loc = Vec::with_capacity(16);
        loc.extend_from_slice(&1u32.to_be_bytes());
        loc.extend_from_slice(&offset.to_be_bytes());
        loc.extend_from_slice(&len.to_be_bytes());
        index.insert(rid, loc).unwrap();
    }
    index.remove(objects[1].0).unwrap();
    db.flush().unwrap();
    drop(db);
    fs::write(
        path.join(FORMAT_FILE),
        "memoir-store\nformat-version: 2\nbackend: sled\n",
    )
    .unwrap();
}

/// The store at `path` is in the current format and holds what [`make_v2_store`] left:
/// every object (object 1, which the older build deleted from its index but whose record is
/// still in the pack, comes back, unreachable, until a garbage collection), the ref, and a
/// new database holding only the refs.
fn assert_upgraded(path: &Path, objects: &[(RawId, Vec<u8>)]) {
    let s = Store::open(path, &opts(10_000)).unwrap();
    assert_eq!(
        fs::read_to_string(path.join(FORMAT_FILE)).unwrap(),
        format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
    );
    assert_eq!(FORMAT_VERSION, 4);
    for (k, v) in objects {
        assert_eq!(s.get(k).unwrap().map(Vec::from).as_ref(), Some(v));
    }
    assert_eq!(s.get_ref("refs/heads/main").unwrap(), Some(vec![7u8; 32]));
    let mut n = 0;
    s.for_each_id(&mut |_| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, objects.len());
    drop(s);
    for gone in ["db.new", "db.old"] {
        assert!(!path.join(gone).exists(), "{gone} is left");
    }
    // A new database: no object index in it.
    let db = open_sled_when_free(&path.join("db"));
    for tree in [&b"index"[..], b"recent", b"run-list"] {
        assert!(!db.tree_names().iter().any(|n| n.as_ref() == tree));
    }
    assert!(!path.join("db").join("runs").exists());
}

#[test]
fn a_version_2_store_gets_a_new_database_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old");
    let objects = objects();
    make_v2_store(&path, &objects);
    assert_upgraded(&path, &objects);
}

/// A crash after the old database was set aside and before FORMAT said the new version:
/// whatever `db/` holds, the old database comes back and the upgrade runs again.
#[test]
fn an_upgrade_cut_short_is_undone_then_done() {
    let objects = objects();
    for moved_in in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old");
        make_v2_store(&path, &objects);
        fs::rename(path.join("db"), path.join("db.old")).unwrap();
        if moved_in {
            // The new database had taken its place: an empty one stands for it.
            fs::create_dir(path.join("db")).unwrap();
            fs::write(path.join("db").join("conf"), b"not this one").unwrap();
        }
        fs::create_dir(path.join("db.new")).unwrap();
        fs::write(path.join("db.new").join("db"), b"half built").unwrap();
        assert_upgraded(&path, &objects);
    }
}

/// A crash after FORMAT said the new version, before the old database was removed: it is
/// removed, and the new one is kept.
#[test]
fn an_old_database_left_after_an_upgrade_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old");
    let objects = objects();
    make_v2_store(&path, &objects);
    drop(Store::open(&path, &opts(10_000)).unwrap());
    fs::create_dir(path.join("db.old")).unwrap();
    fs::write(path.join("db.old").join("db"), b"the old one").unwrap();
    assert_upgraded(&path, &objects);
}
