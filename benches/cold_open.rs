//! Cold open of an on-disk store, and its size.
//!
//! ```text
//! cargo bench --bench cold_open -- build DIR N        a sled store at DIR holding an N-key tree
//! cargo bench --bench cold_open -- read DIR KEYINDEX  open DIR, read ref "root", get key
//!                                 KEYINDEX (and one more key), close; print each step's time
//! ```
//!
//! Keys are the ones of `benches/prolly.rs`: namespace "default", paths
//! `topic{a:03}.sub{b:03}.item{c:05}` (33 encoded bytes), key `i` a bijective 30-bit mix of
//! `i`, so `read` can name key `i` without rebuilding the key set.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use memoir::key::Key;
use memoir::object::{Kind, ObjectId};
use memoir::prolly::{NodeStore, DEFAULT_CACHE_NODES};
use memoir::store::{Backend, ObjectStore, OpenOptions, RefStore, Store};

const MASK: u64 = (1 << 30) - 1;

fn mix(i: u64) -> u64 {
    let mut x = i & MASK;
    x = x.wrapping_mul(0x2545_F491) & MASK;
    x ^= x >> 15;
    x = x.wrapping_mul(0x1B87_3593) & MASK;
    x ^= x >> 13;
    x
}

fn key(i: u64) -> Vec<u8> {
    let x = mix(i);
    let (a, b, c) = (x >> 23, (x >> 16) & 127, x & 0xffff);
    Key::new("default", &format!("topic{a:03}.sub{b:03}.item{c:05}"))
        .unwrap()
        .encode()
}

fn value(i: u64) -> ObjectId {
    ObjectId::of(Kind::Blob, &i.to_le_bytes())
}

/// (apparent bytes, allocated bytes) of every file under `dir`, like `du -sb` / `du -s`.
fn dir_size(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut total = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            let (a, b) = dir_size(&entry.path());
            total.0 += a;
            total.1 += b;
        } else {
            total.0 += meta.len();
            total.1 += meta.blocks() * 512;
        }
    }
    total
}

fn build(dir: &Path, n: u64) {
    let t = Instant::now();
    let store = Store::create(dir, &OpenOptions::default()).unwrap();
    let ns = NodeStore::new(Arc::new(store.clone()), DEFAULT_CACHE_NODES);
    let mut entries: Vec<(Vec<u8>, ObjectId)> = (0..n).map(|i| (key(i), value(i))).collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let root = ns.build_sorted(entries).unwrap();
    store
        .cas_ref("root", None, Some(root.to_hex().as_bytes()))
        .unwrap()
        .unwrap();
    store.flush().unwrap();
    let built = t.elapsed();
    let rep = ns.verify(&root);
    assert!(rep.violations.is_empty(), "{:?}", &rep.violations[..1]);
    assert_eq!(rep.keys, n);
    let sled_bytes = store.size_on_disk().unwrap();
    drop(ns);
    drop(store);
    let (apparent, allocated) = dir_size(dir);
    println!("built {n} keys in {built:?}; root {}", root.short(16));
    println!(
        "sled size_on_disk: {sled_bytes} B = {:.1} B/key",
        sled_bytes as f64 / n as f64
    );
    println!(
        "directory (after close): {apparent} B apparent = {:.1} B/key; {allocated} B allocated = {:.1} B/key",
        apparent as f64 / n as f64,
        allocated as f64 / n as f64
    );
    let items: u64 = rep.bytes_per_level.iter().sum();
    println!(
        "node item bytes: {items} B = {:.1} B/key",
        items as f64 / n as f64
    );
    for (l, (nodes, bytes)) in rep
        .nodes_per_level
        .iter()
        .zip(&rep.bytes_per_level)
        .enumerate()
    {
        println!(
            "level {l}: {nodes} nodes, {bytes} item bytes, avg {} B/node",
            bytes / nodes
        );
    }
}

fn read(dir: &Path, index: u64) {
    let t0 = Instant::now();
    let store = Store::open(dir, &OpenOptions::default()).unwrap();
    let t_open = t0.elapsed();
    let t1 = Instant::now();
    let hex = store.get_ref("root").unwrap().expect("ref root");
    let root: ObjectId = std::str::from_utf8(&hex).unwrap().parse().unwrap();
    let t_ref = t1.elapsed();
    let ns = NodeStore::new(Arc::new(store.clone()), DEFAULT_CACHE_NODES);
    let t2 = Instant::now();
    let v = ns.get(&root, &key(index)).unwrap();
    let t_get = t2.elapsed();
    let t3 = Instant::now();
    let v2 = ns.get(&root, &key(index ^ 1)).unwrap();
    let t_get2 = t3.elapsed();
    let t_total = t0.elapsed();
    assert_eq!(v, Some(value(index)), "key {index} not found");
    assert!(v2.is_some());
    // Closing (sled's drop) is part of a command's wall time too.
    let t4 = Instant::now();
    drop(ns);
    drop(store);
    let t_close = t4.elapsed();
    println!(
        "open_us={} ref_us={} first_get_us={} second_get_us={} total_us={} close_us={}",
        t_open.as_micros(),
        t_ref.as_micros(),
        t_get.as_micros(),
        t_get2.as_micros(),
        t_total.as_micros(),
        t_close.as_micros()
    );
}

fn main() {
    let args = common::args();
    let usage = "usage: cold_open build DIR N | cold_open read DIR KEYINDEX";
    if args.len() != 3 {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let n: u64 = args[2].parse().expect("a number");
    match args[0].as_str() {
        "build" => build(dir, n),
        "read" => read(dir, n),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
