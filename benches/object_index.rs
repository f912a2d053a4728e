//! The object index (one index file per pack, read in place, and the newest records of each
//! pack read as the store opens), measured on one store of N objects, as the LOCK holder
//! opens it (with the database of refs, checking each record of the tails) and as a closed
//! read does (the refs of the head cache).
//!
//! ```text
//! cargo bench --bench object_index -- DIR [N] [ROUNDS]
//! ```
//!
//! Builds `DIR/store` once: N objects of 150 to 300 bytes, ids their BLAKE3 hashes, written
//! 10,000 per flush as imports write them, and a ref, so the store's close writes its pack
//! indexes and head cache. Then, ROUNDS times (default 21), interleaved: opening the store
//! each way; 10,000 lookups of stored ids in random order; 10,000 lookups of absent ids
//! (every pack index must be asked); and, opened, one write of 10 objects made durable.
//! Prints medians.

mod common;
use common::{args, stats};

use std::path::Path;
use std::time::Instant;

use memoir::repo::{Repo, Signature};
use memoir::store::{ObjectStore, OpenOptions, RawId, Store};

/// A deterministic object of 150 to 300 bytes, and its id.
fn object(i: u64) -> (RawId, Vec<u8>) {
    let seed = blake3::hash(&i.to_le_bytes());
    let len = 150 + (seed.as_bytes()[0] as usize * 150 / 255);
    let mut bytes = Vec::with_capacity(len);
    let mut block = *seed.as_bytes();
    while bytes.len() < len {
        bytes.extend_from_slice(&block);
        block = *blake3::hash(&block).as_bytes();
    }
    bytes.truncate(len);
    (*blake3::hash(&bytes).as_bytes(), bytes)
}

fn build(store: &Path, n: u64) {
    let s = Store::create(store, &options()).expect("create");
    let mut batch = Vec::with_capacity(10_000);
    for i in 0..n {
        batch.push(object(i));
        if batch.len() == 10_000 || i + 1 == n {
            s.put_many(&batch).expect("put");
            s.flush().expect("flush");
            batch.clear();
        }
    }
    // A history, so the store's close publishes the head cache a closed read needs.
    Repo::init(s, &Signature::new("bench", 1_767_225_600), "bench").expect("init");
}

/// The options commands open a store with: records of the tails checked against their ids.
fn options() -> OpenOptions {
    OpenOptions {
        verify: Some(memoir::object::record_verifies),
        ..OpenOptions::default()
    }
}

/// Opens the store for writing, timing only the open; the handle is wrapped in a
/// repository so that its close publishes the head cache again for the closed reads.
fn open_timed(store: &Path, took: &mut Vec<f64>) -> (Store, Repo) {
    let t = Instant::now();
    let s = Store::open(store, &options()).expect("open");
    took.push(t.elapsed().as_secs_f64() * 1e3);
    let repo = Repo::open(s.clone()).expect("repo");
    (s, repo)
}

/// Milliseconds `f` takes.
fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// Microseconds per lookup of each id in `ids` through `s`; panics on a wrong answer.
fn lookups(s: &Store, ids: &[RawId], present: bool) -> f64 {
    ms(|| {
        for id in ids {
            let got = s.get(id).expect("get");
            assert_eq!(got.is_some(), present);
        }
    }) * 1e3
        / ids.len() as f64
}

fn main() {
    let a = args();
    let dir = Path::new(a.first().expect("DIR"));
    let n: u64 = a.get(1).map_or(1_000_000, |v| v.parse().expect("N"));
    let rounds: usize = a.get(2).map_or(21, |v| v.parse().expect("ROUNDS"));
    let store = dir.join("store");
    if !store.exists() {
        std::fs::create_dir_all(dir).expect("dir");
        let t = Instant::now();
        build(&store, n);
        eprintln!("built {n} objects in {:.1} s", t.elapsed().as_secs_f64());
    }
    let packs = std::fs::read_dir(store.join("packs"))
        .expect("packs")
        .count();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut open_db, mut open_files) = (Vec::new(), Vec::new());
    let (mut hit_db, mut hit_files) = (Vec::new(), Vec::new());
    let (mut miss_db, mut miss_files) = (Vec::new(), Vec::new());
    let mut write = Vec::new();
    for round in 0..rounds {
        let present: Vec<RawId> = (0..10_000).map(|_| object(next() % n).0).collect();
        let absent: Vec<RawId> = (0..10_000)
            .map(|_| *blake3::hash(&next().to_be_bytes()).as_bytes())
            .collect();
        drop(open_timed(&store, &mut open_db));
        open_files.push(ms(|| {
            drop(Store::read_closed(&store).expect("closed read"));
        }));
        let closed = Store::read_closed(&store).expect("closed read");
        hit_files.push(lookups(&closed, &present, true));
        miss_files.push(lookups(&closed, &absent, false));
        drop(closed);
        let (s, _repo) = open_timed(&store, &mut Vec::new());
        hit_db.push(lookups(&s, &present, true));
        miss_db.push(lookups(&s, &absent, false));
        if round > 0 {
            // A write changes the store; later rounds still look up the first N objects.
            let extra: Vec<_> = (0..10)
                .map(|j| object(u64::MAX - (round * 10 + j) as u64))
                .collect();
            write.push(ms(|| {
                s.put_many(&extra).expect("put");
                s.flush().expect("flush");
            }));
        }
    }
    println!("{n} objects in {packs} packs, {rounds} rounds, medians");
    let row = |what: &str, db: Vec<f64>, files: Vec<f64>, unit: &str| {
        let (d, f) = (stats(db).0, stats(files).0);
        println!("{what:<28} opened {d:>9.3} {unit}   closed read {f:>9.3} {unit}");
    };
    row("open", open_db, open_files, "ms");
    row("lookup of a stored id", hit_db, hit_files, "us");
    row("lookup of an absent id", miss_db, miss_files, "us");
    println!(
        "write of 10 objects, durable  opened {:>9.3} ms",
        stats(write).0
    );
}
