//! The `memoir` binary, run for real on temporary stores: JSON shapes of COMPAT.md, exit
//! codes, determinism, and human output safety.

mod branch;
mod closed;
mod full_disk;
mod graph;
mod hints;
mod history;
mod hosts;
mod maintenance;
mod output;
mod read;
mod repair;
mod settings;
mod shell;
mod store;
mod watch;
mod write;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Out, AUTHOR};
use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};

const NOW: &str = "1767225600";

fn cmd(envs: &[(&str, &str)], args: &[&str], stdin: Option<&str>) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_NOW", NOW)
        .env("MEMOIR_AUTHOR", AUTHOR)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    for (k, v) in envs {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("run memoir");
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    Out::from(o)
}

/// A temporary store made with `memoir new`.
struct Fixture {
    _dir: tempfile::TempDir,
    store: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let o = cmd(&[], &["new", store.to_str().unwrap()], None);
        assert_eq!(o.code, 0, "{}", o.stderr);
        Fixture { _dir: dir, store }
    }

    fn s(&self) -> &str {
        self.store.to_str().unwrap()
    }

    /// `memoir -s STORE [--json] args...`
    fn run(&self, json: bool, args: &[&str]) -> Out {
        self.run_env(&[], json, args)
    }

    fn run_env(&self, envs: &[(&str, &str)], json: bool, args: &[&str]) -> Out {
        let mut all = vec!["-s", self.s()];
        if json {
            all.push("--json");
        }
        all.extend_from_slice(args);
        cmd(envs, &all, None)
    }

    fn ok(&self, args: &[&str]) -> Value {
        let o = self.run(true, args);
        assert_eq!(o.code, 0, "{args:?}: {} {}", o.stdout, o.stderr);
        o.json()
    }

    fn repo(&self) -> Repo {
        Repo::open(Store::open(&self.store, &OpenOptions::default()).unwrap()).unwrap()
    }

    fn commit_count(&self) -> usize {
        let repo = self.repo();
        let mut n = 0;
        let mut at = Some(repo.head_commit().unwrap());
        while let Some(id) = at {
            n += 1;
            at = repo.read_commit(&id).unwrap().parents.first().copied();
        }
        n
    }
}

fn keys_of(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn assert_error(o: &Out, code: i32) -> String {
    assert_eq!(o.code, code, "stdout {:?} stderr {:?}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(keys_of(&v), set(&["success", "error", "code"]));
    assert_eq!(v["success"], false);
    assert_eq!(v["code"], code);
    v["error"].as_str().unwrap().to_string()
}
