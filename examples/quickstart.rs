//! A guided tour of memoir on a throwaway store: remember, summarize, get, search, blame,
//! diff, branch and merge, and reading the past with `--at`, printed as a user sees them.
//!
//! `cargo build --release && cargo run --release --example quickstart`
//! (the tour runs the `memoir` binary built next to it; `MEMOIR_BIN` overrides the path).

use std::path::{Path, PathBuf};
use std::process::Command;

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("MEMOIR_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("own path");
    // target/<profile>/examples/quickstart -> target/<profile>/memoir
    let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = profile_dir.join("memoir");
    if !bin.exists() {
        eprintln!(
            "memoir binary not found at {}; build it first: cargo build --release",
            bin.display()
        );
        std::process::exit(1);
    }
    bin
}

struct Tour {
    bin: PathBuf,
    store: PathBuf,
    clock: u64,
}

impl Tour {
    fn run(&mut self, args: &[&str]) -> String {
        self.clock += 3600;
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') || a.contains('*') {
                    format!("'{a}'")
                } else {
                    a.to_string()
                }
            })
            .collect();
        println!("$ memoir {}", shown.join(" "));
        let out = Command::new(&self.bin)
            .arg("-s")
            .arg(&self.store)
            .args(args)
            .env("MEMOIR_NOW", self.clock.to_string())
            .env("MEMOIR_AUTHOR", "Ada <ada@example.org>")
            .env("NO_COLOR", "1")
            .env_remove("MEMOIR_STORE")
            .env_remove("MEMOIR_JSON")
            .env_remove("MEMOIR_BRANCH")
            .output()
            .expect("run memoir");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        print!("{stdout}");
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            eprintln!(
                "the tour stopped: `memoir {}` exited with {}",
                shown.join(" "),
                out.status.code().unwrap_or(-1)
            );
            std::process::exit(1);
        }
        println!();
        stdout
    }

    fn say(&self, text: &str) {
        println!("# {text}");
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("memoir-tour-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = dir.join("memory");
    let mut t = Tour {
        bin: binary(),
        store: store.clone(),
        clock: 1_767_225_600, // 2026-01-01
    };
    t.say("A store is a directory. Every change is a commit.");
    t.run(&["new", store.to_str().expect("utf-8 path")]);
    t.say("Remember facts under dot-path keys (namespace 'default' unless given).");
    t.run(&[
        "remember",
        "Prefers pytest with property-based tests",
        "-p",
        "preferences.coding.testing",
    ]);
    t.run(&[
        "remember",
        "Production runs PostgreSQL 16",
        "-p",
        "infra.database",
    ]);
    t.run(&[
        "remember",
        "Deploys are blue-green via ArgoCD",
        "-p",
        "infra.deploy",
        "--source",
        "standup",
    ]);
    t.say("The cheap recall path: a summary, then one batched get.");
    t.run(&["summarize", "--depth", "1"]);
    t.run(&["summarize", "--keys", "infra.*"]);
    t.run(&["get", "infra.database", "preferences.coding.testing"]);
    t.say("Lexical search needs no model: identifiers split, words stem, typos match.");
    t.run(&["search", "postgres"]);
    t.say("Memories grow: a new fact about a key is appended as a facet.");
    t.run(&[
        "remember",
        "Migrating to PostgreSQL 17 in March",
        "-p",
        "infra.database",
        "--merge-policy",
        "append",
    ]);
    t.say("Who taught me this, and when?");
    t.run(&["blame", "infra.database"]);
    t.run(&["log", "-n", "3"]);
    t.run(&["diff", "HEAD~1", "HEAD", "--patch"]);
    t.say("Read the past without moving anything.");
    t.run(&["get", "infra.database", "--at", "HEAD~1"]);
    t.say("An agent experiments on its own branch, then merges back.");
    t.run(&[
        "remember",
        "Try Playwright for UI tests",
        "-p",
        "preferences.coding.ui",
        "--branch",
        "agent-1",
    ]);
    t.run(&[
        "remember",
        "CI must stay under ten minutes",
        "-p",
        "preferences.ci.duration",
    ]);
    t.run(&["branch"]);
    t.run(&["merge", "agent-1", "--into", "main"]);
    t.run(&["log", "-n", "1"]);
    t.run(&["summarize", "--depth", "2"]);
    t.run(&["fsck"]);
    let _ = std::fs::remove_dir_all(&dir);
    println!("# The tour's store was removed. Start your own with: memoir new ./memory");
}
