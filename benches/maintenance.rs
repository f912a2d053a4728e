//! Repository maintenance benchmarks on sled stores: merge and gc.
//!
//! - `merge/100k_1000x1000`: a 100,000-key tree; two branches fork from it and each changes
//!   1,000 different keys (500 modified, 250 added, 250 deleted per side, no conflicts);
//!   one iteration is `Repo::merge` of one branch into the other: merge base, two tree
//!   diffs, one edit batch, the merge commit and its ref move with both flushes. Every
//!   iteration merges a fresh pair of branches whose changes carry new value ids, so the
//!   merged tree's nodes are new each time (set up outside the timing). The process's node
//!   cache is warm for the base tree (every round forks from it) and holds none of the two
//!   branches' new nodes (commits do not cache the nodes they write).
//!   `merge/100k_1000x1000_cold_cache` is the same merge through a fresh `Repo` over the
//!   same open store (empty node cache, commit graph reloaded from its cache file), as a new
//!   `memoir merge` process would run it.
//! - `gc/history_3000`: a 20,000-key tree with 3,000 commits of 3 edits each on `main`;
//!   one iteration is a full `Repo::gc` (mark every commit and distinct node, scan every
//!   stored id) that finds nothing to remove. `gc/history_3000_with_garbage` first writes
//!   a 300-commit side history that no ref names (outside the timing), so each iteration
//!   also sweeps it.
//!
//! Keys: namespace "default", paths `topic{a:03}.item{i:06}`; value ids are hashes of
//! counters (the value objects are not stored: merge and gc never read values).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use memoir::key::Key;
use memoir::object::{Kind, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::{Commit, MergeKind, Repo, Signature, Strategy};
use memoir::store::{ObjectStore, OpenOptions, RefStore, Store};

fn key(i: u64) -> Vec<u8> {
    Key::new("default", &format!("topic{:03}.item{i:06}", i % 97))
        .unwrap()
        .encode()
}

fn value(tag: u64, i: u64) -> ObjectId {
    ObjectId::of(Kind::Blob, format!("{tag}/{i}").as_bytes())
}

fn sig(t: i64) -> Signature {
    Signature::new("Bench <b@example.org>", t)
}

/// A repo on a fresh sled store whose `main` holds keys `0..n` (plus the initial commit).
fn repo_with_tree(dir: &tempfile::TempDir, n: u64) -> Repo {
    let store = Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(1), "init").unwrap();
    let mut entries: Vec<(Vec<u8>, ObjectId)> = (0..n).map(|i| (key(i), value(0, i))).collect();
    entries.sort();
    let root = repo.tree().build_sorted(entries).unwrap();
    let tip = repo.branch_tip("main").unwrap();
    repo.commit_tree("main", &tip, root, vec![tip], &sig(2), "bulk")
        .unwrap();
    repo
}

/// 1,000 changes of side `side` (0 or 1) in round `round`: 500 keys of the lower half
/// modified, 250 new keys added, 250 keys of the upper half deleted; the sides touch
/// disjoint keys (residues `side` mod 100), so the merge has no conflicts.
fn side_edits(n: u64, side: u64, round: u64) -> Vec<Edit> {
    let tag = 1 + round * 2 + side;
    let mut out = Vec::with_capacity(1000);
    for j in 0..500 {
        let i = j * 100 + side;
        out.push(Edit::Put(key(i), value(tag, i)));
    }
    for j in 0..250 {
        let i = n + round * 1000 + side * 500 + j;
        out.push(Edit::Put(key(i), value(tag, i)));
    }
    for j in 0..250 {
        let i = n / 2 + j * 100 + side;
        out.push(Edit::Delete(key(i)));
    }
    out
}

fn bench_merge(c: &mut Criterion) {
    const N: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_with_tree(&dir, N);
    let base = repo.branch_tip("main").unwrap();
    let mut round = 0u64;
    let mut g = c.benchmark_group("merge");
    g.sample_size(20);
    g.sampling_mode(SamplingMode::Flat);
    g.measurement_time(Duration::from_secs(10));
    for cold in [false, true] {
        let name = if cold {
            "100k_1000x1000_cold_cache"
        } else {
            "100k_1000x1000"
        };
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    round += 1;
                    let (ours, theirs) = (format!("o{round}"), format!("t{round}"));
                    repo.create_branch(&ours, &base).unwrap();
                    repo.create_branch(&theirs, &base).unwrap();
                    let s = sig(10 + round as i64);
                    repo.commit(&ours, side_edits(N, 0, round), &s, "ours")
                        .unwrap();
                    let t = repo
                        .commit(&theirs, side_edits(N, 1, round), &s, "theirs")
                        .unwrap();
                    let fresh = cold.then(|| Repo::open(repo.store().clone()).unwrap());
                    let r = fresh.as_ref().unwrap_or(&repo);
                    let start = Instant::now();
                    let out = r.merge(&t, &ours, &Strategy::Fail, &s, "Merge").unwrap();
                    total += start.elapsed();
                    assert_eq!(out.kind, MergeKind::Merged);
                    assert!(out.conflicts.is_empty());
                }
                total
            })
        });
    }
    g.finish();
}

/// `commits` commits of 3 edits each on top of `parent`, written without per-commit flushes
/// (the bench measures gc, not history building); returns the last commit.
fn grow(repo: &Repo, parent: ObjectId, n: u64, commits: u64, tag: u64) -> ObjectId {
    let mut tip = parent;
    let mut root = repo.root_of(&parent).unwrap();
    for k in 0..commits {
        let edits = (0..3)
            .map(|j| {
                let i = (k * 7919 + j * 104_729 + tag * 31) % n;
                Edit::Put(key(i), value(100 + tag, k * 3 + j))
            })
            .collect();
        root = repo.tree().apply(&root, edits).unwrap();
        let c = Commit {
            root,
            parents: vec![tip],
            author: "Bench".into(),
            timestamp: 100 + k as i64,
            message: format!("commit {k}"),
            metadata: Default::default(),
        };
        tip = repo.objects().write(&c).unwrap();
    }
    tip
}

fn bench_gc(c: &mut Criterion) {
    const N: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_with_tree(&dir, N);
    let base = repo.branch_tip("main").unwrap();
    let tip = grow(&repo, base, N, 3000, 0);
    repo.store().flush().unwrap();
    let r = "refs/heads/main";
    repo.store()
        .cas_ref(r, Some(base.as_bytes()), Some(tip.as_bytes()))
        .unwrap()
        .unwrap();
    let first = repo.gc().unwrap();
    assert_eq!(first.objects_removed, 0);
    let mut g = c.benchmark_group("gc");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("history_3000", |b| b.iter(|| black_box(repo.gc().unwrap())));
    let mut round = 0u64;
    g.bench_function("history_3000_with_garbage", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                let side = grow(&repo, tip, N, 300, round);
                let start = Instant::now();
                let rep = repo.gc().unwrap();
                total += start.elapsed();
                assert!(rep.objects_removed >= 300, "{side}");
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench_merge, bench_gc);
criterion_main!(benches);
