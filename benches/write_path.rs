//! The write path's costs through the release `memoir` binary: `remember -p` whole-process
//! time, and what `gc` costs on a store whose packs hold a small share of dead bytes.
//!
//! ```text
//! cargo bench --bench write_path -- fixture DIR [N] [C]   # N memories (import) + C commits
//! cargo bench --bench write_path -- remember STORE [R] [BIN...]
//! cargo bench --bench write_path -- gc FIXTURE [R] [HITS] [BIN...]
//! ```
//!
//! `fixture` builds the store of `cli_commands` (N memories with `memoir import`, then C
//! single-memory commits through the library; defaults 100000 and 10000) in `DIR/store`,
//! once. `remember` runs R (default 15) `remember -p` commands on STORE with each binary in
//! turn (interleaved, so load hits all alike) and prints each binary's median and p95.
//! `gc` copies FIXTURE and stores HITS (default 1000) of its objects again through the
//! library (dedup hits: each appends a copy to the newest pack, a dead record), then per
//! binary and run:
//! a fresh copy of that store, `gc` timed, and the bytes the process wrote to the disk
//! (`getrusage` block outputs); R (default 5) runs per binary, interleaved, medians printed.
//! BIN defaults to the `memoir` cargo built.

mod common;
use common::{add_commits, args, binary, import_lines, run_memoir, stats};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use memoir::repo::Repo;
use memoir::store::{ObjectStore, OpenOptions, PutOutcome, Store};

/// Bytes written to block devices by the children waited for so far.
fn child_out_bytes() -> u64 {
    // SAFETY: `getrusage` fills the struct it is given and touches nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    u.ru_oublock as u64 * 512
}

/// Runs `bin -s store args`; returns wall milliseconds and bytes written.
fn run(bin: &Path, store: &Path, args: &[&str]) -> (f64, u64) {
    let before = child_out_bytes();
    let t = Instant::now();
    run_memoir(bin, store, args);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    (ms, child_out_bytes() - before)
}

fn fixture(dir: &Path, n: usize, commits: usize) {
    let bin = binary();
    let store = dir.join("store");
    assert!(!store.exists(), "{} exists", store.display());
    std::fs::create_dir_all(dir).expect("dir");
    run(&bin, &store, &["new", store.to_str().expect("utf-8")]);
    let file = dir.join("import.jsonl");
    let text = import_lines(n);
    std::fs::write(&file, text).expect("write jsonl");
    run(&bin, &store, &["import", file.to_str().expect("utf-8")]);
    let s = Store::open(&store, &OpenOptions::default()).expect("open");
    let repo = Repo::open(s).expect("repo");
    add_commits(&repo, n, 0..commits);
    println!(
        "fixture: {n} memories + {commits} commits in {}",
        store.display()
    );
}

fn bins(rest: &[String]) -> Vec<PathBuf> {
    if rest.is_empty() {
        vec![binary()]
    } else {
        rest.iter().map(PathBuf::from).collect()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success());
}

fn main() {
    let args = args();
    let num = |i: usize, d: usize| args.get(i).map_or(d, |a| a.parse().expect("number"));
    match args.first().map(String::as_str) {
        Some("fixture") => fixture(
            Path::new(&args[1]),
            num(2, 100_000),
            num(3, 10_000),
        ),
        Some("remember") => {
            let store = Path::new(&args[1]);
            let reps = num(2, 15);
            let bins = bins(&args[3.min(args.len())..]);
            let mut times = vec![Vec::new(); bins.len()];
            for r in 0..reps {
                for (b, bin) in bins.iter().enumerate() {
                    let p = format!("bench.remember.b{b}r{r}x{}", std::process::id());
                    let (ms, _) = run(
                        bin,
                        store,
                        &["--json", "remember", "a new memory from the bench", "-p", &p],
                    );
                    times[b].push(ms);
                }
            }
            for (bin, t) in bins.iter().zip(times) {
                let (med, p95) = stats(t);
                println!(
                    "remember -p  median {med:>7.2} ms  p95 {p95:>7.2} ms  {}",
                    bin.display()
                );
            }
        }
        Some("gc") => {
            let fix = Path::new(&args[1]);
            let reps = num(2, 5);
            let hits = num(3, 1000);
            let bins = bins(&args[4.min(args.len())..]);
            let work = std::env::temp_dir().join(format!("memoir-gc-bench-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&work);
            std::fs::create_dir_all(&work).expect("work dir");
            let base = work.join("base");
            copy_dir(fix, &base);
            // Dedup hits: HITS stored objects (the first ids in index order, so spread over
            // kinds) written again; each write appends a copy, a dead record.
            let t = Instant::now();
            {
                let s = Store::open(&base, &OpenOptions::default()).expect("open");
                let mut ids = Vec::new();
                s.for_each_id(&mut |id| {
                    ids.push(id);
                    ids.len() < hits
                })
                .expect("ids");
                for id in &ids {
                    let bytes = s.get(id).expect("get").expect("stored");
                    let out = s.put(id, &bytes).expect("put");
                    assert_eq!(out, PutOutcome::Existing);
                }
                s.flush().expect("flush");
            }
            println!(
                "setup: {hits} dedup writes in {:.1} s",
                t.elapsed().as_secs_f64()
            );
            let mut times = vec![Vec::new(); bins.len()];
            let mut bytes = vec![Vec::new(); bins.len()];
            for _ in 0..reps {
                for (b, bin) in bins.iter().enumerate() {
                    let copy = work.join("copy");
                    let _ = std::fs::remove_dir_all(&copy);
                    copy_dir(&base, &copy);
                    // Page cache alike for every run: the copy was just written.
                    let (ms, w) = run(bin, &copy, &["--json", "gc"]);
                    times[b].push(ms);
                    bytes[b].push(w as f64);
                }
            }
            for ((bin, t), w) in bins.iter().zip(times).zip(bytes) {
                let (med, _) = stats(t);
                let (wmed, _) = stats(w);
                println!(
                    "gc  median {med:>8.1} ms  written {:>8.2} MB  {}",
                    wmed / 1e6,
                    bin.display()
                );
            }
            let _ = std::fs::remove_dir_all(&work);
        }
        _ => eprintln!("usage: write_path fixture DIR [N C] | remember STORE [R] [BIN...] | gc FIXTURE [R] [HITS] [BIN...]"),
    }
}
