//! `memoir taxonomy`: the built-in taxonomy, written into the store as ordinary records in
//! `memoir:taxonomy` (so `--at`, `log`, `diff` and `blame` work on it), loaded from a
//! document, listed, shown and rendered as the prompt block.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::common::{memoir, new_store, Out};

const NS: &str = "memoir:taxonomy";

const CUSTOM: &str = "---\nname: team\ndescription: Our own categories.\n---\n\n# Team taxonomy\n\n## debugging\nHow our failures were found and fixed.\n\nTopics:\n- ci: failures on CI\n\nExamples:\n- debugging.ci.cache: The CI cache key must include the lockfile hash\n\n## runbook\nWhat to do when something breaks.\n";

/// Runs the CLI on `store` with a fixed clock, optional stdin: the finished run.
fn run(store: &Path, args: &[&str], stdin: Option<&str>) -> Out {
    let mut c = memoir();
    c.env("MEMOIR_NOW", "1767225600")
        .arg("-s")
        .arg(store)
        .args(args);
    if stdin.is_some() {
        c.stdin(Stdio::piped());
    }
    let mut child = c.spawn().unwrap();
    if let Some(text) = stdin {
        // memoir stops reading at its bound and closes stdin: the write may fail.
        let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
    }
    child.wait_with_output().unwrap().into()
}

fn json(store: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = run(store, &all, None);
    (o.code, o.json())
}

fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = json(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

fn commits(store: &Path) -> u64 {
    ok(store, &["status"])["commit_count"].as_u64().unwrap()
}

#[test]
fn a_new_store_has_no_taxonomy_and_shows_the_builtin_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let v = ok(&store, &["taxonomy", "list"]);
    assert_eq!(
        (v["name"].as_str(), v["stored"].as_bool()),
        (Some("general"), Some(false))
    );
    let ids: Vec<&str> = v["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for want in [
        "context",
        "workflow",
        "preferences",
        "knowledge",
        "debugging",
        "project",
    ] {
        assert!(ids.contains(&want), "{ids:?}");
    }
    // Nothing was written by reading it.
    let s = ok(&store, &["status"]);
    assert_eq!(
        (s["commit_count"].as_u64(), s["memory_count"].as_u64()),
        (Some(1), Some(0))
    );
    let o = run(&store, &["taxonomy", "list"], None);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("built in, not stored"), "{}", o.stdout);
    assert!(o.stdout.contains("\n  debugging "), "{}", o.stdout);
}

#[test]
fn init_stores_the_taxonomy_as_versioned_records() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let v = ok(&store, &["taxonomy", "init"]);
    assert!(v["commit_hash"].is_string(), "{v}");
    assert_eq!(v["namespace"], NS);
    let n = v["categories"].as_array().unwrap().len();
    assert!(n >= 10, "{v}");
    assert_eq!(v["written"].as_array().unwrap().len(), n + 1);
    assert_eq!(commits(&store), 2);
    // Records of memoir's own: get and log see them; status counts memories only.
    let s = ok(&store, &["status"]);
    assert!(
        !s["namespaces"].as_array().unwrap().iter().any(|x| x == NS),
        "{s}"
    );
    assert_eq!(s["memory_count"], 0, "{s}");
    let g = ok(&store, &["get", "-n", NS, "debugging", "_taxonomy"]);
    assert_eq!(g["found_count"], 2);
    let body = g["items"][0]["value"]["content"].as_str().unwrap();
    assert!(body.contains("Topics:\n- errors:"), "{body}");
    assert!(g["items"][1]["value"]["content"]
        .as_str()
        .unwrap()
        .starts_with("name: general\n"));
    let log = ok(&store, &["log", "-n", "1"]);
    assert_eq!(
        log["commits"][0]["message"],
        format!("Initialise taxonomy general ({n} categories) in {NS}")
    );
    assert_eq!(ok(&store, &["taxonomy", "list"])["stored"], true);
    // Again: nothing changes, no commit.
    let v = ok(&store, &["taxonomy", "init"]);
    assert!(v["commit_hash"].is_null(), "{v}");
    assert_eq!(commits(&store), 2);
    // The past still has none.
    assert_eq!(
        ok(&store, &["taxonomy", "list", "--at", "HEAD~1"])["stored"],
        false
    );
}

#[test]
fn load_replaces_the_taxonomy_and_history_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["taxonomy", "init"]);
    let file = dir.path().join("team.md");
    std::fs::write(&file, CUSTOM).unwrap();
    let v = ok(&store, &["taxonomy", "load", file.to_str().unwrap()]);
    assert_eq!(v["name"], "team");
    assert_eq!(v["categories"], serde_json::json!(["debugging", "runbook"]));
    assert_eq!(
        v["written"],
        serde_json::json!(["_taxonomy", "debugging", "runbook"])
    );
    assert!(
        v["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "workflow"),
        "{v}"
    );
    assert_eq!(
        v["message"],
        format!("Load taxonomy team (2 categories) in {NS}")
    );

    let now = ok(&store, &["taxonomy", "show", "debugging"]);
    assert_eq!(now["taxonomy"], "team");
    assert_eq!(now["category"]["topics"][0]["name"], "ci");
    assert_eq!(now["category"]["examples"][0]["path"], "debugging.ci.cache");
    let then = ok(&store, &["taxonomy", "show", "debugging", "--at", "HEAD~1"]);
    assert_eq!(then["taxonomy"], "general");
    assert_eq!(
        ok(&store, &["taxonomy", "list", "--at", "HEAD~1"])["categories"]
            .as_array()
            .unwrap()
            .len(),
        11
    );
    // blame and diff see the categories like any memory.
    let b = ok(&store, &["blame", "-n", NS, "debugging"]);
    let msgs: Vec<&str> = b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(msgs.len(), 2, "{b}");
    assert!(msgs[0].starts_with("Load taxonomy team") && msgs[1].starts_with("Initialise"));
    let d = ok(&store, &["diff", "HEAD~1", "HEAD"]);
    let ops: Vec<(String, String)> = d["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["key"].as_str().unwrap().into(),
                c["operation"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(ops.contains(&("runbook".into(), "added".into())), "{ops:?}");
    assert!(
        ops.contains(&("debugging".into(), "modified".into())),
        "{ops:?}"
    );
    assert!(
        ops.contains(&("workflow".into(), "removed".into())),
        "{ops:?}"
    );

    // init does not overwrite another taxonomy unless forced.
    let before = commits(&store);
    let (code, v) = json(&store, &["taxonomy", "init"]);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("already has taxonomy 'team'"),
        "{v}"
    );
    assert_eq!(commits(&store), before);
    let v = ok(&store, &["taxonomy", "init", "--force"]);
    assert_eq!(v["name"], "general");
    assert_eq!(v["removed"], serde_json::json!(["runbook"]));
    // Loading the same document from stdin twice: one commit.
    let o = run(&store, &["--json", "taxonomy", "load", "-"], Some(CUSTOM));
    assert_eq!(o.code, 0, "{}", o.stdout);
    let o = run(&store, &["--json", "taxonomy", "load", "-"], Some(CUSTOM));
    assert!(o.json()["commit_hash"].is_null(), "{}", o.stdout);
}

#[test]
fn broken_documents_and_unknown_categories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let file = dir.path().join("bad.md");
    std::fs::write(&file, "---\nname: x\n---\n## ok\nfine\n## Bad Id\nno\n").unwrap();
    let (code, v) = json(&store, &["taxonomy", "load", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("taxonomy: line 6: category id"), "{e}");
    let (code, v) = json(&store, &["taxonomy", "load", "/nonexistent/t.md"]);
    assert_eq!(code, 2, "{v}");
    // Every command that reads an input file says a missing one the same way.
    let (code, v) = json(&store, &["verify", "a.b", "-p", "@/nonexistent/p.hex"]);
    assert_eq!(code, 2, "{v}");
    let (code, v) = json(&store, &["import", "/nonexistent/m.jsonl"]);
    assert_eq!(code, 2, "{v}");
    let big = "x".repeat(70 << 10);
    let o = run(&store, &["--json", "taxonomy", "load", "-"], Some(&big));
    assert_eq!(o.code, 1);
    assert!(
        o.json()["error"]
            .as_str()
            .unwrap()
            .contains("longer than 65536 bytes"),
        "{}",
        o.stdout
    );
    assert_eq!(commits(&store), 1);

    let (code, v) = json(&store, &["taxonomy", "show", "nope"]);
    assert_eq!(code, 2, "{v}");
    assert!(v["error"].as_str().unwrap().contains("debugging"), "{v}");
    // The taxonomy's namespace is not for memories.
    let (code, v) = json(
        &store,
        &["remember", "x y z", "-p", "memoir:taxonomy:extra"],
    );
    assert_eq!(code, 1, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("holds the store's taxonomy"),
        "{v}"
    );
    let (code, _) = json(&store, &["remember", "x y z", "-p", "extra", "-n", NS]);
    assert_eq!(code, 1);
}

#[test]
fn the_prompt_snippet_is_the_block_models_see() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let v = ok(&store, &["taxonomy", "prompt-snippet"]);
    let snippet = v["snippet"].as_str().unwrap();
    assert!(snippet.starts_with("Taxonomy \"general\""), "{snippet}");
    assert!(snippet.contains("\n- debugging: "), "{snippet}");
    let o = run(&store, &["taxonomy", "prompt-snippet"], None);
    assert_eq!(o.stdout, snippet, "human output is the block itself");
    let q = run(&store, &["-q", "taxonomy", "prompt-snippet"], None);
    assert_eq!(q.stdout, snippet, "it is data, printed with -q too");
}
