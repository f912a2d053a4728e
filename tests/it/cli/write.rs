//! `remember`, `forget`, `import` and `export`: JSON shapes, merge policies, errors that
//! commit nothing, and who a commit's author is.

use std::path::Path;
use std::process::Command;

use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};
use serde_json::Value;

use super::{assert_error, cmd, keys_of, set, Fixture, NOW};
use crate::common::AUTHOR;

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
    assert_eq!(rec["entries"].as_array().unwrap().len(), 1);
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
    // A missing input file is exit 2, as for every command that reads one.
    assert_error(&b.run(true, &["import", "/nonexistent/file"]), 2);
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

/// Without `--author` or an author in the environment, the author is git's `user.name` and
/// `user.email` as the real `git config` reads them where the command runs: the global file,
/// then the repository's own, whose values win.
#[test]
fn author_from_git_config() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = Global Name\n\temail = global@example.org\n[User]\n\tName = \"Later Name\"\n",
    )
    .unwrap();
    let author_in = |cwd: &Path, store: &str| {
        let run = |args: &[&str]| {
            let o = Command::new(env!("CARGO_BIN_EXE_memoir"))
                .env_clear()
                .env("MEMOIR_NOW", NOW)
                .env("HOME", &home)
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .current_dir(cwd)
                .args(args)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        let store = dir.path().join(store);
        run(&["new", store.to_str().unwrap()]);
        run(&["-s", store.to_str().unwrap(), "remember", "x", "-p", "a"]);
        let repo = Repo::open(Store::open(&store, &OpenOptions::default()).unwrap()).unwrap();
        let c = repo.read_commit(&repo.head_commit().unwrap()).unwrap();
        c.author
    };
    assert_eq!(
        author_in(&work, "s1"),
        "Later Name <global@example.org>",
        "the last value of a key wins, whatever the case of its section and name"
    );
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(&work)
            .args(args)
            .output()
            .expect("git is installed");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "local@example.org"]);
    assert_eq!(author_in(&work, "s2"), "Later Name <local@example.org>");
}
