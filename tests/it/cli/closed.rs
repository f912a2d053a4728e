//! Closed reads through the real binary: every read command answers from the store's last
//! close without the LOCK, never from a state other than a close; writers, garbage
//! collection and killed writers running beside them change nothing about that; a damaged
//! pack index costs time, never a wrong answer, and is rebuilt.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::{cli, cli_with, memoir, new_store};

/// The JSON without members that measure time (they differ between runs).
fn untimed(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.starts_with("timing"));
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = cli(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// Runs with no wait for the LOCK.
fn now(store: &Path, args: &[&str]) -> (i32, Value) {
    cli_with(store, &["--lock-timeout", "0"], args)
}

/// Runs with `--json` after `global`: the exit code and every JSON value printed (one, or
/// one per line for `export`).
fn values(store: &Path, global: &[&str], args: &[&str]) -> (i32, Value) {
    let o = memoir()
        .arg("-s")
        .arg(store)
        .args(global)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let all: Result<Vec<Value>, _> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter()
        .collect();
    let all =
        all.unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap_or(-1), Value::Array(all))
}

/// Holds the store's LOCK the way an open store does, without opening its database.
fn hold_lock(store: &Path) -> File {
    let f = File::options()
        .read(true)
        .write(true)
        .open(store.join("LOCK"))
        .unwrap();
    f.lock().unwrap();
    f
}

/// Every read command the contract has, at HEAD, by branch and at older revisions.
const READS: &[&[&str]] = &[
    &["status"],
    &["get", "a.b", "a.c", "z.z"],
    &["get", "a.b", "--at", "HEAD~1"],
    &["get", "e.x", "--branch", "exp"],
    &["summarize"],
    &["summarize", "--depth", "2"],
    &["summarize", "--keys", "a.*"],
    &["log"],
    &["log", "-n", "2", "exp"],
    &["log", "HEAD~2..HEAD"],
    &["blame", "a.b"],
    &["blame", "a.b", "--lines"],
    &["diff"],
    &["diff", "HEAD~2", "HEAD", "--stat", "--patch"],
    &["diff", "main", "exp"],
    &["export"],
    &["proof", "a.b"],
    &["branch"],
];

fn seeded(dir: &Path) -> PathBuf {
    let store = new_store(dir);
    ok(&store, &["remember", "alpha one", "-p", "a.b"]);
    ok(&store, &["remember", "gamma", "-p", "a.c"]);
    ok(&store, &["remember", "alpha two", "-p", "a.b", "--replace"]);
    ok(
        &store,
        &["remember", "on a branch", "-p", "e.x", "--branch", "exp"],
    );
    store
}

#[test]
fn every_read_answers_without_the_lock_exactly_as_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    // With the store free: the answers as they are (these reads may open it).
    let free: Vec<(i32, Value)> = READS.iter().map(|a| values(&store, &[], a)).collect();
    for (args, (code, v)) in READS.iter().zip(&free) {
        assert!(*code == 0 || args[0] == "get", "{args:?}: {v}");
    }
    let lock = hold_lock(&store);
    for (args, (code, v)) in READS.iter().zip(free) {
        let (held_code, held) = values(&store, &["--lock-timeout", "0"], args);
        assert_eq!(held_code, code, "{args:?} with the LOCK held: {held}");
        assert_eq!(untimed(held), untimed(v), "{args:?}");
    }
    // A write still needs the LOCK.
    let (code, v) = now(&store, &["remember", "delta", "-p", "d.d"]);
    assert_eq!(code, 7, "{v}");
    drop(lock);
    ok(&store, &["remember", "delta", "-p", "d.d"]);
    let _lock = hold_lock(&store);
    let (code, v) = now(&store, &["get", "d.d"]);
    assert_eq!(code, 0, "the write's close is what a closed read sees: {v}");
    assert_eq!(v["items"][0]["value"]["content"], "delta");
}

#[test]
fn a_store_open_elsewhere_is_not_read_at_rest() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    ok(&store, &["get", "a.b"]);
    // A writer holding the store open (its engine opened) voids the head cache.
    let app = memoir::Memoir::open(
        &store,
        memoir::app::Options {
            keep_open: true,
            ..Default::default()
        },
    );
    app.check().unwrap();
    let held = app.open_store_held().unwrap();
    let (code, v) = now(&store, &["get", "a.b"]);
    assert_eq!(
        code, 7,
        "an open store is waited for, never read stale: {v}"
    );
    drop(held);
    app.release();
    let (code, _) = now(&store, &["get", "a.b"]);
    assert_eq!(code, 0);
}

/// Reads in a loop on another thread while `work` runs; each answer must be `expect`.
fn read_while(
    store: &Path,
    args: &[&str],
    expect: impl Fn(&Value) + Send + Sync + 'static,
    work: impl FnOnce(),
) -> usize {
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, stop) = (store.to_path_buf(), stop.clone());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) || n == 0 {
                let (code, v) = cli_with(&store, &["--lock-timeout", "60"], &args);
                assert_eq!(code, 0, "{v}");
                expect(&v);
                n += 1;
            }
            n
        })
    };
    work();
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("the reader saw only right answers")
}

#[test]
fn reads_during_commits_see_only_committed_states_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["remember", "v0", "-p", "c.n", "--replace"]);
    let last = Arc::new(std::sync::Mutex::new(0u32));
    let seen = last.clone();
    let reads = read_while(
        &store,
        &["get", "c.n"],
        move |v| {
            let text = v["items"][0]["value"]["content"]
                .as_str()
                .unwrap()
                .to_string();
            let n: u32 = text.strip_prefix('v').unwrap().parse().unwrap();
            let mut last = seen.lock().unwrap();
            assert!(n >= *last, "went back from v{} to {text}", *last);
            *last = n;
        },
        || {
            for i in 1..=15 {
                ok(
                    &store,
                    &["remember", &format!("v{i}"), "-p", "c.n", "--replace"],
                );
            }
        },
    );
    assert!(reads > 0);
    assert_eq!(
        ok(&store, &["get", "c.n"])["items"][0]["value"]["content"],
        "v15"
    );
}

#[test]
fn reads_during_gc_that_rewrites_packs_stay_right() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let expect = |v: &Value| {
        assert_eq!(v["items"][0]["value"]["content"], "alpha two", "{v}");
        assert_eq!(v["items"][1]["value"]["content"], "gamma", "{v}");
    };
    let reads = read_while(&store, &["get", "a.b", "a.c"], expect, || {
        for round in 0..4 {
            let b = format!("junk{round}");
            for i in 0..5 {
                ok(
                    &store,
                    &[
                        "remember",
                        &format!("junk {round} {i}"),
                        "-p",
                        &format!("j.k{i}"),
                        "--branch",
                        &b,
                    ],
                );
            }
            ok(&store, &["branch", "-D", &b]);
            let gc = ok(&store, &["gc"]);
            assert!(gc["objects_removed"].as_u64().unwrap() > 0, "{gc}");
        }
    });
    assert!(reads > 0);
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
}

#[test]
fn killed_writers_never_leave_a_read_a_torn_or_stale_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["remember", "v0", "-p", "c.n", "--replace"]);
    let mut acknowledged = 0u32;
    for i in 1..=12u32 {
        let mut child = memoir()
            .arg("-s")
            .arg(&store)
            .args(["remember", &format!("v{i}"), "-p", "c.n", "--replace"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(u64::from(i) * 1500));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            acknowledged = i;
        }
        // The first read after a kill opens the store (its head cache is void); the next
        // is closed. Both see the same commit, at least the last acknowledged one.
        let first = ok(&store, &["get", "c.n"]);
        let _lock = hold_lock(&store);
        let (code, second) = now(&store, &["get", "c.n"]);
        assert_eq!(code, 0, "{second}");
        assert_eq!(untimed(first.clone()), untimed(second));
        let n: u32 = first["items"][0]["value"]["content"].as_str().unwrap()[1..]
            .parse()
            .unwrap();
        assert!(
            n >= acknowledged && n <= i,
            "read v{n} after v{acknowledged} was acknowledged"
        );
        acknowledged = n;
    }
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
}

/// Imports `n` memories of about 200 bytes each.
fn import(store: &Path, n: usize) {
    let file = store.with_extension("jsonl");
    let mut text = String::new();
    for i in 0..n {
        let content = format!("memory {i}: {}", "the agent learned something. ".repeat(6));
        text.push_str(
            &serde_json::json!({"key": format!("k{}.m{i}", i % 50), "content": content})
                .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&file, text).unwrap();
    ok(store, &["import", file.to_str().unwrap()]);
}

#[test]
fn a_damaged_pack_index_costs_time_not_answers_and_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    import(&store, 8000);
    let idx = store.join("packs").join("pack-00000001.idx");
    let good = std::fs::read(&idx).expect("a pack tail past 1 MiB gets an index file");
    let want = ok(&store, &["get", "k7.m7", "k3.m4003"]);
    // Flip bytes among the ids and the places.
    let mut bad = good.clone();
    for at in [1100, good.len() / 2, good.len() - 40] {
        bad[at] ^= 0x5a;
    }
    std::fs::write(&idx, &bad).unwrap();
    let got = ok(&store, &["get", "k7.m7", "k3.m4003"]);
    assert_eq!(untimed(got), untimed(want.clone()));
    // Reading every memory exercises every place the flips could touch.
    let (code, all) = values(&store, &[], &["export"]);
    assert_eq!((code, all.as_array().unwrap().len()), (0, 8000));
    assert_eq!(std::fs::read(&idx).unwrap(), good, "rebuilt as it was");
    let _lock = hold_lock(&store);
    let (code, v) = now(&store, &["get", "k7.m7", "k3.m4003"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(untimed(v), untimed(want));
    // A missing index: the pack's records are read in order instead.
    drop(_lock);
    std::fs::remove_file(&idx).unwrap();
    let _lock = hold_lock(&store);
    let (code, v) = now(&store, &["get", "k7.m7"]);
    assert_eq!(
        (code, &v["items"][0]["found"]),
        (0, &Value::Bool(true)),
        "{v}"
    );
}

/// Every block of the file in turn damaged: each closed search still gives the answer of the
/// intact index. A damaged block the searches read makes them answer again from an index
/// rebuilt from the store, which is written again as it was; one they never read is left.
#[test]
fn a_damaged_search_index_block_costs_time_not_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    import(&store, 3000);
    let queries = [
        ["search", "memory 1234", "-k", "5"],
        ["search", "agent", "-k", "3"],
    ];
    let want: Vec<Value> = queries.iter().map(|q| untimed(ok(&store, q))).collect();
    let idx = store.join("cache").join("lexical.idx");
    let good = std::fs::read(&idx).expect("search writes the index");
    assert!(good.len() > 3 * 65536, "several blocks: {}", good.len());
    // One flip in each block, past the header, and one in the block checksums.
    let mut places: Vec<usize> = (0..good.len() / 65536).map(|b| b * 65536 + 5000).collect();
    places.push(good.len() - 20);
    let mut rebuilt = 0;
    for &at in &places {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(&idx, &bad).unwrap();
        for (q, w) in queries.iter().zip(&want) {
            assert_eq!(&untimed(ok(&store, q)), w, "flip at {at}");
        }
        let now = std::fs::read(&idx).unwrap();
        assert!(
            now == good || now == bad,
            "flip at {at}: the file is the old or the rebuilt one"
        );
        rebuilt += usize::from(now == good);
    }
    // The header's flip (the block checksums) is found on opening; the postings' and the
    // hits' on reading.
    assert!(rebuilt >= 2, "{rebuilt} of {} rebuilt", places.len());
}
