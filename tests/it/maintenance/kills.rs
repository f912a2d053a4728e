//! `forget --purge` and `gc` killed with SIGKILL at random points, through the real binary:
//! the store stays sound and searchable right after the kill, and a re-run finishes the job:
//! after a purge no file of the store (pack, cache or sled file) holds the erased content, nor
//! what earlier collections left in packs below their dead share; after a gc no file outside
//! the packs does.
//!
//! `MEMOIR_CRASH_ITERATIONS` raises the number of kills (default 16).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::caches::files_holding;
use crate::common::Lcg;

fn memoir(store: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .arg("-s")
        .arg(store)
        .arg("--lock-timeout")
        .arg("60")
        .stdin(Stdio::null());
    c
}

/// Runs with `--json`; the exit code and the JSON.
fn json(store: &Path, args: &[&str]) -> (i32, Value) {
    let o = memoir(store).arg("--json").args(args).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {} {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = json(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// The store right after a kill: sound (caches may be stale, never fatal), and search and
/// recall answer from it.
fn usable_after_kill(store: &Path, it: usize) {
    let (code, v) = json(store, &["fsck"]);
    assert_eq!(code, 0, "iteration {it}: fsck after a kill: {v}");
    let hits = ok(store, &["search", "publicfact"]);
    assert!(
        hits["count"].as_u64().unwrap() > 0,
        "iteration {it}: {hits}"
    );
    let rc = ok(store, &["recall", "publicfact"]);
    assert!(
        !rc["memories"].as_array().unwrap().is_empty(),
        "iteration {it}"
    );
}

/// Nothing of `secret` in any file (outside `packs/` unless `packs_too`); sound with no
/// cache finding; search finds public facts and not the secret.
fn erased(store: &Path, secret: &str, packs_too: bool, it: usize) {
    let holding: Vec<std::path::PathBuf> = files_holding(store, secret.as_bytes())
        .into_iter()
        .filter(|f| packs_too || !f.starts_with(store.join("packs")))
        .collect();
    assert_eq!(
        holding,
        Vec::<std::path::PathBuf>::new(),
        "iteration {it}: files still hold {secret}"
    );
    let v = ok(store, &["fsck"]);
    assert_eq!(v["clean"], true, "iteration {it}: {v}");
    assert_eq!(v["caches"], serde_json::json!([]), "iteration {it}: {v}");
    assert_eq!(ok(store, &["search", secret])["count"], 0, "iteration {it}");
    assert!(
        ok(store, &["search", "publicfact"])["count"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn killed_purges_and_collections_are_finished_by_a_rerun() {
    let iterations: usize = std::env::var("MEMOIR_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let o = memoir(&store)
        .args(["new", store.to_str().unwrap()])
        .output();
    assert!(o.unwrap().status.success());
    // Enough records that rewriting the packs takes a while.
    let lines: Vec<String> = (0..400)
        .map(|i| {
            serde_json::json!({"key": format!("pub.item{i:03}"), "namespace": "default",
                "content": format!("publicfact number {i}")})
            .to_string()
        })
        .collect();
    let file = dir.path().join("public.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ok(&store, &["import", file.to_str().unwrap()]);

    let mut rng = Lcg(0x9a7e);
    for it in 0..iterations {
        let secret = format!("zqsecret{it:04}xv");
        let key = format!("vault.key{it}");
        let side = format!("side{it}");
        // A collection (odd iterations) erases a deleted branch; a purge erases a key from
        // main and a branch, after a plain forget every third time.
        let purge = it % 2 == 0;
        if purge {
            ok(
                &store,
                &["remember", &format!("{secret} on main"), "-p", &key],
            );
        }
        ok(
            &store,
            &[
                "remember",
                &format!("{secret} on a branch"),
                "-p",
                &key,
                "--branch",
                &side,
            ],
        );
        // Fill the caches with it: the index at the branch, the commit graph.
        ok(&store, &["search", &secret, "--branch", &side]);
        ok(&store, &["log", &side]);
        if purge {
            ok(&store, &["search", &secret]);
            if it % 3 == 0 {
                ok(&store, &["forget", &key]);
            }
        } else {
            ok(&store, &["branch", "-D", &side]);
        }
        let args: Vec<&str> = if purge {
            vec!["forget", "--purge", &key]
        } else {
            vec!["gc"]
        };
        let mut child = memoir(&store)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.next(90)));
        let _ = child.kill();
        child.wait().unwrap();

        usable_after_kill(&store, it);
        // The re-run finishes the job.
        let v = ok(&store, &args);
        if purge {
            assert_eq!(v["success"], true);
            let (code, v) = json(&store, &["get", &key]);
            assert_eq!(
                (code, &v["items"][0]["found"]),
                (2, &Value::Bool(false)),
                "{v}"
            );
            let blame = ok(&store, &["blame", &key]);
            assert_eq!(blame["entries"], serde_json::json!([]), "iteration {it}");
        }
        erased(&store, &secret, purge, it);
        if purge {
            // The purge also erased what collections left in packs below their dead share.
            for earlier in (0..it).filter(|e| e % 2 == 1) {
                erased(&store, &format!("zqsecret{earlier:04}xv"), true, it);
            }
        }
        // Side branches of purges stay, without the key.
        if purge {
            let (code, v) = json(&store, &["get", &key, "--branch", &side]);
            assert_eq!(
                (code, &v["items"][0]["found"]),
                (2, &Value::Bool(false)),
                "{v}"
            );
            ok(&store, &["branch", "-D", &side]);
        }
    }
    let st = ok(&store, &["status"]);
    assert_eq!(st["memory_count"], 400);
}
