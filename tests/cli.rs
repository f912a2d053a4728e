//! The `memoir` binary, run for real on temporary stores: JSON shapes of COMPAT.md, exit
//! codes, determinism, and human output safety.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;

use common::{Out, AUTHOR};
use memoir::key::Key;
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

#[test]
fn new_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let o = cmd(&[], &["--json", "new", path.to_str().unwrap()], None);
    assert_eq!(o.code, 0);
    let v = o.json();
    assert_eq!(keys_of(&v), set(&["success", "message", "path"]));
    let abs = path.canonicalize().unwrap().display().to_string();
    assert_eq!(v["path"], abs.as_str());
    assert_eq!(v["message"], format!("Created store at {abs}").as_str());

    // Again: already a store. A non-empty directory that is not a store: untouched.
    assert_error(
        &cmd(&[], &["--json", "new", path.to_str().unwrap()], None),
        1,
    );
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "hi").unwrap();
    assert_error(
        &cmd(&[], &["--json", "new", other.to_str().unwrap()], None),
        1,
    );
    let names: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);

    let o = cmd(
        &[],
        &["-s", path.to_str().unwrap(), "--json", "status"],
        None,
    );
    let v = o.json();
    for f in [
        "path",
        "exists",
        "initialized",
        "branch",
        "commit_count",
        "memory_count",
        "namespaces",
    ] {
        assert!(v.get(f).is_some(), "status lacks {f}");
    }
    assert_eq!(v["branch"], "main");
    assert_eq!(v["commit_count"], 1);
    assert_eq!(v["memory_count"], 0);
    assert_eq!(v["namespaces"], serde_json::json!([]));
    let repo = Repo::open(Store::open(&path, &OpenOptions::default()).unwrap()).unwrap();
    let first = repo.read_commit(&repo.head_commit().unwrap()).unwrap();
    assert_eq!(first.author, AUTHOR);
    assert_eq!(first.timestamp, 1767225600);
}

#[test]
fn not_a_store_is_exit_3_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nothing");
    for args in [
        &["status"][..],
        &["get", "a.b"],
        &["remember", "x", "-p", "a"],
        &["summarize"],
    ] {
        let mut all = vec!["-s", p.to_str().unwrap(), "--json"];
        all.extend_from_slice(args);
        assert_error(&cmd(&[], &all, None), 3);
    }
    assert!(!p.exists());
    // MEMOIR_STORE is honoured, and the current directory is the default.
    let o = cmd(
        &[
            ("MEMOIR_STORE", dir.path().to_str().unwrap()),
            ("MEMOIR_JSON", "1"),
        ],
        &["status"],
        None,
    );
    assert_error(&o, 3);
    let o = cmd(&[], &["status"], None);
    assert_eq!(o.code, 3);
    assert!(
        o.stdout.is_empty() && o.stderr.starts_with("✗ "),
        "{:?}",
        o.stderr
    );
}

#[test]
fn remember_shape_and_commit() {
    let f = Fixture::new();
    let v = f.ok(&[
        "remember",
        "prefers pytest",
        "-p",
        "preferences.coding.testing",
        "-p",
        "tools.test",
        "-p",
        "preferences.coding.testing",
        "--actor",
        "agent-1",
        "--source",
        "cli",
    ]);
    assert_eq!(
        keys_of(&v),
        set(&[
            "success",
            "key",
            "keys",
            "full_key",
            "full_keys",
            "namespace",
            "content",
            "confidence",
            "reasoning",
            "commit_hash",
            "commit_date",
            "conflicts",
            "timings"
        ])
    );
    assert_eq!(v["success"], true);
    assert_eq!(v["key"], "preferences.coding.testing");
    assert_eq!(
        v["keys"],
        serde_json::json!(["preferences.coding.testing", "tools.test"])
    );
    assert_eq!(v["full_key"], "default:preferences.coding.testing");
    assert_eq!(
        v["full_keys"],
        serde_json::json!(["default:preferences.coding.testing", "default:tools.test"])
    );
    assert_eq!(v["namespace"], "default");
    assert_eq!(v["content"], "prefers pytest");
    assert_eq!(v["confidence"], 1.0);
    assert_eq!(v["conflicts"], serde_json::json!([]));
    assert_eq!(v["commit_date"], "2026-01-01T00:00:00+00:00");
    assert!(v["reasoning"].is_string() && v["timings"].is_object());
    let hash = v["commit_hash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 64);

    let repo = f.repo();
    let head = repo.head_commit().unwrap();
    assert_eq!(head.to_hex(), hash);
    let c = repo.read_commit(&head).unwrap();
    assert_eq!(
        c.message,
        "Store preferences.coding.testing, tools.test in default"
    );
    assert_eq!(c.metadata.get("actor").map(String::as_str), Some("agent-1"));
    assert_eq!(c.metadata.get("source").map(String::as_str), Some("cli"));
    drop(repo);

    let g = f.ok(&["get", "tools.test"]);
    let rec = &g["items"][0]["value"];
    assert_eq!(
        keys_of(rec),
        set(&[
            "content",
            "key",
            "namespace",
            "confidence",
            "timestamp",
            "related_keys",
            "entries",
            "schema_version"
        ])
    );
    assert_eq!(
        rec["related_keys"],
        serde_json::json!(["preferences.coding.testing"])
    );
    assert_eq!(rec["timestamp"], 1767225600.0);
    assert_eq!(rec["schema_version"], 2);
    assert_eq!(
        rec["entries"],
        serde_json::json!([{"content": "prefers pytest", "confidence": 1.0, "timestamp": 1767225600.0, "status": "active", "source": "cli", "actor": "agent-1"}])
    );

    // One key: the singular message; a namespace from -p.
    f.ok(&["remember", "x", "-p", "work:a.b"]);
    let repo = f.repo();
    let c = repo.read_commit(&repo.head_commit().unwrap()).unwrap();
    assert_eq!(c.message, "Store a.b in work");
    assert!(c.metadata.is_empty());
}

#[test]
fn remember_errors_and_policies() {
    let f = Fixture::new();
    let n0 = f.commit_count();
    assert_error(
        &f.run(
            true,
            &[
                "remember",
                "x",
                "-p",
                "a",
                "--replace",
                "--merge-policy",
                "append",
            ],
        ),
        1,
    );
    assert_error(
        &f.run(true, &["remember", "x", "-p", "x:a", "-p", "y:b"]),
        1,
    );
    assert_error(&f.run(true, &["remember", "x", "-p", "x:a", "-n", "y"]), 1);
    assert_error(&f.run(true, &["remember", "x", "-p", ":a"]), 1);
    assert_error(&f.run(true, &["remember", "x", "-p", "a..b"]), 1);
    assert_error(&f.run(true, &["remember", "x", "-p", "a b"]), 1);
    assert_error(&f.run(true, &["remember", "x"]), 1);
    assert_error(
        &f.run_env(
            &[("MEMOIR_MERGE_POLICY", "bogus")],
            true,
            &["remember", "x", "-p", "a"],
        ),
        1,
    );
    assert_eq!(
        f.run(
            true,
            &["remember", "x", "-p", "a", "--merge-policy", "bogus"]
        )
        .code,
        2
    );
    assert_eq!(f.commit_count(), n0);

    f.ok(&["remember", "first", "-p", "pref.a", "-c", "0.8"]);
    // confidence_gated (default of pref.*): lower confidence writes nothing.
    let v = f.ok(&["remember", "weaker", "-p", "pref.a", "-c", "0.5"]);
    assert_eq!(v["commit_hash"], Value::Null);
    assert_eq!(v["commit_date"], Value::Null);
    assert_eq!(
        f.ok(&["get", "pref.a"])["items"][0]["value"]["content"],
        "first"
    );
    // The environment policy applies when no flag is given; the flag wins over it.
    f.ok(&["remember", "second", "-p", "pref.a"]);
    let v = f
        .run_env(
            &[("MEMOIR_MERGE_POLICY", "append")],
            true,
            &["remember", "third", "-p", "pref.a"],
        )
        .json();
    assert!(v["commit_hash"].is_string());
    assert_eq!(
        f.ok(&["get", "pref.a"])["items"][0]["value"]["content"],
        "second\n\n[update] third"
    );
    f.run_env(
        &[("MEMOIR_MERGE_POLICY", "append")],
        true,
        &["remember", "fourth", "-p", "pref.a", "--replace"],
    );
    let rec = f.ok(&["get", "pref.a"])["items"][0]["value"].clone();
    assert_eq!(rec["content"], "fourth");
    assert_eq!(rec["entries"].as_array().unwrap().len(), 4);
    // Facet cap.
    for i in 0..4 {
        f.run_env(
            &[("MEMOIR_FACET_MAX_ENTRIES", "3")],
            true,
            &["remember", &format!("e{i}"), "-p", "experience.x"],
        );
    }
    let rec = f.ok(&["get", "experience.x"])["items"][0]["value"].clone();
    assert_eq!(rec["entries"].as_array().unwrap().len(), 3);
    // llm_merge without an LLM appends and says so.
    f.ok(&["remember", "w1", "-p", "workflow.release"]);
    let v = f.ok(&["remember", "w2", "-p", "workflow.release"]);
    assert!(v["reasoning"].as_str().unwrap().contains("no LLM"));

    // reject: occupied keys are reported, free keys still written, exit 4.
    let n = f.commit_count();
    let o = f.run(
        true,
        &[
            "remember",
            "new",
            "-p",
            "pref.a",
            "-p",
            "pref.free",
            "--merge-policy",
            "reject",
        ],
    );
    assert_eq!(o.code, 4);
    let v = o.json();
    assert_eq!(v["success"], false);
    let conflicts = v["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(
        keys_of(&conflicts[0]),
        set(&[
            "key",
            "namespace",
            "existing_content",
            "existing_confidence",
            "existing_timestamp",
            "incoming_content",
            "incoming_confidence"
        ])
    );
    assert_eq!(conflicts[0]["key"], "pref.a");
    assert_eq!(conflicts[0]["existing_content"], "fourth");
    assert_eq!(conflicts[0]["incoming_content"], "new");
    assert!(v["commit_hash"].is_string());
    assert_eq!(f.commit_count(), n + 1);
    assert_eq!(f.ok(&["get", "pref.free"])["items"][0]["found"], true);
    // Human mode: same exit code.
    assert_eq!(
        f.run(
            false,
            &[
                "remember",
                "new",
                "-p",
                "pref.a",
                "--merge-policy",
                "reject"
            ]
        )
        .code,
        4
    );
}

#[test]
fn get_and_forget() {
    let f = Fixture::new();
    f.ok(&["remember", "one", "-p", "a.b"]);
    f.ok(&["remember", "two", "-p", "ns:c"]);
    let v = f.ok(&["get", "a.b", "missing", "ns:c"]);
    assert_eq!(
        keys_of(&v),
        set(&[
            "success",
            "items",
            "count",
            "found_count",
            "timing_ms",
            "error"
        ])
    );
    assert_eq!(v["count"], 3);
    assert_eq!(v["found_count"], 2);
    assert_eq!(v["error"], Value::Null);
    let items = v["items"].as_array().unwrap();
    assert_eq!(
        keys_of(&items[0]),
        set(&["key", "namespace", "full_key", "found", "value"])
    );
    assert_eq!(items[1]["found"], false);
    assert_eq!(items[1]["value"], Value::Null);
    assert_eq!(items[2]["full_key"], "ns:c");
    assert_eq!(f.ok(&["get", "c", "-n", "ns"])["items"][0]["found"], true);

    let o = f.run(true, &["get", "missing"]);
    assert_eq!(o.code, 2);
    assert_eq!(o.json()["items"][0]["found"], false);
    assert_eq!(f.run(false, &["get", "missing"]).code, 2);
    assert_error(&f.run(true, &["get", "bad key"]), 1);

    let n = f.commit_count();
    let o = f.run(true, &["forget", "nope"]);
    assert_error(&o, 2);
    assert_eq!(f.commit_count(), n);
    let v = f.ok(&["forget", "a.b", "--force"]);
    assert_eq!(
        keys_of(&v),
        set(&["success", "key", "namespace", "commit_hash", "message"])
    );
    assert_eq!(v["key"], "a.b");
    assert_eq!(v["namespace"], "default");
    let repo = f.repo();
    let head = repo.head_commit().unwrap();
    assert_eq!(v["commit_hash"], head.to_hex().as_str());
    assert_eq!(
        repo.read_commit(&head).unwrap().message,
        "Delete a.b from default"
    );
    drop(repo);
    assert_eq!(f.commit_count(), n + 1);
    assert_eq!(f.run(true, &["get", "a.b"]).code, 2);
}

#[test]
fn branches_and_branch_option() {
    let f = Fixture::new();
    f.ok(&["remember", "on main", "-p", "a"]);
    let v = f.ok(&["branch"]);
    assert_eq!(
        v,
        serde_json::json!({"branches": ["main"], "current": "main"})
    );

    // A write to a missing branch creates it from HEAD, without moving HEAD.
    f.ok(&["remember", "on exp", "-p", "b", "--branch", "exp"]);
    assert_eq!(
        f.ok(&["branch"]),
        serde_json::json!({"branches": ["exp", "main"], "current": "main"})
    );
    assert_eq!(f.run(true, &["get", "b"]).code, 2);
    assert_eq!(f.ok(&["get", "b", "--branch", "exp"])["found_count"], 1);
    let o = f.run_env(&[("MEMOIR_BRANCH", "exp")], true, &["get", "a", "b"]);
    assert_eq!(o.json()["found_count"], 2);
    // A read of a missing branch is an error naming it.
    let msg = assert_error(&f.run(true, &["get", "a", "--branch", "nosuch"]), 2);
    assert!(msg.contains("nosuch"), "{msg}");
    assert_error(
        &f.run_env(&[("MEMOIR_BRANCH", "nosuch")], true, &["summarize"]),
        2,
    );

    assert_error(&f.run(true, &["branch", "exp"]), 1);
    assert_error(&f.run(true, &["branch", "bad..name"]), 1);
    assert_error(&f.run(true, &["branch", "x", "--from", "nosuch"]), 2);
    let v = f.ok(&["branch", "side", "--from", "exp"]);
    assert_eq!(v["branch"], "side");
    assert_error(&f.run(true, &["branch", "-d", "main"]), 1);
    assert_error(&f.run(true, &["branch", "-d", "exp"]), 1);
    assert_error(&f.run(true, &["branch", "-d", "nosuch"]), 2);
    let v = f.ok(&["branch", "-D", "side"]);
    assert_eq!(v["deleted"], "side");

    assert_error(&f.run(true, &["checkout", "nosuch"]), 2);
    let v = f.ok(&["checkout", "exp"]);
    assert_eq!(v["branch"], "exp");
    assert_eq!(f.ok(&["branch"])["current"], "exp");
    assert_eq!(f.ok(&["get", "b"])["found_count"], 1);
    let v = f.ok(&["checkout", "-b", "fresh"]);
    assert_eq!(v["created"], true);
    assert_eq!(f.ok(&["status"])["branch"], "fresh");
    assert_error(&f.run(true, &["checkout", "-b", "fresh"]), 1);
    // A commit id detaches HEAD; writes then need --branch.
    let head = f.ok(&["status"]);
    assert_eq!(head["commit_count"], 3);
    let tip = f.repo().head_commit().unwrap().to_hex();
    let v = f.ok(&["checkout", &tip[..12]]);
    assert_eq!(v["branch"], Value::Null);
    assert_error(&f.run(true, &["remember", "x", "-p", "c"]), 1);
    f.ok(&["checkout", "main"]);
    // fresh is at exp's tip, which main does not contain.
    assert_error(&f.run(true, &["branch", "-d", "fresh"]), 1);
    f.ok(&["checkout", "exp"]);
    assert_eq!(f.ok(&["branch", "-d", "fresh"])["deleted"], "fresh");
}

#[test]
fn summarize_semantics() {
    let f = Fixture::new();
    for p in [
        "preferences.a",
        "preferences.a.b",
        "preferences.c",
        "tools",
        "tools.git.x",
        "work:notes.one",
    ] {
        f.ok(&["remember", "v", "-p", p]);
    }
    let v = f.ok(&["summarize"]);
    assert_eq!(
        keys_of(&v),
        set(&[
            "success",
            "type",
            "namespace_filter",
            "total_namespaces",
            "total_memories",
            "namespaces"
        ])
    );
    assert_eq!(v["type"], "all");
    assert_eq!(v["namespace_filter"], Value::Null);
    assert_eq!(v["total_namespaces"], 2);
    assert_eq!(v["total_memories"], 6);
    assert_eq!(
        v["namespaces"],
        serde_json::json!({"default": 5, "work": 1})
    );

    let v = f.ok(&["summarize", "taxonomy", "--depth", "2"]);
    assert_eq!(v["type"], "taxonomy");
    assert_eq!(v["depth"], 2);
    // "tools" has fewer than 2 segments: its own group.
    assert_eq!(
        v["prefix_counts"],
        serde_json::json!({"default": {"preferences.a": 2, "preferences.c": 1, "tools": 1, "tools.git": 1}, "work": {"notes.one": 1}})
    );

    // Star crosses dots; several globs are a union; they filter before grouping.
    let v = f.ok(&[
        "summarize",
        "--keys",
        "preferences.*",
        "--keys",
        "tools",
        "--depth",
        "1",
    ]);
    assert_eq!(
        v["matching_keys"],
        serde_json::json!({"default": ["preferences.a", "preferences.a.b", "preferences.c", "tools"]})
    );
    assert_eq!(
        v["prefix_counts"],
        serde_json::json!({"default": {"preferences": 3, "tools": 1}})
    );
    assert_eq!(v["total_memories"], 6);
    let v = f.ok(&["summarize", "--keys", "*.one", "-n", "work"]);
    assert_eq!(
        v["matching_keys"],
        serde_json::json!({"work": ["notes.one"]})
    );
    assert_eq!(v["namespaces"], serde_json::json!({"work": 1}));
    assert_eq!(v["namespace_filter"], "work");
    assert_eq!(v["total_memories"], 1);
    let v = f.ok(&["summarize", "--keys", "preferences.?"]);
    assert_eq!(
        v["matching_keys"],
        serde_json::json!({"default": ["preferences.a", "preferences.c"]})
    );
    let v = f.ok(&["summarize", "--keys", "nomatch*"]);
    assert_eq!(v["matching_keys"], serde_json::json!({}));

    assert_eq!(f.run(true, &["summarize", "--depth", "0"]).code, 2);
    assert_error(&f.run(true, &["summarize", "--keys", "a.[bc"]), 1);
    let msg = assert_error(&f.run(true, &["summarize", "-n", "nope"]), 1);
    assert!(msg.contains("default") && msg.contains("work"), "{msg}");
    assert_error(&f.run(true, &["summarize", "-n", "bad ns"]), 1);
}

#[test]
fn export_import_round_trip_and_all_or_nothing() {
    let a = Fixture::new();
    a.ok(&["remember", "one", "-p", "x.a", "-p", "x.b"]);
    a.ok(&["remember", "two", "-p", "x.a", "--merge-policy", "append"]);
    a.ok(&["remember", "three", "-p", "team:y"]);
    let dump = a.run(false, &["export"]);
    assert_eq!(dump.code, 0);
    assert_eq!(dump.stdout.lines().count(), 3);
    for l in dump.stdout.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert!(v["key"].is_string() && v["namespace"].is_string());
    }

    let b = Fixture::new();
    let o = cmd(
        &[],
        &["-s", b.s(), "--json", "import", "-"],
        Some(&dump.stdout),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(v["imported"], 3);
    let repo = b.repo();
    assert_eq!(
        repo.read_commit(&repo.head_commit().unwrap())
            .unwrap()
            .message,
        "Import 3 memories"
    );
    drop(repo);
    assert_eq!(b.run(false, &["export"]).stdout, dump.stdout);

    // A malformed line: error naming it, nothing committed.
    let n = b.commit_count();
    let bad = format!("{}\n{{not json\n", dump.stdout.lines().next().unwrap());
    let o = cmd(&[], &["-s", b.s(), "--json", "import", "-"], Some(&bad));
    let msg = assert_error(&o, 1);
    assert!(msg.contains("line 2"), "{msg}");
    let bad =
        "{\"key\": \"ok\", \"content\": \"x\"}\n\n{\"key\": \"bad key\", \"content\": \"x\"}\n";
    let msg = assert_error(
        &cmd(&[], &["-s", b.s(), "--json", "import", "-"], Some(bad)),
        1,
    );
    assert!(msg.contains("line 3"), "{msg}");
    assert_eq!(b.commit_count(), n);

    // Schema 1 lines are upgraded; files work too.
    let file = b.store.parent().unwrap().join("old.jsonl");
    std::fs::write(&file, "{\"key\": \"legacy.k\", \"content\": \"old\", \"confidence\": 0.4, \"timestamp\": 1000.5}\n").unwrap();
    let v = b.ok(&["import", file.to_str().unwrap(), "-n", "legacy"]);
    assert_eq!(v["imported"], 1);
    let rec = b.ok(&["get", "legacy:legacy.k"])["items"][0]["value"].clone();
    assert_eq!(
        rec["entries"],
        serde_json::json!([{"content": "old", "confidence": 0.4, "timestamp": 1000.5, "status": "active"}])
    );
    assert_error(&b.run(true, &["import", "/nonexistent/file"]), 1);
}

#[test]
fn busy_store_is_exit_7() {
    let f = Fixture::new();
    let held = Store::open(&f.store, &OpenOptions::default()).unwrap();
    let o = cmd(
        &[],
        &["-s", f.s(), "--json", "--lock-timeout", "0", "get", "a"],
        None,
    );
    assert_error(&o, 7);
    let o = cmd(
        &[("MEMOIR_LOCK_TIMEOUT", "0")],
        &["-s", f.s(), "remember", "x", "-p", "a"],
        None,
    );
    assert_eq!(o.code, 7);
    drop(held);
    assert_eq!(f.run(true, &["remember", "x", "-p", "a"]).code, 0);
}

/// A search at HEAD is answered from the head file and the index cache when both describe
/// the store as last closed: it needs no lock, and equals the search that opens the store.
#[test]
fn search_at_rest_needs_no_lock_and_sees_every_close() {
    let f = Fixture::new();
    f.ok(&[
        "remember",
        "we deploy with blue green releases",
        "-p",
        "infra.deploy.strategy",
    ]);
    f.ok(&[
        "remember",
        "postgres is the main database",
        "-p",
        "infra.db.engine",
    ]);
    let hits = |v: &Value| v["hits"].clone();
    let run = |args: &[&str]| {
        let mut all = vec!["-s", f.s(), "--json", "--lock-timeout", "0"];
        all.extend_from_slice(args);
        cmd(&[], &all, None)
    };
    // `--at` always opens the store (and brings the index cache to HEAD's root).
    let opened = f.ok(&["search", "deploy database", "--at", "HEAD"]);
    assert_eq!(opened["count"], 2);
    let rest = |args: &[&str]| {
        // Another process holds the store: only an answer at rest can succeed.
        let held = f.repo();
        let o = run(args);
        assert_error(&run(&["get", "infra.db.engine"]), 7);
        drop(held);
        o
    };
    // Holding the store opens it, which changes its log: what the head file described is
    // no longer known to be current, so the search waits for the store like any command.
    assert_error(&rest(&["search", "deploy database"]), 7);
    // The holder closed the store again, which published the head file anew.
    let lock = std::fs::File::open(f.store.join("LOCK")).unwrap();
    // A child another test forks may hold a copy of a lock's descriptor until it execs:
    // take the lock as the store does, retrying for a while.
    let take = || {
        let start = std::time::Instant::now();
        while lock.try_lock().is_err() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "LOCK stays held"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    take();
    let o = run(&["search", "deploy database"]);
    assert_eq!(o.code, 0, "{} {}", o.stdout, o.stderr);
    assert_eq!(hits(&o.json()), hits(&opened));
    for args in [
        &["search", "postgres", "-k", "1"][..],
        &["search", "deploy", "--keys", "infra.db.*"],
        &["search", "deploy", "--branch", "main"],
        &["search", "releases", "--sort", "recency", "-n", "default"],
    ] {
        let o = run(args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        lock.unlock().unwrap();
        let mut at = args.to_vec();
        at.extend_from_slice(&["--at", "HEAD"]);
        assert_eq!(hits(&o.json()), hits(&f.ok(&at)), "{args:?}");
        take();
    }
    // Another branch than HEAD's needs the store.
    assert_error(&run(&["search", "deploy", "--branch", "other"]), 7);
    lock.unlock().unwrap();

    // A write moves HEAD: the next search opens the store (and updates the index), the
    // ones after it need no lock again and see the write.
    f.ok(&[
        "remember",
        "deploys happen on fridays",
        "-p",
        "infra.deploy.days",
    ]);
    assert_eq!(f.ok(&["search", "fridays"])["count"], 1);
    take();
    let o = run(&["search", "fridays"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["hits"][0]["key"], "infra.deploy.days");
    // recall reads the same index (lexically here: no model is configured).
    let o = run(&["recall", "fridays"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["memories"][0]["path"], "infra.deploy.days");
    assert_eq!(v["memories"][0]["content"], "deploys happen on fridays");
    lock.unlock().unwrap();

    // `-v` says when an answer came from the index at rest.
    let at_rest = |o: &Out| o.stderr.contains("answered from the index of HEAD");
    let o = cmd(
        &[],
        &["-s", f.s(), "-v", "--json", "search", "fridays"],
        None,
    );
    assert!(at_rest(&o), "{}", o.stderr);
    let o = cmd(
        &[],
        &[
            "-s",
            f.s(),
            "-v",
            "--json",
            "search",
            "fridays",
            "--at",
            "HEAD",
        ],
        None,
    );
    assert_eq!(o.code, 0);
    assert!(!at_rest(&o), "{}", o.stderr);

    // A damaged head file is ignored: the search opens the store.
    let head = f.store.join("cache").join("head");
    let mut bytes = std::fs::read(&head).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&head, &bytes).unwrap();
    take();
    assert_error(&run(&["search", "fridays"]), 7);
    lock.unlock().unwrap();
    assert_eq!(f.ok(&["search", "fridays"])["count"], 1);
}

#[test]
fn corrupt_value_is_exit_5() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a"]);
    {
        let repo = f.repo();
        let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
        let id = repo
            .tree()
            .get(&root, &Key::new("default", "a").unwrap().encode())
            .unwrap()
            .unwrap();
        repo.store()
            .overwrite_raw(id.as_bytes(), b"\x82\x02\x41\x00")
            .unwrap();
    }
    assert_error(&f.run(true, &["get", "a"]), 5);
}

#[test]
fn output_is_deterministic_and_ids_reproducible() {
    let script: &[&[&str]] = &[
        &["remember", "one", "-p", "a.b", "-p", "c"],
        &["remember", "two", "-p", "a.b", "--merge-policy", "append"],
        &["forget", "c"],
        &["remember", "three", "-p", "ns:x", "--branch", "side"],
    ];
    let run_all = |f: &Fixture| -> Vec<String> {
        let mut outs = Vec::new();
        for args in script {
            outs.push(f.run(true, args).stdout);
        }
        for args in [
            &["get", "a.b", "c"][..],
            &["summarize", "--depth", "1"],
            &["status"],
            &["branch"],
        ] {
            let first = f.run(true, args).stdout;
            assert_eq!(
                first,
                f.run(true, args).stdout,
                "{args:?} differs between runs"
            );
            outs.push(first);
        }
        outs
    };
    let a = Fixture::new();
    let b = Fixture::new();
    let oa = run_all(&a);
    let ob = run_all(&b);
    // Status shows the store path; everything else is byte-identical across stores.
    for (x, y) in oa.iter().zip(&ob) {
        if !x.contains("\"path\"") {
            assert_eq!(x, y);
        }
    }
    assert_eq!(
        a.repo().head_commit().unwrap(),
        b.repo().head_commit().unwrap()
    );
    assert_eq!(
        a.repo().branch_tip("side").unwrap(),
        b.repo().branch_tip("side").unwrap()
    );
}

#[test]
fn human_output_is_plain_and_escaped() {
    let f = Fixture::new();
    let o = f.run(
        false,
        &[
            "remember",
            "evil \x1b[31mred\x1b]0;title\x07 \r end",
            "-p",
            "a",
        ],
    );
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("✓ "));
    for nc in [None, Some("1")] {
        let envs: Vec<(&str, &str)> = nc.map(|v| vec![("NO_COLOR", v)]).unwrap_or_default();
        for args in [
            &["get", "a"][..],
            &["status"],
            &["summarize", "--depth", "1"],
            &["branch"],
        ] {
            let o = f.run_env(&envs, false, args);
            assert_eq!(o.code, 0);
            assert!(
                !o.stdout.contains('\x1b') && !o.stderr.contains('\x1b'),
                "{args:?}: {:?}",
                o.stdout
            );
        }
    }
    let o = f.run(false, &["get", "a"]);
    assert!(o.stdout.contains("\\u{1b}[31mred"), "{:?}", o.stdout);
    assert!(!o.stdout.contains('\x07') && !o.stdout.contains('\r'));
    // JSON keeps the content exactly.
    let v = f.ok(&["get", "a"]);
    assert_eq!(
        v["items"][0]["value"]["content"],
        "evil \x1b[31mred\x1b]0;title\x07 \r end"
    );
    // Quiet: no chatter; data still printed.
    let o = f.run_env(
        &[("MEMOIR_QUIET", "1")],
        false,
        &["remember", "y", "-p", "b"],
    );
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
    let o = f.run(false, &["-q", "get", "b"]);
    assert!(
        o.stdout.contains("default:b") && o.stdout.contains('y'),
        "{:?}",
        o.stdout
    );
}

#[test]
fn usage_errors_are_exit_2() {
    let f = Fixture::new();
    assert_eq!(f.run(false, &["no-such-command"]).code, 2);
    assert_eq!(f.run(false, &["get"]).code, 2);
    let o = f.run(true, &["remember"]);
    assert_error(&o, 2);
    assert_eq!(cmd(&[], &["--version"], None).code, 0);
    for sub in [
        "new",
        "status",
        "remember",
        "get",
        "forget",
        "summarize",
        "branch",
        "checkout",
        "export",
        "import",
    ] {
        let o = cmd(&[], &[sub, "--help"], None);
        assert_eq!(o.code, 0);
        assert!(o.stdout.contains("Example"), "{sub} --help has no example");
    }
}

#[test]
fn author_precedence() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a", "--author", "Flag <f@x>"]);
    let author = |f: &Fixture| {
        let repo = f.repo();
        let c = repo.read_commit(&repo.head_commit().unwrap()).unwrap();
        c.author
    };
    assert_eq!(author(&f), "Flag <f@x>");
    f.ok(&["remember", "y", "-p", "b"]);
    assert_eq!(author(&f), AUTHOR);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let o = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .env("MEMOIR_NOW", NOW)
        .env("GIT_AUTHOR_NAME", "Git Name")
        .env("GIT_AUTHOR_EMAIL", "g@x")
        .args(["new", store.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    let repo =
        Repo::open(Store::open(Path::new(&store), &OpenOptions::default()).unwrap()).unwrap();
    assert_eq!(
        repo.read_commit(&repo.head_commit().unwrap())
            .unwrap()
            .author,
        "Git Name <g@x>"
    );
}

/// A fixture whose clock advances one hour per command, so history has distinct times.
fn at(t: u64) -> String {
    (1_767_225_600 + t * 3600).to_string()
}

#[test]
fn log_blame_diff_and_at() {
    let f = Fixture::new();
    let step = |t: u64, args: &[&str]| {
        let o = f.run_env(&[("MEMOIR_NOW", &at(t))], true, args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        o.json()
    };
    let c1 = step(1, &["remember", "v1", "-p", "a.b"])["commit_hash"]
        .as_str()
        .unwrap()
        .to_string();
    step(2, &["remember", "other", "-p", "x.y"]);
    let c3 = step(3, &["remember", "v2", "-p", "a.b", "--replace"])["commit_hash"]
        .as_str()
        .unwrap()
        .to_string();
    // log: newest first, exact fields, -n, ranges, key filters.
    let log = f.ok(&["log"]);
    let commits = log["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 4);
    assert_eq!(commits[0]["hash"], c3.as_str());
    assert!(set(&[
        "hash",
        "short_hash",
        "message",
        "author",
        "timestamp",
        "parents"
    ])
    .is_subset(&keys_of(&commits[0])));
    assert_eq!(commits[0]["message"], "Store a.b in default");
    assert_eq!(commits[0]["author"], AUTHOR);
    assert_eq!(commits[0]["date"], "2026-01-01T03:00:00+00:00");
    assert_eq!(commits[0]["parents"][0], commits[1]["hash"]);
    assert_eq!(
        f.ok(&["log", "-n", "2"])["commits"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let ranged = f.ok(&["log", &format!("{c1}..HEAD")]);
    assert_eq!(ranged["count"], 2);
    let filtered = f.ok(&["log", "--keys", "a.*"]);
    let hashes: Vec<&str> = filtered["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["hash"].as_str().unwrap())
        .collect();
    assert_eq!(hashes, [c3.as_str(), c1.as_str()]);
    assert_error(&f.run(true, &["log", "nope~3"]), 2);
    // blame: every change, newest first, with limit; a key never written has no entries.
    let b = f.ok(&["blame", "a.b"]);
    assert_eq!(
        keys_of(&b),
        set(&["success", "key", "namespace", "entries"])
    );
    let entries = b["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["commit"], c3.as_str());
    assert_eq!(entries[1]["commit"], c1.as_str());
    assert_eq!(entries[1]["operation"], "added");
    assert_eq!(entries[0]["date"], "2026-01-01T03:00:00+00:00");
    assert_eq!(
        f.ok(&["blame", "a.b", "-l", "1"])["entries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let never = f.run(true, &["blame", "never.written"]);
    assert_eq!(never.code, 0);
    assert_eq!(never.json()["entries"], serde_json::json!([]));
    let lines = f.ok(&["blame", "a.b", "--lines"]);
    assert_eq!(lines["lines"][0]["line"], "v2");
    assert_eq!(lines["lines"][0]["commit"], c3.as_str());
    // diff: default HEAD~1..HEAD, one argument = A..HEAD, sorted changes, patch.
    let d = f.ok(&["diff"]);
    let ch = d["changes"].as_array().unwrap();
    assert_eq!(ch.len(), 1);
    assert_eq!(ch[0]["key"], "a.b");
    assert_eq!(ch[0]["operation"], "modified");
    assert_eq!(ch[0]["old"]["content"], "v1");
    assert_eq!(ch[0]["new"]["content"], "v2");
    let d = f.ok(&["diff", &c1, "--patch", "--stat"]);
    let ops: Vec<(&str, &str)> = d["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(ops, [("a.b", "modified"), ("x.y", "added")]);
    assert!(d["changes"][0]["patch"]
        .as_str()
        .unwrap()
        .contains("-v1\n+v2"));
    assert_eq!(d["stats"]["added"], 1);
    assert_eq!(
        f.ok(&["diff", "HEAD~3", "HEAD", "--keys", "x.*"])["count"],
        1
    );
    assert_error(&f.run(true, &["diff", "HEAD~9"]), 2);
    // --at reads the past without moving HEAD.
    let old = f.ok(&["get", "a.b", "--at", "HEAD~2"]);
    assert_eq!(old["items"][0]["value"]["content"], "v1");
    let by_id = f.ok(&["get", "a.b", "--at", &c1[..10]]);
    assert_eq!(by_id["items"][0]["value"]["content"], "v1");
    assert_eq!(f.ok(&["summarize", "--at", &c1])["total_memories"], 1);
    assert_eq!(f.ok(&["get", "a.b"])["items"][0]["value"]["content"], "v2");
    assert_error(&f.run(true, &["get", "a.b", "--at", "main~10"]), 2);
}

#[test]
fn merge_strategies_and_exit_codes() {
    let f = Fixture::new();
    f.ok(&["remember", "base", "-p", "k"]);
    f.ok(&["remember", "ours", "-p", "k", "--replace"]);
    f.ok(&[
        "remember",
        "theirs",
        "-p",
        "k",
        "--replace",
        "--branch",
        "side",
    ]);
    // The branch was created from HEAD at its first write, after "ours": make it diverge.
    f.ok(&["remember", "side only", "-p", "s", "--branch", "side"]);
    f.ok(&["remember", "main only", "-p", "m"]);
    let before = f.commit_count();
    let o = f.run(true, &["merge", "side"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    // "side" took "theirs" after "ours": no conflict, a clean merge with two parents.
    let v = o.json();
    assert_eq!(v["conflicts"], serde_json::json!([]));
    assert_eq!(v["source_branch"], "side");
    assert_eq!(v["target_branch"], "main");
    assert_eq!(v["message"], "Merge branch 'side' into main");
    let repo = f.repo();
    let tip = repo.head_commit().unwrap();
    assert_eq!(repo.read_commit(&tip).unwrap().parents.len(), 2);
    drop(repo);
    assert_eq!(f.commit_count(), before + 1);
    assert_eq!(
        f.ok(&["get", "k"])["items"][0]["value"]["content"],
        "theirs"
    );
    // Now a real conflict: both change k differently.
    f.ok(&["remember", "main again", "-p", "k", "--replace"]);
    f.ok(&[
        "remember",
        "side again",
        "-p",
        "k",
        "--replace",
        "--branch",
        "side",
    ]);
    let before = f.commit_count();
    let err = f.run(true, &["merge", "side"]);
    assert_eq!(err.code, 4);
    assert_eq!(err.json()["conflicts"], serde_json::json!(["default:k"]));
    assert_eq!(
        f.commit_count(),
        before,
        "a conflicted merge commits nothing"
    );
    // --ff-only on diverged histories: exit 6.
    assert_error(&f.run(true, &["merge", "side", "--ff-only"]), 6);
    let v = f.ok(&["merge", "side", "-S", "ours"]);
    assert_eq!(v["strategy"], "ours");
    assert_eq!(
        f.ok(&["get", "k"])["items"][0]["value"]["content"],
        "main again"
    );
    f.ok(&[
        "remember",
        "side third",
        "-p",
        "k",
        "--replace",
        "--branch",
        "side",
    ]);
    f.ok(&["remember", "main third", "-p", "k", "--replace"]);
    f.ok(&["merge", "side", "-S", "union"]);
    let content = f.ok(&["get", "k"])["items"][0]["value"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.contains("main third") && content.contains("side third"),
        "{content}"
    );
    // The change made on the branch is blamed on the branch commit.
    let blame = f.ok(&["blame", "s"]);
    assert_eq!(blame["entries"].as_array().unwrap().len(), 1);
    assert_eq!(blame["entries"][0]["message"], "Store s in default");
    // time-travel makes and checks out a branch at the revision.
    let t = f.ok(&["time-travel", "HEAD~1"]);
    let name = t["branch"].as_str().unwrap().to_string();
    assert!(name.starts_with("time-travel-"));
    assert_eq!(f.ok(&["status"])["branch"], name.as_str());
    assert_error(&f.run(true, &["merge", "no-such-branch"]), 2);
}

#[test]
fn fsck_gc_and_purge() {
    let f = Fixture::new();
    f.ok(&[
        "remember",
        "the launch code is 0000-SECRET",
        "-p",
        "secrets.launch",
    ]);
    f.ok(&["remember", "keep me", "-p", "notes.keep"]);
    f.ok(&[
        "remember",
        "on a branch",
        "-p",
        "notes.branch",
        "--branch",
        "b",
    ]);
    let v = f.ok(&["fsck"]);
    assert_eq!(v["clean"], true);
    assert_eq!(v["findings"], serde_json::json!([]));
    let g = f.ok(&["gc"]);
    assert_eq!(g["objects_removed"], 0);
    // The search index caches contents; searching fills it with the secret.
    assert_eq!(f.ok(&["search", "launch code"])["count"], 1);
    let cached = |store: &std::path::Path| -> bool {
        std::fs::read_dir(store.join("cache")).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read(e.path()).is_ok_and(|b| b.windows(6).any(|w| w == b"SECRET"))
            })
        })
    };
    assert!(cached(&f.store));
    // Purge: the secret's content is stored nowhere afterwards; everything else reads as before.
    let p = f.ok(&["forget", "secrets.launch", "--purge"]);
    assert!(p["purged"]["commits_rewritten"].as_u64().unwrap() >= 2);
    {
        let repo = f.repo();
        use memoir::store::ObjectStore;
        let mut ids = Vec::new();
        repo.store()
            .for_each_id(&mut |id| {
                ids.push(id);
                true
            })
            .unwrap();
        for id in ids {
            let bytes = repo.store().get(&id).unwrap().unwrap();
            assert!(
                !bytes.windows(6).any(|w| w == b"SECRET"),
                "secret still stored"
            );
        }
    }
    assert!(!cached(&f.store), "secret still cached");
    // Nor is it in any file of the store: gc rewrote the packs that held it.
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.path().is_dir() {
                files(&e.path(), out);
            } else {
                out.push(e.path());
            }
        }
    }
    let mut all = Vec::new();
    files(&f.store, &mut all);
    assert!(all.iter().any(|p| p.starts_with(f.store.join("packs"))));
    for p in &all {
        let bytes = std::fs::read(p).unwrap();
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET"),
            "secret still on disk in {}",
            p.display()
        );
    }
    assert_eq!(f.ok(&["search", "launch code"])["count"], 0);
    assert!(!cached(&f.store), "secret cached again");
    assert_eq!(f.ok(&["fsck"])["clean"], true);
    assert_eq!(f.ok(&["get", "notes.keep"])["items"][0]["found"], true);
    assert_eq!(
        f.ok(&["get", "notes.branch", "--branch", "b"])["items"][0]["found"],
        true
    );
    assert_eq!(
        f.ok(&["blame", "secrets.launch"])["entries"],
        serde_json::json!([])
    );
    // Damage a stored value: fsck names it and exits 5.
    let id = {
        let repo = f.repo();
        let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
        let id = repo
            .tree()
            .get(&root, &Key::new("default", "notes.keep").unwrap().encode())
            .unwrap()
            .unwrap();
        repo.store()
            .overwrite_raw(id.as_bytes(), b"\x82\x02\x41\x01")
            .unwrap();
        id
    };
    let o = f.run(true, &["fsck"]);
    assert_eq!(o.code, 5);
    let v = o.json();
    assert_eq!(v["clean"], false);
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["subject"].as_str().unwrap().contains(&id.to_hex())));
}

#[test]
fn proof_and_verify() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a.b"]);
    f.ok(&["remember", "y", "-p", "a.c"]);
    let p = f.ok(&["proof", "a.b"]);
    assert_eq!(p["found"], true);
    let proof = p["proof"].as_str().unwrap().to_string();
    let root = p["root"].as_str().unwrap().to_string();
    let v = f.ok(&["verify", "a.b", "-p", &proof]);
    assert_eq!(v["valid"], true);
    assert_eq!(v["value"], p["value"]);
    // Without the store, against the root alone.
    let o = cmd(
        &[],
        &["--json", "verify", "a.b", "-p", &proof, "--root", &root],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stdout);
    // Another key, another root, or a tampered proof: exit 1.
    assert_error(&f.run(true, &["verify", "a.c", "-p", &proof]), 1);
    f.ok(&["remember", "z", "-p", "a.d"]);
    assert_error(&f.run(true, &["verify", "a.b", "-p", &proof]), 1);
    let mut bad = proof.clone().into_bytes();
    let i = bad.len() - 3;
    bad[i] = if bad[i] == b'0' { b'1' } else { b'0' };
    let bad = String::from_utf8(bad).unwrap();
    assert_error(
        &f.run(true, &["verify", "a.b", "-p", &bad, "--root", &root]),
        1,
    );
    // Absence is provable too.
    let a = f.ok(&["proof", "no.such"]);
    assert_eq!(a["found"], false);
    let v = f.ok(&["verify", "no.such", "-p", a["proof"].as_str().unwrap()]);
    assert_eq!(v["found"], false);
}

#[test]
fn five_thousand_keys_are_never_truncated() {
    let f = Fixture::new();
    let lines: Vec<String> = (0..5000)
        .map(|i| {
            serde_json::json!({"key": format!("topic{}.sub{}.item{i:04}", i % 7, i % 11),
                "namespace": "default", "content": format!("memory number {i} about widgets"),
                "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string()
        })
        .collect();
    let o = cmd(
        &[],
        &["-s", f.s(), "--json", "import", "-"],
        Some(&(lines.join("\n") + "\n")),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = f.ok(&["summarize", "--keys", "*"]);
    assert_eq!(
        v["matching_keys"]["default"].as_array().unwrap().len(),
        5000
    );
    assert_eq!(v["total_memories"], 5000);
    let d = f.ok(&["summarize", "--depth", "3"]);
    let sum: u64 = d["prefix_counts"]["default"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(sum, 5000);
    let e = f.run(false, &["export"]);
    assert_eq!(e.stdout.lines().count(), 5000);
    let s = f.ok(&["search", "widgets", "-k", "6000"]);
    assert_eq!(s["count"], 5000);
    let keys: Vec<String> = (0..300)
        .map(|i| format!("topic{}.sub{}.item{i:04}", i % 7, i % 11))
        .collect();
    let mut args = vec!["get"];
    args.extend(keys.iter().map(String::as_str));
    let g = f.ok(&args);
    assert_eq!(g["found_count"], 300);
    assert_eq!(g["items"][299]["key"], keys[299].as_str());
}

#[test]
fn ambiguous_commit_prefix_lists_candidates() {
    let f = Fixture::new();
    // Make commits through the library until two share a 4-hex-digit prefix.
    let prefix = {
        let repo = f.repo();
        let mut seen = std::collections::HashMap::new();
        let mut found = None;
        for i in 0..5000i64 {
            let v = repo
                .objects()
                .write(&memoir::object::Blob(vec![i as u8]))
                .unwrap();
            let e = vec![memoir::prolly::Edit::Put(
                Key::new("default", "k").unwrap().encode(),
                v,
            )];
            let sig = memoir::repo::Signature::new("t", 1_767_225_600 + i);
            let id = repo.commit("main", e, &sig, &format!("c{i}")).unwrap();
            let p = id.to_hex()[..4].to_string();
            if seen.insert(p.clone(), id).is_some() {
                found = Some(p);
                break;
            }
        }
        found.expect("a 4-digit collision within 5000 commits")
    };
    let msg = assert_error(&f.run(true, &["log", &prefix]), 1);
    assert!(msg.contains("ambiguous") && msg.contains(&prefix), "{msg}");
}
