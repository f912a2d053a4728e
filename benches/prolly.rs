//! Prolly tree benchmarks: bulk build, edit batches, point gets, histograms and diffs.
//!
//! Keys: namespace "default", paths `topic{a:03}.sub{b:03}.item{c:05}` (33 encoded bytes),
//! where key `i` is a bijective 30-bit mix of `i` split into a (7 bits, 128 topics),
//! b (7 bits) and c (16 bits). Keys `0..n` are the tree; keys `n..2n` are guaranteed new
//! (inserts). Value ids and edit choices come from a seeded `StdRng`.
//!
//! Node cache: every `NodeStore` here has `CACHE_NODES` = 1 << 15 = 32768 decoded nodes;
//! a 1M-key tree has ~20k nodes, so the whole tree (internal nodes and leaves) fits.
//!
//! Big trees are built once (lazily, the first time a benchmark that needs them runs) and
//! shared; run one group at a time with a filter, e.g. `cargo bench --bench prolly -- get`.
//!
//! Clock: wall time by default. With `MEMOIR_BENCH_CLOCK=cpu` the benchmarks measure the
//! CPU time of the benchmarking thread instead (`CLOCK_THREAD_CPUTIME_ID`), which stays
//! meaningful on a machine shared with other work; it leaves out time spent waiting (such as
//! fsync in `sled+flush`).

use std::hint::black_box;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use memoir::key::{group_prefix, Key};
use memoir::object::{Kind, ObjectId};
use memoir::prolly::{Edit, KeyRange, NodeStore, Proof};
use memoir::store::{
    MemoryBackend, ObjectStore, OpenOptions, PutOutcome, RawId, Store, StoreResult,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CACHE_NODES: usize = 1 << 15;
const K100: u64 = 100_000;
const M1: u64 = 1_000_000;

const MASK: u64 = (1 << 30) - 1;

/// A bijection of 0..2^30 (odd multipliers and xor-shifts mod 2^30).
fn mix(i: u64) -> u64 {
    let mut x = i & MASK;
    x = x.wrapping_mul(0x2545_F491) & MASK;
    x ^= x >> 15;
    x = x.wrapping_mul(0x1B87_3593) & MASK;
    x ^= x >> 13;
    x
}

/// Encoded key number `i` (distinct for distinct `i < 2^30`).
fn key(i: u64) -> Vec<u8> {
    let x = mix(i);
    let (a, b, c) = (x >> 23, (x >> 16) & 127, x & 0xffff);
    Key::new("default", &format!("topic{a:03}.sub{b:03}.item{c:05}"))
        .unwrap()
        .encode()
}

fn value(rng: &mut StdRng) -> ObjectId {
    ObjectId::of(Kind::Blob, &rng.gen::<u64>().to_le_bytes())
}

/// Keys `0..n` sorted, with random value ids.
fn sorted_entries(n: u64, seed: u64) -> Vec<(Vec<u8>, ObjectId)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v: Vec<(Vec<u8>, ObjectId)> = (0..n).map(|i| (key(i), value(&mut rng))).collect();
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    v
}

/// `updates` puts of random existing keys and `inserts` puts of random new keys.
fn random_batch(rng: &mut StdRng, n: u64, updates: usize, inserts: usize) -> Vec<Edit> {
    let mut edits = Vec::with_capacity(updates + inserts);
    for _ in 0..updates {
        edits.push(Edit::Put(key(rng.gen_range(0..n)), value(rng)));
    }
    for _ in 0..inserts {
        edits.push(Edit::Put(key(rng.gen_range(n..2 * n)), value(rng)));
    }
    edits
}

struct Fixture {
    ns: NodeStore,
    mem: Option<Arc<MemoryBackend>>,
    root: ObjectId,
    n: u64,
    store: Option<Store>,
    dir: Option<tempfile::TempDir>,
}

impl Fixture {
    fn memory(n: u64) -> Fixture {
        let mem = Arc::new(MemoryBackend::new());
        let ns = NodeStore::new(mem.clone(), CACHE_NODES);
        let root = ns.build_sorted(sorted_entries(n, 1)).unwrap();
        assert_eq!(ns.count(&root).unwrap(), n);
        Fixture {
            ns,
            mem: Some(mem),
            root,
            n,
            store: None,
            dir: None,
        }
    }

    fn sled(n: u64) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
        let ns = NodeStore::new(Arc::new(store.clone()), CACHE_NODES);
        let root = ns.build_sorted(sorted_entries(n, 1)).unwrap();
        store.flush().unwrap();
        assert_eq!(ns.count(&root).unwrap(), n);
        Fixture {
            ns,
            mem: None,
            root,
            n,
            store: Some(store),
            dir: Some(dir),
        }
    }

    /// Loads every node of the tree into the cache.
    fn warm(&self) {
        let mut seen = 0u64;
        self.ns
            .scan(&self.root, &KeyRange::all(), &mut |_, _| {
                seen += 1;
                true
            })
            .unwrap();
        assert_eq!(seen, self.n);
    }
}

fn mem_1m() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let f = Fixture::memory(M1);
        // Checked through a handle of its own, so the check's reads and allocations do not
        // shape the cache the benchmarks read through.
        let mem: Arc<dyn ObjectStore> = f.mem.clone().expect("a memory fixture");
        let rep = NodeStore::new(mem, CACHE_NODES).verify(&f.root);
        assert!(rep.violations.is_empty());
        let avg: Vec<u64> = rep
            .bytes_per_level
            .iter()
            .zip(&rep.nodes_per_level)
            .map(|(b, n)| b / n)
            .collect();
        eprintln!(
            "[fixture] 1M memory tree: nodes/level {:?}, avg item bytes/node per level {:?}",
            rep.nodes_per_level, avg
        );
        f
    })
}

fn mem_100k() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| Fixture::memory(K100))
}

/// The shared 1M sled store. Statics are never dropped, so `main` removes its directory.
static SLED_1M: OnceLock<Fixture> = OnceLock::new();

fn sled_1m() -> &'static Fixture {
    SLED_1M.get_or_init(|| Fixture::sled(M1))
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant of the platform.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Criterion measurement: CPU time of the benchmarking thread (values in ns, shown like
/// wall time).
struct ThreadCpu {
    wall: WallTime,
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}

/// 1. Bulk build from sorted input into a fresh store per iteration.
fn bench_build<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_secs(1));
    for (label, n) in [("100k", K100), ("1M", M1)] {
        let entries = OnceLock::new();
        let entries = || entries.get_or_init(|| sorted_entries(n, 1));
        g.throughput(Throughput::Elements(n));
        g.measurement_time(Duration::from_secs(if n == M1 { 25 } else { 5 }));
        g.bench_function(BenchmarkId::new("memory", label), |b| {
            let entries = entries();
            b.iter_batched(
                || {
                    let ns = NodeStore::new(Arc::new(MemoryBackend::new()), CACHE_NODES);
                    (ns, entries.clone())
                },
                |(ns, e)| {
                    let root = ns.build_sorted(e).unwrap();
                    (ns, root)
                },
                BatchSize::PerIteration,
            )
        });
        // Sled: build_sorted and one final flush (an import), fresh store each time.
        g.measurement_time(Duration::from_secs(if n == M1 { 60 } else { 10 }));
        g.bench_function(BenchmarkId::new("sled+flush", label), |b| {
            let entries = entries();
            b.iter_batched(
                || {
                    let dir = tempfile::tempdir().unwrap();
                    let store =
                        Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
                    let ns = NodeStore::new(Arc::new(store.clone()), CACHE_NODES);
                    (dir, store, ns, entries.clone())
                },
                |(dir, store, ns, e)| {
                    let root = ns.build_sorted(e).unwrap();
                    store.flush().unwrap();
                    (dir, store, ns, root)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// Reads from an inner store and drops every write: applying edits over it measures the
/// tree work alone (descending, chunking, encoding, hashing), without the store's own cost.
struct DiscardWrites(Arc<MemoryBackend>);

impl ObjectStore for DiscardWrites {
    fn get(&self, id: &RawId) -> StoreResult<Option<memoir::store::Bytes>> {
        self.0.get(id)
    }
    fn put(&self, _id: &RawId, _bytes: &[u8]) -> StoreResult<PutOutcome> {
        Ok(PutOutcome::Written)
    }
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        Ok(vec![PutOutcome::Written; objects.len()])
    }
    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.0.contains(id)
    }
    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.0.ids_with_prefix(prefix)
    }
    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        self.0.for_each_id(f)
    }
    fn delete(&self, _id: &RawId) -> StoreResult<bool> {
        Ok(false)
    }
    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }
}

/// 2. A fresh batch of 100 random edits (50 updates, 50 inserts) applied to the same 1M root.
fn bench_edit100<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("edit100_1M");
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(8));
    g.sample_size(50);
    // The closure runs once per sample: one-time setup and the rng live outside it.
    let mut rng = StdRng::seed_from_u64(2);
    let mut first = true;
    g.bench_function("memory", |b| {
        let f = mem_1m();
        if std::mem::take(&mut first) {
            f.warm();
            let (_, st) =
                f.ns.apply_with_stats(&f.root, random_batch(&mut rng, f.n, 50, 50))
                    .unwrap();
            eprintln!("[edit100 memory] one batch: {st:?}");
        }
        b.iter_batched(
            || random_batch(&mut rng, f.n, 50, 50),
            |edits| f.ns.apply(&f.root, edits).unwrap(),
            BatchSize::PerIteration,
        )
    });
    // Tree work only: the same batches over a store that drops writes.
    let mut rng = StdRng::seed_from_u64(5);
    let mut tree_only: Option<NodeStore> = None;
    g.bench_function("tree_only", |b| {
        let f = mem_1m();
        let ns = tree_only.get_or_insert_with(|| {
            let mem = f.mem.clone().expect("memory fixture");
            let ns = NodeStore::new(Arc::new(DiscardWrites(mem)), CACHE_NODES);
            ns.count_range(&f.root, &KeyRange::all()).unwrap();
            ns
        });
        b.iter_batched(
            || random_batch(&mut rng, f.n, 50, 50),
            |edits| ns.apply(&f.root, edits).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.sample_size(20);
    g.sampling_mode(SamplingMode::Flat);
    g.measurement_time(Duration::from_secs(10));
    // Store writes without the flush: the previous iteration's writes are flushed in the
    // (untimed) setup, so each timed apply starts with a clean sled.
    let mut rng = StdRng::seed_from_u64(3);
    let mut first = true;
    g.bench_function("sled_no_flush", |b| {
        let f = sled_1m();
        let store = f.store.as_ref().unwrap();
        if std::mem::take(&mut first) {
            let (_, st) =
                f.ns.apply_with_stats(&f.root, random_batch(&mut rng, f.n, 50, 50))
                    .unwrap();
            eprintln!("[edit100 sled] one batch: {st:?}");
        }
        b.iter_batched(
            || {
                store.flush().unwrap();
                random_batch(&mut rng, f.n, 50, 50)
            },
            |edits| f.ns.apply(&f.root, edits).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let mut rng = StdRng::seed_from_u64(4);
    g.bench_function("sled+flush", |b| {
        let f = sled_1m();
        let store = f.store.as_ref().unwrap();
        b.iter_batched(
            || {
                store.flush().unwrap();
                random_batch(&mut rng, f.n, 50, 50)
            },
            |edits| {
                let r = f.ns.apply(&f.root, edits).unwrap();
                store.flush().unwrap();
                r
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Benchmark 3: point get of random existing keys, whole tree cached. `warm_built`: the
/// `NodeStore` that built the tree, its cache filled by a scan (building does not cache the
/// nodes it makes); `warm_decoded`: a fresh `NodeStore` over the same store whose cache was
/// filled by a scan (as after a reopen). Both serve nodes that were read and decoded.
fn bench_get<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("get_1M");
    let mut rng = StdRng::seed_from_u64(5);
    let keys: Vec<Vec<u8>> = (0..4096).map(|_| key(rng.gen_range(0..M1))).collect();
    let mut i = 0usize;
    let mut first = true;
    g.bench_function("warm_built", |b| {
        let f = mem_1m();
        if std::mem::take(&mut first) {
            f.warm();
        }
        b.iter(|| {
            i = (i + 1) & 4095;
            let v = f.ns.get(&f.root, &keys[i]).unwrap();
            debug_assert!(v.is_some());
            black_box(v)
        })
    });
    let mut decoded: Option<NodeStore> = None;
    g.bench_function("warm_decoded", |b| {
        let f = mem_1m();
        let ns = decoded.get_or_insert_with(|| {
            let ns = NodeStore::new(f.mem.clone().unwrap(), CACHE_NODES);
            ns.scan(&f.root, &KeyRange::all(), &mut |_, _| true)
                .unwrap();
            ns
        });
        b.iter(|| {
            i = (i + 1) & 4095;
            let v = ns.get(&f.root, &keys[i]).unwrap();
            debug_assert!(v.is_some());
            black_box(v)
        })
    });
    g.finish();
}

fn depth1(k: &[u8]) -> &[u8] {
    group_prefix(k, 1)
}

fn depth3(k: &[u8]) -> &[u8] {
    group_prefix(k, 3)
}

/// 4. Prefix histograms over the whole (cached) tree.
fn bench_histogram<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("histogram");
    for (label, get) in [
        ("100k", mem_100k as fn() -> &'static Fixture),
        ("1M", mem_1m),
    ] {
        g.bench_function(BenchmarkId::new("depth1", label), |b| {
            let f = get();
            f.warm();
            let h = f.ns.histogram(&f.root, &KeyRange::all(), &depth1).unwrap();
            assert_eq!(h.iter().map(|(_, n)| n).sum::<u64>(), f.n);
            assert_eq!(h.len(), 128);
            b.iter(|| black_box(f.ns.histogram(&f.root, &KeyRange::all(), &depth1).unwrap()))
        });
    }
    let mut first = true;
    g.bench_function(BenchmarkId::new("depth3", "100k"), |b| {
        let f = mem_100k();
        if std::mem::take(&mut first) {
            f.warm();
        }
        b.iter(|| black_box(f.ns.histogram(&f.root, &KeyRange::all(), &depth3).unwrap()))
    });
    g.finish();
}

/// 5. Diff of two 1M trees that differ in 100 keys (50 updated, 50 inserted).
fn bench_diff<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("diff_1M");
    g.bench_function("100_keys", |b| {
        let f = mem_1m();
        let mut rng = StdRng::seed_from_u64(6);
        let other =
            f.ns.apply(&f.root, random_batch(&mut rng, f.n, 50, 50))
                .unwrap();
        f.warm();
        let d = f.ns.diff_all(&f.root, &other).unwrap();
        assert_eq!(d.len(), 100);
        b.iter(|| black_box(f.ns.diff_all(&f.root, &other).unwrap()))
    });
    g.finish();
}

/// 6. One Put into the 1M tree (memory backend): update of an existing key, insert of a new.
fn bench_put1<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("put1_1M");
    for (label, new) in [("update", false), ("insert", true)] {
        let mut rng = StdRng::seed_from_u64(7);
        let mut first = true;
        g.bench_function(label, |b| {
            let f = mem_1m();
            if std::mem::take(&mut first) {
                f.warm();
            }
            b.iter_batched(
                || {
                    let i = if new {
                        rng.gen_range(f.n..2 * f.n)
                    } else {
                        rng.gen_range(0..f.n)
                    };
                    vec![Edit::Put(key(i), value(&mut rng))]
                },
                |edits| f.ns.apply(&f.root, edits).unwrap(),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// Benchmark 7: Merkle proofs in the cached 1M tree, of random keys (half present, half
/// absent): prove, encode, decode and verify.
fn bench_proof<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("proof_1M");
    let mut rng = StdRng::seed_from_u64(8);
    // Half present (keys 0..n), half absent (keys n..2n).
    let keys: Vec<Vec<u8>> = (0..4096)
        .map(|j| key(rng.gen_range(0..M1) + if j % 2 == 1 { M1 } else { 0 }))
        .collect();
    let mut i = 0usize;
    let mut first = true;
    g.bench_function("prove_verify", |b| {
        let f = mem_1m();
        if std::mem::take(&mut first) {
            f.warm();
            let p = f.ns.prove(&f.root, &keys[0]).unwrap();
            eprintln!(
                "[proof] {} nodes, {} bytes encoded",
                p.nodes.len(),
                p.to_bytes().len()
            );
        }
        b.iter(|| {
            i = (i + 1) & 4095;
            let bytes = f.ns.prove(&f.root, &keys[i]).unwrap().to_bytes();
            let v = Proof::from_bytes(&bytes)
                .unwrap()
                .verify(&f.root, &keys[i])
                .unwrap();
            debug_assert_eq!(v.is_some(), i.is_multiple_of(2));
            black_box(v)
        })
    });
    g.finish();
}

fn run_all<M: Measurement>(c: &mut Criterion<M>) {
    bench_build(c);
    bench_edit100(c);
    bench_get(c);
    bench_histogram(c);
    bench_diff(c);
    bench_put1(c);
    bench_proof(c);
}

fn main() {
    if std::env::var("MEMOIR_BENCH_CLOCK").as_deref() == Ok("cpu") {
        let mut c = Criterion::default()
            .with_measurement(ThreadCpu { wall: WallTime })
            .configure_from_args();
        run_all(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        run_all(&mut c);
        c.final_summary();
    }
    // The shared sled store grows by every edit benchmarked (gigabytes): do not leave it in
    // the temporary directory.
    if let Some(dir) = SLED_1M.get().and_then(|f| f.dir.as_ref()) {
        let _ = std::fs::remove_dir_all(dir.path());
    }
}
