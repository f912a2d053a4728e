//! A randomized SIGKILL soak through the real binary: `remember`, `import`, `merge`,
//! `forget --purge`, `gc`, `fsck --repair`, `push`, `fetch`, `pull` and `watch scan`, each
//! killed after a random delay. After every kill the next ordinary command succeeds with no
//! manual step and every acknowledged memory reads back with its content, and nothing
//! purged comes back; then the killed command is run again to completion (which
//! acknowledges it). `fsck` is clean at every tenth step and at the end.
//!
//! Each kill falls at a uniform point of the command's run, as long as its last full run
//! took. `MEMOIR_SOAK_KILLS` sets the number of steps (default 30, for CI); the count of
//! steps whose process was really killed (not already done) is printed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Lcg, AUTHOR};

/// The binary the soak runs: a copy made at its start, so that a long soak is not disturbed
/// by a rebuild of the original.
static BINARY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn memoir() -> Command {
    let mut c = Command::new(BINARY.get().expect("copied at the start"));
    c.env_clear()
        .env("MEMOIR_AUTHOR", AUTHOR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs `memoir -s STORE --json ARGS`: the exit code and the JSON.
fn cli(store: &Path, args: &[&str]) -> (i32, Value) {
    let o = memoir()
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = cli(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// Every memory of namespace `default` on the current branch: key -> content.
fn memories(store: &Path) -> BTreeMap<String, String> {
    let o = memoir()
        .arg("-s")
        .arg(store)
        .arg("export")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "export: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["namespace"] == "default")
        .map(|v| {
            (
                v["key"].as_str().unwrap().to_string(),
                v["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// What a step runs, and what it acknowledges once it completes.
struct Step {
    args: Vec<String>,
    /// Memories of `default` it adds (key, content).
    adds: Vec<(String, String)>,
    /// A key it purges.
    purges: Option<String>,
}

#[test]
fn killed_commands_lose_nothing_acknowledged() {
    let steps: usize = std::env::var("MEMOIR_SOAK_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("memoir");
    fs::copy(env!("CARGO_BIN_EXE_memoir"), &copy).unwrap();
    // A child another test thread forks while the copy is being written inherits the
    // writing descriptor for a moment, and the copy cannot be run until it execs
    // ("text file busy"): wait that out.
    let started = Instant::now();
    while let Err(e) = Command::new(&copy).arg("--version").output() {
        assert!(
            e.kind() == std::io::ErrorKind::ExecutableFileBusy && started.elapsed().as_secs() < 10,
            "cannot run the copy of the binary: {e}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    BINARY.set(copy).unwrap();
    let store = dir.path().join("s");
    let o = memoir().arg("new").arg(&store).output().unwrap();
    assert!(o.status.success());
    let remote = dir.path().join("remote");
    let s = store.as_path();
    ok(s, &["remote", "add", "origin", remote.to_str().unwrap()]);
    let watched = dir.path().join("notes.md");
    fs::write(&watched, "# Notes\n\nfirst paragraph\n").unwrap();
    ok(s, &["watch", "add", watched.to_str().unwrap()]);
    ok(s, &["push"]);

    let mut rng = Lcg(0x50a4);
    let mut acked: BTreeMap<String, String> = BTreeMap::new();
    let mut killed = 0;
    let mut lasted: BTreeMap<String, u64> = BTreeMap::new();
    let started = Instant::now();
    for i in 0..steps {
        let step = match rng.next(10) {
            0 => {
                let (k, c) = (format!("soak.fact{i}"), format!("fact number {i}"));
                Step {
                    args: vec!["remember".into(), c.clone(), "-p".into(), k.clone()],
                    adds: vec![(k, c)],
                    purges: None,
                }
            }
            1 => {
                let file = dir.path().join(format!("import{i}.jsonl"));
                let mut lines = String::new();
                let mut adds = Vec::new();
                for j in 0..60 {
                    let (k, c) = (format!("bulk{i}.n{j}"), format!("bulk {i} line {j}"));
                    lines.push_str(
                        &serde_json::json!({"key": k, "namespace": "default", "content": c})
                            .to_string(),
                    );
                    lines.push('\n');
                    adds.push((k, c));
                }
                fs::write(&file, lines).unwrap();
                Step {
                    args: vec!["import".into(), file.to_str().unwrap().into()],
                    adds,
                    purges: None,
                }
            }
            2 => {
                let (k, c) = (format!("side.fact{i}"), format!("side fact {i}"));
                ok(
                    s,
                    &["remember", &c, "-p", &k, "--branch", &format!("side-{i}")],
                );
                Step {
                    args: vec!["merge".into(), format!("side-{i}")],
                    adds: vec![(k, c)],
                    purges: None,
                }
            }
            3 => {
                let Some(key) = acked
                    .keys()
                    .nth(rng.next(acked.len().max(1) as u64) as usize)
                else {
                    continue;
                };
                let key = key.clone();
                let path = key.clone();
                Step {
                    args: vec!["forget".into(), "--purge".into(), path],
                    adds: Vec::new(),
                    purges: Some(key),
                }
            }
            4 => Step {
                args: vec!["gc".into()],
                adds: Vec::new(),
                purges: None,
            },
            5 => Step {
                args: vec!["fsck".into(), "--repair".into()],
                adds: Vec::new(),
                purges: None,
            },
            6 => Step {
                args: vec!["push".into()],
                adds: Vec::new(),
                purges: None,
            },
            7 => Step {
                args: vec!["fetch".into()],
                adds: Vec::new(),
                purges: None,
            },
            8 => Step {
                args: vec!["pull".into()],
                adds: Vec::new(),
                purges: None,
            },
            _ => {
                fs::write(&watched, format!("# Notes\n\nparagraph of step {i}\n")).unwrap();
                Step {
                    args: vec!["watch".into(), "scan".into()],
                    adds: Vec::new(),
                    purges: None,
                }
            }
        };
        let args: Vec<&str> = step.args.iter().map(String::as_str).collect();
        let mut child = memoir()
            .arg("-s")
            .arg(s)
            .arg("--lock-timeout")
            .arg("60")
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A kill point spread over the command's run: its last full run's length.
        let took = lasted.get(&step.args[0]).copied().unwrap_or(20_000);
        std::thread::sleep(Duration::from_micros(rng.next(took.max(1))));
        let done = child.try_wait().unwrap().is_some();
        let _ = child.kill();
        let status = child.wait().unwrap();
        if !done && status.code().is_none() {
            killed += 1;
        }
        // The next ordinary command needs no manual step, and everything acknowledged is
        // there (what the killed step wrote may or may not be).
        ok(s, &["status"]);
        let now = memories(s);
        for (k, c) in acked
            .iter()
            .filter(|(k, _)| step.purges.as_ref() != Some(k))
        {
            assert_eq!(now.get(k), Some(c), "step {i} {args:?}: {k} lost");
        }
        // Run again to completion: now it is acknowledged.
        let t = Instant::now();
        ok(s, &args);
        lasted.insert(step.args[0].clone(), t.elapsed().as_micros() as u64);
        acked.extend(step.adds);
        if let Some(k) = step.purges {
            acked.remove(&k);
            // The remote still holds the old history: a pull would bring the key back, as
            // git's would. Replace it, as a user who purged would.
            ok(s, &["push", "--force"]);
        }
        assert_eq!(memories(s), acked, "step {i} {args:?}");
        if i % 10 == 9 {
            assert_eq!(ok(s, &["fsck"])["clean"], true, "step {i}");
        }
    }
    assert_eq!(ok(s, &["fsck"])["clean"], true);
    eprintln!(
        "soak: {steps} steps, {killed} killed while running, {} memories acknowledged, {:.1} s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        killed * 3 >= steps,
        "only {killed} of {steps} steps were killed while running: the delays are too long"
    );
}
