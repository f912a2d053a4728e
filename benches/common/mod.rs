//! Shared by the benchmark programs run by name (each uses some of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memoir::key::Key;
use memoir::memory::{Entry, Record};
use memoir::prolly::Edit;
use memoir::repo::{Repo, Signature};

/// Runs `bin -s store args` as an agent would (bench author, no `MEMOIR_STORE`), and
/// panics with its stderr unless it succeeds.
pub fn run_memoir(bin: &Path, store: &Path, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(bin)
        .arg("-s")
        .arg(store)
        .args(args)
        .env("MEMOIR_AUTHOR", "bench <bench@example.org>")
        .env_remove("MEMOIR_STORE")
        .output()
        .expect("run memoir");
    assert!(
        out.status.success(),
        "memoir {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `memoir` binary cargo built for this benchmark (with `cargo bench`, the release one).
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_memoir"))
}

/// The program's arguments, without the `--bench` that `cargo bench` appends.
pub fn args() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect()
}

/// Median and 95th percentile of `v`.
pub fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 95 / 100).min(v.len() - 1)])
}

/// The synthetic path of memory `i`: three levels, 37 × 23 groups.
pub fn path_of(i: usize) -> String {
    format!("topic{:02}.area{:02}.item{i:06}", i % 37, (i / 37) % 23)
}

/// The content of memory `i` at `version`: 200 bytes.
pub fn content_of(i: usize, version: usize) -> String {
    let mut s = format!("memory {i} version {version}: ");
    while s.len() < 200 {
        s.push_str("the agent learned something worth keeping. ");
    }
    s.truncate(200);
    s
}

/// `memoir import` lines for memories `0..n`.
pub fn import_lines(n: usize) -> String {
    let mut text = String::with_capacity(n * 300);
    for i in 0..n {
        text.push_str(
            &serde_json::json!({"key": path_of(i), "namespace": "default",
                "content": content_of(i, 0), "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string(),
        );
        text.push('\n');
    }
    text
}

/// Adds commits `commits` of one memory each to `main` (commit `c` rewrites memory
/// `c * 7919 % n`, a second after 2026-01-01 plus `c`).
pub fn add_commits(repo: &Repo, n: usize, commits: std::ops::Range<usize>) {
    for c in commits {
        let i = (c * 7919) % n.max(1);
        let key = Key::new("default", &path_of(i)).expect("key");
        // Written by one of four agents in turn, as agents' hooks write.
        let entry = Entry {
            actor: Some(format!("agent-{}", c % 4)),
            ..Entry::new(&content_of(i, c + 1), 1.0, c as f64)
        };
        let rec = Record::new(&key, entry, vec![]);
        let v = repo
            .objects()
            .write(&rec.to_blob().expect("record"))
            .expect("write");
        let sig = Signature::new("bench", 1_767_225_600 + c as i64);
        repo.commit(
            "main",
            vec![Edit::Put(key.encode(), v)],
            &sig,
            &format!("Store {} in default", path_of(i)),
        )
        .expect("commit");
    }
}
