//! Whole-process timings of the `memoir` command line (release build), as an agent sees them.
//!
//! Builds a store of N memories (3-level keys, 200-byte contents) with `memoir import`, adds a
//! history of C single-memory commits through the library, then runs each command R times
//! and prints the median and p95 wall time. Also: `--version` (process start), `status`
//! (open + close), a 5,000-memory store for `summarize --depth 3`, and the on-disk size of a
//! store written by 1,000 separate `remember` commands.
//!
//! `cargo bench --bench cli_commands -- [N] [C] [R] [DIR]`
//! (defaults 100000 10000 15). With DIR, the two stores are built there once and kept; each
//! run measures a fresh copy of them (so caches built by the commands measured, such as the
//! commit graph, start out missing every time, as after the stores were written). The
//! binary measured is the one cargo built, or the one `MEMOIR_BENCH_BIN` names (to
//! compare two builds on the same stores).

mod common;
use common::{add_commits, args, binary, content_of, import_lines, path_of, run_memoir, stats};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};

/// Copies the directory tree `from` to `to` (which must not exist).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy file");
        }
    }
}

fn run(bin: &Path, store: &Path, args: &[&str]) -> f64 {
    let t = Instant::now();
    run_memoir(bin, store, args);
    t.elapsed().as_secs_f64() * 1e3
}

fn measure(label: &str, target: &str, reps: usize, mut f: impl FnMut(usize) -> f64) {
    let (med, p95) = stats((0..reps).map(&mut f).collect());
    println!("{label:<44} median {med:>8.2} ms   p95 {p95:>8.2} ms   target {target}");
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(p).expect("read dir").flatten() {
        let m = e.metadata().expect("metadata");
        total += if m.is_dir() {
            dir_size(&e.path())
        } else {
            m.len()
        };
    }
    total
}

fn import_store(bin: &Path, dir: &Path, name: &str, n: usize) -> (PathBuf, f64) {
    let store = dir.join(name);
    run(bin, &store, &["new", store.to_str().expect("utf-8")]);
    let file = dir.join(format!("{name}.jsonl"));
    let text = import_lines(n);
    std::fs::write(&file, text).expect("write jsonl");
    let ms = run(bin, &store, &["import", file.to_str().expect("utf-8")]);
    (store, ms)
}

fn main() {
    let argv = args();
    let args: Vec<usize> = argv
        .iter()
        .take(3)
        .map(|a| a.parse().expect("number"))
        .collect();
    let n = args.first().copied().unwrap_or(100_000);
    let commits = args.get(1).copied().unwrap_or(10_000);
    let reps = args.get(2).copied().unwrap_or(15);
    let args_dir = argv.get(3).map(PathBuf::from);
    let bin = std::env::var_os("MEMOIR_BENCH_BIN").map_or_else(binary, PathBuf::from);
    let dir = std::env::temp_dir().join(format!("memoir-cli-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");

    let kept = args_dir.map(|d| d.join(format!("stores-{n}-{commits}")));
    let built = kept.as_ref().is_some_and(|k| k.join("done").exists());
    let big = dir.join("big");
    if built {
        let k = kept.as_ref().expect("kept");
        copy_dir(&k.join("big"), &big);
        copy_dir(&k.join("small"), &dir.join("small"));
        println!("(stores copied from {})", k.display());
    } else {
        let (_, import_ms) = import_store(&bin, &dir, "big", n);
        println!(
            "{:<44} {import_ms:>8.0} ms   target <= 10000 ms at 100k",
            format!("import of {n} memories")
        );
    }

    // History: single-memory commits through the library (setup, not measured).
    if !built {
        let store = Store::open(&big, &OpenOptions::default()).expect("open");
        let repo = Repo::open(store).expect("repo");
        let t = Instant::now();
        add_commits(&repo, n, 0..commits);
        println!(
            "(setup: {commits} commits in {:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
    if !built {
        import_store(&bin, &dir, "small", 5000);
        if let Some(k) = &kept {
            let _ = std::fs::remove_dir_all(k);
            copy_dir(&big, &k.join("big"));
            copy_dir(&dir.join("small"), &k.join("small"));
            std::fs::write(k.join("done"), b"").expect("mark kept stores");
        }
    }
    let size = dir_size(&big);
    println!(
        "store of {n} memories + {commits} commits: {:.1} MB on disk",
        size as f64 / 1e6
    );

    let five: Vec<String> = (0..5).map(|i| path_of(i * 1013 % n.max(1))).collect();
    let hot = path_of(0);
    measure("memoir --version (process start)", "-", reps, |_| {
        let t = Instant::now();
        let o = Command::new(&bin).arg("--version").output().expect("run");
        assert!(o.status.success());
        t.elapsed().as_secs_f64() * 1e3
    });
    measure("status (open, read HEAD, count, close)", "-", reps, |_| {
        run(&bin, &big, &["--json", "status"])
    });
    let mut get_args = vec!["--json", "get"];
    get_args.extend(five.iter().map(String::as_str));
    measure("get of 5 keys", "<= 15 ms", reps, |_| {
        run(&bin, &big, &get_args)
    });
    measure("summarize --depth 1 (big store)", "<= 20 ms", reps, |_| {
        run(&bin, &big, &["--json", "summarize", "--depth", "1"])
    });
    measure("blame (key with history)", "<= 40 ms", reps, |_| {
        run(&bin, &big, &["--json", "blame", &hot])
    });
    measure("diff HEAD~10 HEAD", "<= 25 ms", reps, |_| {
        run(&bin, &big, &["--json", "diff", "HEAD~10", "HEAD"])
    });
    measure("log -n 20", "-", reps, |_| {
        run(&bin, &big, &["--json", "log", "-n", "20"])
    });
    measure("remember -p (durable)", "<= 25 ms", reps, |r| {
        let p = format!("bench.remember.r{r}");
        run(
            &bin,
            &big,
            &[
                "--json",
                "remember",
                "a new memory from the bench",
                "-p",
                &p,
            ],
        )
    });
    measure("search (warm index)", "-", reps, |_| {
        run(&bin, &big, &["--json", "search", "memory 4242"])
    });

    let small = dir.join("small");
    measure(
        "summarize --depth 3 (5,000 memories)",
        "<= 25 ms",
        reps,
        |_| run(&bin, &small, &["--json", "summarize", "--depth", "3"]),
    );

    let thousand = dir.join("thousand");
    run(&bin, &thousand, &["new", thousand.to_str().expect("utf-8")]);
    let t = Instant::now();
    for i in 0..1000 {
        run(
            &bin,
            &thousand,
            &["remember", &content_of(i, 0), "-p", &path_of(i)],
        );
    }
    println!(
        "1,000 separate remember commands: {:.1} s; store {:.2} MB on disk (target <= 15 MB)",
        t.elapsed().as_secs_f64(),
        dir_size(&thousand) as f64 / 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
}
