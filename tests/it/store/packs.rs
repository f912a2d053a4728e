//! Pack files.

use std::fs;
use std::path::{Path, PathBuf};

use memoir::store::{
    Backend, Damage, ObjectStore, OpenOptions, PutOutcome, RawId, Reclaim, RefStore, Store,
    StoreError, FORMAT_FILE, FORMAT_VERSION, GC_DEAD_SHARE_PERCENT,
};

/// What garbage collection asks of a reclaim.
const GC: Reclaim = Reclaim::DeadShare(GC_DEAD_SHARE_PERCENT);

use super::{id, new_sled_store, opts};
use crate::common::open_sled_when_free;

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

/// The names of the pack files of `store` (not their index files).
fn pack_files(store: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(store.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.contains('.'))
        .collect();
    names.sort();
    names
}

/// A new store at `dir/s` whose packs are `pack_bytes` long, with the options it was made
/// with (to open it again).
fn small_pack_store(dir: &Path, pack_bytes: u64) -> (PathBuf, OpenOptions, Store) {
    let path = dir.join("s");
    let opts = OpenOptions {
        pack_bytes,
        ..OpenOptions::default()
    };
    let s = Store::create(&path, &opts).unwrap();
    (path, opts, s)
}

#[test]
fn reclaim_erases_deleted_objects_and_extra_copies_from_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, small_packs, s) = small_pack_store(dir.path(), 4096);
    let secret = b"the launch code is 0000-SECRET-0000".to_vec();
    let body = |i: u8| vec![i; 700];
    for i in 0..40u8 {
        s.put(&id(b"k", i), &body(i)).unwrap();
        if i == 17 || i == 33 {
            // Written twice: the second write finds it stored and appends nothing.
            assert_ne!(
                s.put(&id(b"secret", 0), &secret).unwrap(),
                PutOutcome::Repaired
            );
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
    assert_eq!(copies(&path), 1);

    // Deleting drops the index entry; the bytes stay until space is reclaimed, which may
    // happen in a later process (here: after a close that skipped it).
    assert!(s.delete(&id(b"secret", 0)).unwrap());
    assert!(!s.delete(&id(b"secret", 0)).unwrap());
    s.flush().unwrap();
    drop(s);
    let s = Store::open(&path, &small_packs).unwrap();
    assert_eq!(s.get(&id(b"secret", 0)).unwrap(), None);
    assert_eq!(copies(&path), 1);
    s.reclaim(Reclaim::Everything).unwrap();
    assert_eq!(
        copies(&path),
        0,
        "no file under the store holds the deleted bytes"
    );
    for i in 0..40u8 {
        assert_eq!(
            s.get(&id(b"k", i)).unwrap().map(Vec::from),
            Some(body(i)),
            "object {i}"
        );
    }
    // Emptied packs are removed; a second reclaim has nothing to do.
    for i in 0..35u8 {
        s.delete(&id(b"k", i)).unwrap();
    }
    s.flush().unwrap();
    s.reclaim(Reclaim::Everything).unwrap();
    let after = pack_files(&path);
    let total: u64 = files_under(&path.join("packs"))
        .iter()
        .map(|f| fs::metadata(f).unwrap().len())
        .sum();
    assert!(
        total <= 8 * after.len() as u64 + 5 * (36 + 700),
        "{total} bytes in {after:?}"
    );
    s.reclaim(Reclaim::Everything).unwrap();
    assert_eq!(pack_files(&path), after);
    drop(s);

    let s = Store::open(&path, &small_packs).unwrap();
    for i in 0..40u8 {
        let want = (i >= 35).then(|| body(i));
        assert_eq!(
            s.get(&id(b"k", i)).unwrap().map(Vec::from),
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
    s.reclaim(GC).unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let (path, small_packs, s) = small_pack_store(dir.path(), 64);
    let (a, b) = (id(b"a", 1), id(b"b", 2));
    s.put(&a, b"first object").unwrap();
    s.put(&b, b"second object, the last record").unwrap();
    s.flush().unwrap();
    // The next write starts pack 2, so pack 1 is sealed and gets its index file.
    s.put(&id(b"c", 3), b"in the next pack").unwrap();
    s.flush().unwrap();
    drop(s);
    assert!(path.join("packs").join("pack-00000001.idx").is_file());

    // Cut the last indexed record short (damage: the index says it is whole).
    let pack = path.join("packs").join("pack-00000001");
    let len = fs::metadata(&pack).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&pack)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let s = Store::open(&path, &small_packs).unwrap();
    assert_eq!(s.get(&a).unwrap().as_deref(), Some(&b"first object"[..]));
    // Damaged, saying where and how; never absent.
    match s.get(&b) {
        Err(StoreError::Damaged { id, damage }) => {
            assert_eq!(id, b);
            assert!(
                matches!(&damage, Damage::CutShort { pack, .. } if pack == "packs/pack-00000001"),
                "{damage:?}"
            );
            assert!(damage.to_string().contains("cut short"), "{damage}");
        }
        other => panic!("a cut record reads as damaged: {other:?}"),
    }
    assert!(s.contains(&b).unwrap());
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
    let s = Store::open(&path, &small_packs).unwrap();
    s.flush().unwrap();
    drop(s);
    fs::remove_file(&pack).unwrap();
    let s = Store::open(&path, &small_packs).unwrap();
    assert!(s.contains(&a).unwrap());
    match s.get(&a) {
        Err(StoreError::Damaged {
            damage: Damage::PackMissing { pack } | Damage::CutShort { pack, .. },
            ..
        }) => assert_eq!(pack, "packs/pack-00000001"),
        other => panic!("an object in a missing pack reads as damaged: {other:?}"),
    }
    // (The new pack 1 may hold the new copy exactly where the old entry points.)
    assert_ne!(s.put(&a, b"first object").unwrap(), PutOutcome::Written);
    assert_eq!(s.get(&a).unwrap().as_deref(), Some(&b"first object"[..]));
}

/// A pack whose magic is damaged is a damaged file (fsck reports it) whose records still
/// read through the index; reclaiming space rewrites it. A record whose id bytes are damaged
/// reads as damage naming the pack, the offset and what is wrong.
#[test]
fn damaged_pack_headers_and_record_ids_are_named_and_headers_rewritten() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let (a, b) = (id(b"a", 1), id(b"b", 2));
    s.put(&a, b"first object").unwrap();
    s.put(&b, b"second object").unwrap();
    s.flush().unwrap();
    assert!(s.check_files().unwrap().is_empty());
    drop(s);
    let pack = path.join("packs").join("pack-00000001");
    let mut bytes = fs::read(&pack).unwrap();
    bytes[..8].copy_from_slice(b"GARBAGE!");
    fs::write(&pack, &bytes).unwrap();

    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    let damaged = s.check_files().unwrap();
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert_eq!(damaged[0].file, "packs/pack-00000001");
    assert!(damaged[0].problem.contains("MEMPACK1"), "{damaged:?}");
    assert_eq!(s.get(&a).unwrap().as_deref(), Some(&b"first object"[..]));
    s.reclaim(GC).unwrap();
    assert!(s.check_files().unwrap().is_empty());
    assert!(!pack.exists(), "the damaged pack was rewritten");
    assert_eq!(s.get(&b).unwrap().as_deref(), Some(&b"second object"[..]));
    // A tail past a megabyte gets the new pack its index file.
    s.put(&id(b"big", 3), &vec![7u8; 1 << 20]).unwrap();
    s.flush().unwrap();
    drop(s);

    // Damage the first record's id in the new pack, which its index file names.
    let newest = path.join("packs").join(pack_files(&path).pop().unwrap());
    let mut bytes = fs::read(&newest).unwrap();
    let first_id: RawId = bytes[8..40].try_into().unwrap();
    bytes[8] ^= 0xff;
    fs::write(&newest, &bytes).unwrap();
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    match s.get(&first_id) {
        Err(e @ StoreError::Damaged { .. }) => {
            let StoreError::Damaged { damage, .. } = &e else {
                unreachable!()
            };
            assert!(
                matches!(damage, Damage::OtherId { offset: 8, .. }),
                "{damage:?}"
            );
            let text = e.to_string();
            assert!(text.contains("byte 8 of packs/pack-"), "{text}");
            assert!(text.contains("names another object"), "{text}");
        }
        other => panic!("a record with a damaged id reads as damaged: {other:?}"),
    }
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

    // sled lets go of its lock a moment after the drop above.
    let s = Store::open(&path, &opts(10_000)).unwrap();
    for (k, v) in &objects {
        assert_eq!(s.get(k).unwrap().map(Vec::from).as_ref(), Some(v));
    }
    assert_eq!(s.get_ref("refs/heads/main").unwrap(), Some(vec![7u8; 32]));
    assert_eq!(
        fs::read_to_string(path.join(FORMAT_FILE)).unwrap(),
        format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
    );
    assert!(path.join("packs").join("pack-00000001").is_file());
    drop(s);
    let s = Store::open(&path, &opts(10_000)).unwrap();
    let mut n = 0;
    s.for_each_id(&mut |_| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, objects.len());
    assert_eq!(
        s.get(&objects[0].0).unwrap().map(Vec::from).as_ref(),
        Some(&objects[0].1)
    );
    drop(s);
    // The old copy is gone from sled.
    let db = open_sled_when_free(&path.join("db"));
    assert!(!db.tree_names().iter().any(|n| n.as_ref() == b"objects"));
}

/// The pack file holding `body`, by name.
fn pack_holding(store: &Path, body: &[u8]) -> String {
    let found: Vec<String> = pack_files(store)
        .into_iter()
        .filter(|p| holds(&fs::read(store.join("packs").join(p)).unwrap(), body))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// Garbage collection's rule: a pack is rewritten once a quarter of its record bytes are
/// dead; below that it stays as it is, its dead records in no pack index, and a reclaim of
/// everything (a purge) still erases them.
#[test]
fn gc_rewrites_only_packs_a_quarter_dead() {
    let dir = tempfile::tempdir().unwrap();
    let (path, small_packs, s) = small_pack_store(dir.path(), 8192);
    let body = |i: u8| vec![i; 700];
    for i in 0..36u8 {
        s.put(&id(b"k", i), &body(i)).unwrap();
    }
    s.flush().unwrap();
    let (first, second) = (
        pack_holding(&path, &body(0)),
        pack_holding(&path, &body(12)),
    );
    assert_ne!(first, second);
    // One record of twelve dead in the first pack (8%), five in the second (42%).
    let in_first: Vec<u8> = (0..36)
        .filter(|i| pack_holding(&path, &body(*i)) == first)
        .collect();
    let in_second: Vec<u8> = (0..36)
        .filter(|i| pack_holding(&path, &body(*i)) == second)
        .collect();
    assert!(
        in_first.len() >= 8 && in_second.len() >= 8,
        "{in_first:?} {in_second:?}"
    );
    let doomed: Vec<u8> = std::iter::once(in_first[3])
        .chain(in_second[..5].iter().copied())
        .collect();
    for i in &doomed {
        assert!(s.delete(&id(b"k", *i)).unwrap());
    }
    s.flush().unwrap();
    let first_bytes = fs::read(path.join("packs").join(&first)).unwrap();
    let rep = s.reclaim(GC).unwrap();
    assert_eq!(rep.packs_rewritten, 1, "{rep:?}");
    assert_eq!(rep.packs_kept_with_dead_bytes, 1, "{rep:?}");
    assert!(rep.bytes_rewritten >= 3 * 736, "{rep:?}");
    assert_eq!(
        fs::read(path.join("packs").join(&first)).unwrap(),
        first_bytes,
        "the pack below the share is left alone"
    );
    assert!(!path.join("packs").join(&second).exists());
    assert!(holds(&first_bytes, &body(in_first[3])));
    // Its index lists no dead record.
    let idx = fs::read(path.join("packs").join(format!("{first}.idx"))).unwrap();
    assert!(!holds(&idx, &id(b"k", in_first[3])));
    assert!(holds(&idx, &id(b"k", in_first[0])));
    let check = |s: &Store| {
        for i in 0..36u8 {
            let want = (!doomed.contains(&i)).then(|| body(i));
            assert_eq!(
                s.get(&id(b"k", i)).unwrap().map(Vec::from),
                want,
                "object {i}"
            );
        }
    };
    check(&s);
    // A second reclaim under the same rule changes nothing.
    let packs = pack_files(&path);
    assert_eq!(s.reclaim(GC).unwrap().packs_rewritten, 0);
    assert_eq!(pack_files(&path), packs);
    drop(s);
    let s = Store::open(&path, &small_packs).unwrap();
    check(&s);
    // Reclaiming everything erases the dead record left behind.
    let rep = s.reclaim(Reclaim::Everything).unwrap();
    assert_eq!(rep.packs_rewritten, 1, "{rep:?}");
    assert!(files_under(&path)
        .iter()
        .all(|f| !holds(&fs::read(f).unwrap(), &body(in_first[3]))));
    check(&s);
}

/// A record torn by a crash (bytes past what the last flush made durable) is cut off when
/// the store next opens, before anything is appended behind it: the next record takes its
/// place, so no pack holds a torn record with records after it.
#[test]
fn a_torn_tail_is_cut_when_the_store_opens() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let body = |i: u8| vec![i; 500];
    for i in 0..40u8 {
        s.put(&id(b"k", i), &body(i)).unwrap();
    }
    s.flush().unwrap();
    drop(s);
    let pack = path.join("packs").join("pack-00000001");
    let durable = fs::metadata(&pack).unwrap().len();
    let mut torn = fs::read(&pack).unwrap();
    torn.extend_from_slice(&[9u8; 32]);
    torn.extend_from_slice(&1000u32.to_be_bytes());
    torn.extend_from_slice(b"abc");
    fs::write(&pack, &torn).unwrap();
    let s = Store::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(
        fs::metadata(&pack).unwrap().len(),
        durable,
        "the tear is cut"
    );
    s.put(&id(b"after", 1), b"written after the crash").unwrap();
    s.flush().unwrap();
    let bytes = fs::read(&pack).unwrap();
    assert_eq!(
        &bytes[durable as usize..durable as usize + 32],
        &id(b"after", 1)
    );
    let rep = s.reclaim(GC).unwrap();
    assert_eq!(rep.packs_rewritten, 0, "{rep:?}");
    for i in 0..40u8 {
        assert_eq!(s.get(&id(b"k", i)).unwrap().map(Vec::from), Some(body(i)));
    }
    assert_eq!(
        s.get(&id(b"after", 1)).unwrap().as_deref(),
        Some(&b"written after the crash"[..])
    );
    // A stored object written again appends nothing, so no dead bytes appear.
    let len = fs::metadata(&pack).unwrap().len();
    s.put(&id(b"k", 0), &body(0)).unwrap();
    s.flush().unwrap();
    assert_eq!(fs::metadata(&pack).unwrap().len(), len);
    let packs = pack_files(&path);
    let rep = s.reclaim(GC).unwrap();
    assert_eq!(
        (rep.packs_rewritten, rep.packs_kept_with_dead_bytes),
        (0, 0)
    );
    assert_eq!(pack_files(&path), packs);
}
