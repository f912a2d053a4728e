//! `new` killed at any moment never leaves a directory that `new` or `mcp --init` refuse:
//! a half-made store (LOCK, db/, packs/ without FORMAT, or FORMAT without a first commit) is
//! finished by the next create.

use std::process::{Command, Stdio};
use std::time::Duration;

use rand::{Rng, SeedableRng};

fn memoir(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .env("MEMOIR_NOW", "1767225600")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_killed_new_is_finished_by_the_next_create() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut half_made = 0;
    for round in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s");
        let s = store.to_str().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_memoir"))
            .env_clear()
            .env("MEMOIR_NOW", "1767225600")
            .args(["new", s])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.gen_range(0..15_000)));
        let _ = child.kill();
        let _ = child.wait();
        if store.exists() && !memoir(&["-s", s, "status"]).status.success() {
            half_made += 1;
        }
        // Every other round the host's way (`mcp --init`), else `new`.
        let out = if round % 2 == 0 {
            memoir(&["new", s])
        } else {
            memoir(&["mcp", "--store", s, "--init"])
        };
        let ok = memoir(&["-s", s, "--json", "status"]);
        let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
        assert_eq!(
            v["initialized"],
            true,
            "round {round}: {} / {}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&ok.stderr)
        );
        assert_eq!(v["commit_count"], 1, "round {round}");
        // A finished store is a store: a second `new` refuses it.
        assert_eq!(memoir(&["new", s]).status.code(), Some(1), "round {round}");
    }
    eprintln!("{half_made} of 40 kills left a half-made store");
}

/// The half-made states, made directly: what a kill leaves at each step of `new`.
#[test]
fn each_half_made_state_is_finished() {
    for leftovers in [
        &["LOCK"][..],
        &["LOCK", "db"],
        &["LOCK", "db", "packs"],
        &["LOCK", "db", "packs", "cache"],
        &["LOCK", "db", "packs", "FORMAT.tmp.4242.0"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s");
        std::fs::create_dir(&store).unwrap();
        for l in leftovers {
            if *l == "LOCK" || l.starts_with("FORMAT.tmp.") {
                std::fs::write(store.join(l), b"").unwrap();
            } else {
                std::fs::create_dir(store.join(l)).unwrap();
                std::fs::write(store.join(l).join("junk"), b"x").unwrap();
            }
        }
        let out = memoir(&["new", store.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{leftovers:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A directory with anything else is still refused and untouched.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    std::fs::create_dir(&store).unwrap();
    std::fs::write(store.join("LOCK"), b"").unwrap();
    std::fs::write(store.join("notes.txt"), b"mine").unwrap();
    assert_eq!(
        memoir(&["new", store.to_str().unwrap()]).status.code(),
        Some(1)
    );
    assert_eq!(std::fs::read(store.join("notes.txt")).unwrap(), b"mine");
}
