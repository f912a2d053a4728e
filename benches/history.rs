//! History benchmarks on sled: blame, `log -n 20`, diff between commits 1,000 apart, one
//! durable commit, and store growth per single-key commit.
//!
//! Setup (once per process, not timed by criterion): a 100k-key tree committed on `main`,
//! then 10,000 commits of 1-10 edits each (random existing keys, random value ids; the
//! "hot" key `default:hot.key` is edited by about 1 commit in 100). The history commits are
//! written as objects without a flush each and the branch `hist` is set at the end (their
//! cost is not the subject); the growth measurement then makes 10,000 single-key commits
//! with `Repo::commit` (durable: flushes included) on branch `growth`.
//!
//! Run: `cargo bench --bench history` (a filter such as `-- blame` runs only those benches;
//! the setup always runs). Knobs for comparisons (read by this bench only):
//! `MEMOIR_BENCH_SLED_CACHE_MB` sets the engine's page cache (default: the library's
//! 64 MiB); `MEMOIR_BENCH_SKIP_GROWTH` skips the growth measurement.
//!
//! `read_10k_commits_and_roots` (read every commit of the history and load its root node)
//! and `tree_diff_all_1000_commits_apart` (the tree-level diff without key decoding) are
//! baselines that show how much of blame and diff is spent reading and decoding objects.
//!
//! `diff_1000_commits_apart` runs with the node cache warm (same revisions every
//! iteration); `diff_1000_commits_apart_cold_cache` starts each iteration from an empty node
//! cache, as a new process would.
//!
//! The commit graph cache (`cache/commit-graph`) is built in the setup, after the history,
//! and its one-time build time printed; the blame, log and merge-base benches run with it
//! warm. `blame_hot_key_10k_commits_no_filters` walks the same graph but reads the key from
//! every examined commit's tree, and `graph_load_10k_commits` reads the cache file.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use memoir::key::Key;
use memoir::object::{Kind, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::{Commit, Repo, Signature};
use memoir::store::{Backend, ObjectStore, OpenOptions, Store};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEYS: u64 = 100_000;
const COMMITS: usize = 10_000;
const GROWTH_COMMITS: usize = 10_000;
const T0: i64 = 1_700_000_000;

fn key(i: u64) -> Vec<u8> {
    // Spread keys over topics the way a taxonomy would.
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    Key::new(
        "default",
        &format!("topic{:03}.sub{:03}.item{:06}", x % 211, (x / 211) % 97, i),
    )
    .unwrap()
    .encode()
}

fn hot_key() -> Key {
    Key::new("default", "hot.key").unwrap()
}

fn value(rng: &mut StdRng) -> ObjectId {
    ObjectId::of(Kind::Blob, &rng.gen::<u64>().to_le_bytes())
}

struct Fixture {
    _dir: tempfile::TempDir,
    repo: Repo,
    /// Commit ids of the history, oldest first (index 0 = the 100k-key commit).
    history: Vec<ObjectId>,
}

fn build() -> Fixture {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    // The engine's page cache: the library default (64 MiB) unless the bench is told
    // otherwise, to compare a cold-ish store with one whose history fits in memory.
    let mut opts = OpenOptions::default();
    if let Some(mb) = std::env::var("MEMOIR_BENCH_SLED_CACHE_MB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        opts.cache_bytes = mb << 20;
    }
    eprintln!("[setup] sled cache {} MiB", opts.cache_bytes >> 20);
    let store = Store::create(&dir.path().join("store"), &opts).unwrap();
    let repo = Repo::init(store, &Signature::new("bench", T0), "Initialize store").unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let edits: Vec<Edit> = (0..KEYS)
        .map(|i| Edit::Put(key(i), value(&mut rng)))
        .collect();
    let first = repo
        .commit("main", edits, &Signature::new("bench", T0 + 1), "import")
        .unwrap();
    let mut history = vec![first];
    let mut tip = first;
    let mut root = repo.root_of(&first).unwrap();
    let mut hot_changes = 0;
    for i in 0..COMMITS {
        let n = rng.gen_range(1..=10);
        let mut edits: Vec<Edit> = (0..n)
            .map(|_| Edit::Put(key(rng.gen_range(0..KEYS)), value(&mut rng)))
            .collect();
        if rng.gen_ratio(1, 100) {
            edits.push(Edit::Put(hot_key().encode(), value(&mut rng)));
            hot_changes += 1;
        }
        root = repo.tree().apply(&root, edits).unwrap();
        let c = Commit {
            root,
            parents: vec![tip],
            author: "bench <bench@example.org>".into(),
            timestamp: T0 + 10 + 10 * i as i64,
            message: format!("edit {i}"),
            metadata: Default::default(),
        };
        tip = repo.objects().write(&c).unwrap();
        history.push(tip);
    }
    repo.store().flush().unwrap();
    repo.create_branch("hist", &tip).unwrap();
    eprintln!(
        "[setup] 100k keys + {COMMITS} commits of 1-10 edits ({hot_changes} touch the hot key) \
         built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Fixture {
        _dir: dir,
        repo,
        history,
    }
}

/// Bytes of the nodes a one-key commit writes: the nodes on the key's path in the new tree
/// that are not in the old tree.
fn path_bytes(repo: &Repo, old_root: &ObjectId, new_root: &ObjectId, k: &[u8]) -> u64 {
    let path = |root: &ObjectId| -> Vec<ObjectId> {
        let mut out = vec![*root];
        let mut node = repo.tree().load(root).unwrap();
        while node.level > 0 {
            let i = node
                .items
                .iter()
                .rposition(|it| &it.key[..] <= k)
                .unwrap_or(0);
            let id = node.items[i].id;
            out.push(id);
            node = repo.tree().load(&id).unwrap();
        }
        out
    };
    let old = path(old_root);
    path(new_root)
        .iter()
        .filter(|id| !old.contains(id))
        .map(|id| {
            repo.objects()
                .read_bytes(id, memoir::object::Kind::Node)
                .unwrap()
                .len() as u64
        })
        .sum()
}

fn growth(fx: &Fixture) {
    let repo = &fx.repo;
    let tip = *fx.history.last().unwrap();
    repo.create_branch("growth", &tip).unwrap();
    let mut rng = StdRng::seed_from_u64(11);
    repo.store().flush().unwrap();
    let before = repo.store().size_on_disk().unwrap();
    let mut node_bytes = 0u64;
    let mut commit_bytes = 0u64;
    let started = Instant::now();
    let mut parent_root = repo.root_of(&tip).unwrap();
    for i in 0..GROWTH_COMMITS {
        let k = key(rng.gen_range(0..KEYS));
        let c = repo
            .commit(
                "growth",
                vec![Edit::Put(k.clone(), value(&mut rng))],
                &Signature::new("bench", T0 + 1_000_000 + i as i64),
                "Store one key",
            )
            .unwrap();
        let root = repo.root_of(&c).unwrap();
        node_bytes += path_bytes(repo, &parent_root, &root, &k);
        commit_bytes += repo
            .objects()
            .read_bytes(&c, memoir::object::Kind::Commit)
            .unwrap()
            .len() as u64;
        parent_root = root;
    }
    let elapsed = started.elapsed();
    repo.store().flush().unwrap();
    let after = repo.store().size_on_disk().unwrap();
    let n = GROWTH_COMMITS as u64;
    eprintln!(
        "[growth] {GROWTH_COMMITS} single-key durable commits in {:.1} s ({:.3} ms each, \
         path-byte accounting included); size_on_disk {} -> {} bytes: {} bytes/commit on disk \
         vs {} bytes/commit of new nodes on the touched path + {} bytes/commit of commit object",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / n as f64,
        before,
        after,
        after.saturating_sub(before) / n,
        node_bytes / n,
        commit_bytes / n,
    );
}

fn benches(c: &mut Criterion, fx: &Fixture) {
    let repo = &fx.repo;
    let tip = *fx.history.last().unwrap();
    let mut g = c.benchmark_group("history");
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));

    // The commit graph cache: built once here (timed), then warm for every bench; a
    // reload from the cache file is timed too.
    let started = Instant::now();
    let graph = repo.commit_graph(&[tip], true).unwrap();
    eprintln!(
        "[graph] built for {} commits with change filters in {:.1} ms",
        graph.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let path = memoir::repo::graph_cache::cache_path(repo.store().path().unwrap());
    let started = Instant::now();
    let loaded = memoir::repo::graph_cache::CommitGraph::load(&path);
    eprintln!(
        "[graph] cache file {} bytes, loaded ({} commits) in {:.2} ms",
        std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        loaded.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let hot = hot_key();
    let cold = Key::decode(&key(12_345)).unwrap();
    eprintln!(
        "[blame] hot key: {} entries; cold key: {} entries; never written: {}",
        repo.blame(&tip, &hot, None).unwrap().len(),
        repo.blame(&tip, &cold, None).unwrap().len(),
        repo.blame(&tip, &Key::new("default", "never.written").unwrap(), None)
            .unwrap()
            .len(),
    );
    g.bench_function("blame_hot_key_10k_commits", |b| {
        b.iter(|| black_box(repo.blame(&tip, &hot, None).unwrap()))
    });
    g.bench_function("blame_cold_key_10k_commits", |b| {
        b.iter(|| black_box(repo.blame(&tip, &cold, None).unwrap()))
    });
    g.bench_function("blame_hot_key_10k_commits_no_filters", |b| {
        b.iter(|| black_box(repo.blame_with(&tip, &hot, None, false).unwrap()))
    });
    g.bench_function("graph_load_10k_commits", |b| {
        b.iter(|| black_box(memoir::repo::graph_cache::CommitGraph::load(&path)))
    });
    g.bench_function("blame_hot_key_limit_10", |b| {
        b.iter(|| black_box(repo.blame(&tip, &hot, Some(10)).unwrap()))
    });
    g.bench_function("log_n20", |b| {
        b.iter(|| black_box(repo.log(&[tip], &[], None, Some(20)).unwrap()))
    });
    let (a, z) = (fx.history[4_000], fx.history[5_000]);
    let (ra, rz) = (repo.root_of(&a).unwrap(), repo.root_of(&z).unwrap());
    eprintln!(
        "[diff] commits 4000 -> 5000: {} changed keys",
        repo.diff(&ra, &rz, None).unwrap().len()
    );
    // Warm: the process's node cache holds both trees' nodes after the first iteration
    // (as in a long-lived process, e.g. the MCP server, diffing the same revisions again).
    g.bench_function("diff_1000_commits_apart", |b| {
        b.iter(|| black_box(repo.diff(&ra, &rz, None).unwrap()))
    });
    // Cold: every iteration starts from an empty node cache (a fresh `Repo` over the same
    // open store, as a new command would have), so every node is read from the store,
    // hash-checked and decoded; the engine's own page cache stays as it is.
    g.bench_function("diff_1000_commits_apart_cold_cache", |b| {
        b.iter_batched(
            || Repo::open(repo.store().clone()).unwrap(),
            |fresh| black_box(fresh.diff(&ra, &rz, None).unwrap()),
            criterion::BatchSize::PerIteration,
        )
    });
    // The same diff at the tree layer only (no key decoding), to attribute the cost.
    g.bench_function("tree_diff_all_1000_commits_apart", |b| {
        b.iter(|| black_box(repo.tree().diff_all(&ra, &rz).unwrap()))
    });
    g.bench_function("read_10k_commits_and_roots", |b| {
        b.iter(|| {
            for id in &fx.history {
                let c = repo.read_commit(id).unwrap();
                black_box(repo.tree().load(&c.root).unwrap());
            }
        })
    });
    repo.create_branch("durable", &tip).unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    let mut t = T0 + 2_000_000;
    g.bench_function("durable_commit_one_edit", |b| {
        b.iter(|| {
            t += 1;
            let e = Edit::Put(key(rng.gen_range(0..KEYS)), value(&mut rng));
            black_box(
                repo.commit("durable", vec![e], &Signature::new("bench", t), "Store one")
                    .unwrap(),
            )
        })
    });
    g.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let fx = build();
    benches(&mut c, &fx);
    if std::env::var_os("MEMOIR_BENCH_SKIP_GROWTH").is_none() {
        growth(&fx);
    }
    c.final_summary();
}
