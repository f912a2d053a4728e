//! Reliability of the real binary: concurrent writers lose nothing, and a writer (import,
//! multi-key remember, merge) killed with SIGKILL at any moment leaves a store that opens,
//! passes fsck, keeps every acknowledged write and shows nothing half-written.
//!
//! `MEMOIR_CRASH_ITERATIONS` raises the number of kills (default 24 in CI).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::Lcg;

fn memoir_waiting(store: &Path, lock_timeout: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .env("MEMOIR_NOW", "1767225600")
        .arg("-s")
        .arg(store)
        .arg("--lock-timeout")
        .arg(lock_timeout)
        .stdin(Stdio::null());
    c
}

fn memoir(store: &Path) -> Command {
    memoir_waiting(store, "60")
}

fn run(store: &Path, args: &[&str]) -> Output {
    memoir(store).args(args).output().unwrap()
}

fn json(store: &Path, args: &[&str]) -> Value {
    let o = memoir(store).arg("--json").args(args).output().unwrap();
    assert!(
        o.status.success(),
        "memoir {args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn new_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let o = run(&store, &["new", store.to_str().unwrap()]);
    assert!(o.status.success());
    (dir, store)
}

/// Every key on `branch` (or HEAD), from `export`.
fn keys(store: &Path, branch: Option<&str>) -> BTreeSet<String> {
    let mut args = vec!["export"];
    if let Some(b) = branch {
        args.extend(["--branch", b]);
    }
    let o = run(store, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            format!(
                "{}:{}",
                v["namespace"].as_str().unwrap(),
                v["key"].as_str().unwrap()
            )
        })
        .collect()
}

fn commits_on(store: &Path, branch: &str) -> usize {
    let s = memoir::store::Store::open(store, &memoir::store::OpenOptions::default()).unwrap();
    let repo = memoir::repo::Repo::open(s).unwrap();
    let mut n = 0;
    let mut id = Some(repo.branch_tip(branch).unwrap());
    while let Some(c) = id {
        n += 1;
        id = repo.read_commit(&c).unwrap().parents.first().copied();
    }
    n
}

#[test]
fn concurrent_writers_lose_nothing() {
    let (_d, store) = new_store();
    let writers = 6;
    let per = 4;
    let children: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                let branch = if w % 2 == 0 {
                    "main".to_string()
                } else {
                    format!("agent-{w}")
                };
                for i in 0..per {
                    let key = format!("w{w}.item{i}");
                    let o = run(
                        &store,
                        &[
                            "remember",
                            &format!("fact {i} from writer {w}"),
                            "-p",
                            &key,
                            "--branch",
                            &branch,
                        ],
                    );
                    assert!(
                        o.status.success(),
                        "writer {w}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                // Readers run beside the writers.
                let o = run(&store, &["summarize", "--depth", "1"]);
                assert!(o.status.success());
            })
        })
        .collect();
    for c in children {
        c.join().unwrap();
    }
    let main_keys = keys(&store, None);
    let mut want = BTreeSet::new();
    for w in (0..writers).step_by(2) {
        for i in 0..per {
            want.insert(format!("default:w{w}.item{i}"));
        }
    }
    assert_eq!(main_keys, want);
    assert_eq!(commits_on(&store, "main"), 1 + (writers / 2) * per);
    // A branch starts from HEAD at its first write, then holds its writer's keys.
    for w in (1..writers).step_by(2) {
        let b = format!("agent-{w}");
        let got = keys(&store, Some(&b));
        let own: BTreeSet<String> = (0..per).map(|i| format!("default:w{w}.item{i}")).collect();
        assert!(own.is_subset(&got), "branch {b}: {got:?}");
        assert!(
            got.difference(&own).all(|k| main_keys.contains(k)),
            "branch {b}: {got:?}"
        );
        let inherited = got.len() - per;
        assert_eq!(commits_on(&store, &b), 1 + inherited + per, "branch {b}");
    }
}

/// Every key on HEAD of `store`, once fsck has found it sound after the kill of iteration
/// `it`.
fn sound_keys(store: &Path, it: usize) -> BTreeSet<String> {
    let fsck = memoir(store).args(["--json", "fsck"]).output().unwrap();
    assert!(
        fsck.status.success(),
        "iteration {it}: fsck after a kill: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    keys(store, None)
}

#[test]
fn killed_writers_leave_a_consistent_store() {
    let iterations: usize = std::env::var("MEMOIR_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let (dir, store) = new_store();
    let mut rng = Lcg(0x5eed);
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    for it in 0..iterations {
        // A batch that must land whole or not at all.
        let batch = 50 + rng.next(150) as usize;
        let file = dir.path().join(format!("batch{it}.jsonl"));
        let lines: Vec<String> = (0..batch)
            .map(|i| {
                serde_json::json!({"key": format!("batch{it}.item{i}"), "namespace": "default",
                    "content": format!("item {i} of batch {it}"), "confidence": 1.0,
                    "timestamp": 1767225600.0})
                .to_string()
            })
            .collect();
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        // Kill one of: an import, a multi-key remember, a merge of a side branch.
        let kind = it % 3;
        let side_keys: Vec<String> = (0..3).map(|j| format!("multi{it}.k{j}")).collect();
        let mut cmd = memoir(&store);
        match kind {
            0 => {
                cmd.args(["import", file.to_str().unwrap()]);
            }
            1 => {
                cmd.args(["remember", &format!("fact {it}")]);
                for k in &side_keys {
                    cmd.args(["-p", k]);
                }
            }
            _ => {
                let b = format!("side{it}");
                let o = run(
                    &store,
                    &[
                        "remember",
                        "side fact",
                        "-p",
                        &format!("side{it}.k"),
                        "--branch",
                        &b,
                    ],
                );
                assert!(o.status.success());
                let o = run(
                    &store,
                    &["remember", "main fact", "-p", &format!("main{it}.k")],
                );
                assert!(o.status.success());
                acknowledged.insert(format!("default:main{it}.k"));
                cmd.args(["merge", &b]);
            }
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.next(60)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        // The store opens, is sound, and shows each command whole or not at all.
        let present = sound_keys(&store, it);
        let (prefix, whole) = match kind {
            0 => (format!("default:batch{it}."), batch),
            1 => (format!("default:multi{it}."), side_keys.len()),
            _ => (format!("default:side{it}."), 1),
        };
        let landed = present.iter().filter(|k| k.starts_with(&prefix)).count();
        assert!(
            landed == 0 || landed == whole,
            "iteration {it}: {landed} of {whole} keys of one command are visible"
        );
        if status.success() {
            assert_eq!(landed, whole, "a successful command is fully visible");
        }
        for k in &acknowledged {
            assert!(
                present.contains(k),
                "iteration {it}: acknowledged {k} was lost"
            );
        }
        // An uninterrupted write between kills, which must survive every later kill.
        let key = format!("ack.k{it}");
        let o = run(
            &store,
            &["remember", &format!("acknowledged {it}"), "-p", &key],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        acknowledged.insert(format!("default:{key}"));
        // The lock is free: a zero-timeout command gets in.
        let o = memoir_waiting(&store, "0").arg("status").output().unwrap();
        assert!(
            o.status.success(),
            "lock left held after a kill: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let st = json(&store, &["status"]);
    assert!(st["memory_count"].as_u64().unwrap() >= iterations as u64);
}

/// Imports large enough that each rewrites its pack's index file (a tail past 1 MiB),
/// killed at random moments: the store opens, passes fsck, keeps every acknowledged write
/// and shows each import whole or not at all.
#[test]
fn killed_imports_across_index_spills_lose_nothing() {
    let (dir, store) = new_store();
    let mut rng = Lcg(0x0bad_5eed);
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let batch = 4500;
    let mut interrupted = 0;
    for it in 0..12 {
        let file = dir.path().join(format!("spill{it}.jsonl"));
        let lines: Vec<String> = (0..batch)
            .map(|i| {
                serde_json::json!({"key": format!("spill{it}.g{}.m{i}", i % 30),
                    "namespace": "default", "content": format!("spilled item {i} of {it}"),
                    "confidence": 1.0, "timestamp": 1767225600.0})
                .to_string()
            })
            .collect();
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        // Every other import runs to the end, so later kills meet index files to rewrite.
        let kill = it % 2 == 1;
        let mut child = memoir(&store)
            .args(["import", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if kill {
            std::thread::sleep(Duration::from_millis(rng.next(200)));
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        assert!(kill || status.success(), "iteration {it}: import failed");
        interrupted += usize::from(!status.success());
        let present = sound_keys(&store, it);
        let prefix = format!("default:spill{it}.");
        let landed = present.iter().filter(|k| k.starts_with(&prefix)).count();
        assert!(
            landed == 0 || landed == batch,
            "iteration {it}: {landed} of {batch} keys of one import are visible"
        );
        if status.success() {
            assert_eq!(landed, batch, "a successful import is fully visible");
            acknowledged.extend(present.into_iter().filter(|k| k.starts_with(&prefix)));
        } else {
            for k in &acknowledged {
                assert!(
                    present.contains(k),
                    "iteration {it}: acknowledged {k} was lost"
                );
            }
        }
    }
    assert!(
        store.join("packs").join("pack-00000001.idx").is_file(),
        "the imports wrote the pack's index file"
    );
    eprintln!("{interrupted} of 6 killed imports were cut short");
}
