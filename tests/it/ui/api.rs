//! The JSON API of `memoir ui`: each view's calls answer with the operation's outcome JSON
//! (the same as `memoir --json`), errors carry the contract's code mapped to an HTTP status,
//! writes land in the store where the CLI reads them, and CLI writes proceed while the
//! server runs.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{cli_at, cli_global, seeded, Ui, T0};
use crate::common::{remember_once_asked, slow_model, wrote_before};

/// `v` without the members that measure time.
fn untimed(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.remove("timing_ms");
        m.remove("timings");
    }
    v
}

#[test]
fn views_read_the_outcome_json_of_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let remote = dir.path().join("remote");
    let (c, out) = cli_at(
        &store,
        T0,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    assert_eq!(c, 0, "{out}");
    let (c, out) = cli_at(&store, T0, &["push"]);
    assert_eq!(c, 0, "{out}");
    let ui = Ui::start(&store, &[]);
    let now = T0 + 100_000;
    let same = |api: &str, args: &[&str]| {
        let (code, got) = ui.get(api);
        assert_eq!(code, 200, "{api}: {got}");
        let (c, want) = cli_at(&store, now, args);
        assert_eq!(c, 0, "{args:?}: {want}");
        assert_eq!(untimed(got), untimed(want), "{api} against {args:?}");
    };
    same("/api/status", &["status"]);
    same(
        "/api/memory?key=preferences.editor",
        &["get", "preferences.editor"],
    );
    same(
        "/api/memory?key=preferences.editor&at=HEAD~2",
        &["get", "preferences.editor", "--at", "HEAD~2"],
    );
    same(
        "/api/blame?key=preferences.editor&lines=1",
        &["blame", "preferences.editor", "--lines"],
    );
    same("/api/log?limit=3", &["log", "-n", "3"]);
    same(
        "/api/log?keys=preferences.*&limit=200",
        &["log", "--keys", "preferences.*", "-n", "200"],
    );
    same(
        "/api/diff?from=HEAD~3&to=HEAD&stat=1&patch=1",
        &["diff", "HEAD~3", "HEAD", "--stat", "--patch"],
    );
    same("/api/summarize?depth=1", &["summarize", "--depth", "1"]);
    same(
        "/api/search?q=editor+helix",
        &["search", "editor helix", "-k", "20"],
    );
    same("/api/branches", &["branch"]);
    same("/api/remotes", &["remote", "list"]);
    let (_, remotes) = ui.get("/api/remotes");
    assert_eq!(remotes["remotes"][0]["branches"][0]["branch"], "main");
    same(
        "/api/memory?key=preferences.editor&at=origin/main",
        &["get", "preferences.editor", "--at", "origin/main"],
    );
    same(
        "/api/proof?key=preferences.editor",
        &["proof", "preferences.editor"],
    );
}

#[test]
fn tree_merge_preview_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[]);
    let (code, t) = ui.get("/api/tree");
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["namespace"], "default");
    assert_eq!(t["total"], 4);
    assert_eq!(t["namespaces"], json!({"default": 4, "work": 1}));
    let counts: Vec<(String, u64)> = t["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![("preferences".to_string(), 3), ("projects".to_string(), 1)]
    );
    let (_, sub) = ui.get("/api/tree?prefix=preferences.coding");
    assert_eq!(sub["children"].as_array().unwrap().len(), 2);
    assert_eq!(sub["children"][0]["has_record"], true);
    let (_, old) = ui.get("/api/tree?at=HEAD~3");
    assert_eq!(old["total"], 3);
    let (_, work) = ui.get("/api/tree?ns=work");
    assert_eq!(work["children"][0]["path"], "notes");

    let (code, p) = ui.get("/api/merge-preview?source=side");
    assert_eq!(code, 200, "{p}");
    assert_eq!(p["kind"], "conflicted");
    assert_eq!(p["conflicts"][0]["full_key"], "default:preferences.editor");
    assert_eq!(
        p["conflicts"][0]["ours"]["content"],
        "uses helix now\nwith the default keymap"
    );
    assert_eq!(p["conflicts"][0]["theirs"]["content"], "uses emacs");

    let (code, s) = ui.get("/api/stats");
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["memory_count"], 5);
    assert_eq!(s["prefixes"]["default"]["preferences"], 3);
    assert!(s["growth"].as_array().unwrap().len() >= 2);
    assert_eq!(
        (&s["last_gc"], &s["last_fsck"]),
        (&json!(null), &json!(null))
    );
}

#[test]
fn errors_carry_the_contract_code() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[]);
    let expect = |(code, v): (u16, Value), status: u16, exit: u64| {
        assert_eq!(code, status, "{v}");
        assert_eq!(v["success"], false, "{v}");
        assert_eq!(v["code"], exit, "{v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    };
    expect(ui.get("/api/memory?key=no.such.key"), 404, 2);
    expect(ui.get("/api/memory"), 400, 1);
    expect(ui.get("/api/tree?keys=%5B"), 400, 1);
    expect(ui.get("/api/tree?prefix=a..b"), 400, 1);
    expect(ui.get("/api/tree?at=nosuchrevision"), 404, 2);
    expect(ui.get("/api/log?limit=x"), 400, 1);
    expect(ui.get("/api/nothing"), 404, 2);
    expect(ui.get("/api/remember"), 405, 1);
    expect(ui.get("/api/tree?q=%zz"), 400, 1);
    expect(
        ui.post("/api/forget", &json!({"key": "no.such.key"})),
        404,
        2,
    );
    expect(ui.post("/api/remember", &json!({"paths": ["a.b"]})), 400, 1);
    expect(
        ui.post(
            "/api/remember",
            &json!({"content": "x", "paths": "bad..path"}),
        ),
        400,
        1,
    );
    expect(
        ui.post(
            "/api/merge",
            &json!({"source": "side", "strategy": "sideways"}),
        ),
        400,
        1,
    );
    // A merge with conflicts and no strategy is a partial failure: 409, code 4, nothing merged.
    expect(ui.post("/api/merge", &json!({"source": "side"})), 409, 4);
    let (code, v) = ui.raw(
        "POST",
        "/api/remember",
        &[("X-Memoir-Token", &ui.token), ("Origin", &ui.base)],
        "{not json",
    );
    expect((code, super::json(&v)), 400, 1);
    // Nothing above wrote: the log is the seeded one.
    let (_, log) = cli_at(&store, T0, &["log"]);
    assert_eq!(log["count"], 7);
}

#[test]
fn writes_from_the_api_are_read_by_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(
        &store,
        &[
            ("MEMOIR_NOW", "1767400000"),
            ("MEMOIR_AUTHOR", "Supervisor"),
        ],
    );
    let (code, r) = ui.post(
        "/api/remember",
        &json!({"content": "written from the page", "paths": ["ui.note"], "merge_policy": "replace"}),
    );
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["full_keys"], json!(["default:ui.note"]));
    let (c, got) = cli_at(&store, T0, &["get", "ui.note"]);
    assert_eq!(c, 0, "{got}");
    assert_eq!(got["items"][0]["value"]["content"], "written from the page");
    let (_, blame) = cli_at(&store, T0, &["blame", "ui.note"]);
    assert_eq!(blame["entries"][0]["author"], "Supervisor");

    let (code, f) = ui.post("/api/forget", &json!({"key": "ui.note"}));
    assert_eq!(code, 200, "{f}");
    let (c, _) = cli_at(&store, T0, &["get", "ui.note"]);
    assert_eq!(c, 2);

    let (code, b) = ui.post("/api/branch", &json!({"name": "review"}));
    assert_eq!(code, 200, "{b}");
    let (code, m) = ui.post(
        "/api/merge",
        &json!({"source": "side", "strategy": "theirs"}),
    );
    assert_eq!(code, 200, "{m}");
    assert_eq!(m["kind"], "merge");
    let (_, got) = cli_at(&store, T0, &["get", "preferences.editor"]);
    assert_eq!(got["items"][0]["value"]["content"], "uses emacs");
    let (code, c) = ui.post("/api/checkout", &json!({"target": "review"}));
    assert_eq!(code, 200, "{c}");
    let (_, st) = cli_at(&store, T0, &["status"]);
    assert_eq!(st["branch"], "review");
    let (code, d) = ui.post(
        "/api/branch/delete",
        &json!({"name": "side", "force": true}),
    );
    assert_eq!(code, 200, "{d}");

    let (code, fsck) = ui.post("/api/fsck", &json!({}));
    assert_eq!(code, 200, "{fsck}");
    assert_eq!(fsck["clean"], true);
    // The statistics show the fsck run from the page and a gc run from the command line.
    let (c, gc) = cli_at(&store, T0, &["gc"]);
    assert_eq!(c, 0, "{gc}");
    let (code, s) = ui.get("/api/stats");
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["last_fsck"]["time"], 1767400000);
    assert_eq!(s["last_fsck"]["clean"], true);
    assert_eq!(s["last_fsck"]["objects_checked"], fsck["objects_checked"]);
    assert_eq!(s["last_gc"]["time"], T0);
    assert_eq!(s["last_gc"]["objects_removed"], gc["objects_removed"]);
    let (_, proof) = ui.get("/api/proof?key=preferences.editor");
    let (code, v) = ui.post(
        "/api/verify",
        &json!({"key": "preferences.editor", "proof": proof["proof"]}),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["valid"], true);
    let (code, r) = ui.post(
        "/api/recall",
        &json!({"query": "editor", "mode": "lexical"}),
    );
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["metadata"]["mode"], "lexical");
    assert!(r["count"].as_u64().unwrap() >= 1);
}

#[test]
fn cli_writes_proceed_while_the_interface_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[]);
    for i in 0..5 {
        // The server has just used (and holds) the store.
        let (code, _) = ui.get("/api/tree");
        assert_eq!(code, 200);
        let start = Instant::now();
        let path = format!("cli.write{i}");
        let (code, out) = cli_global(
            &store,
            // The server lets go 25 ms after a request; the margin is for a loaded machine.
            &["--lock-timeout", "0.5"],
            &["remember", "from an agent", "-p", &path],
        );
        assert_eq!(
            code, 0,
            "a CLI write waited more than 500 ms for the lock: {out}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        // The next request sees it.
        let (code, got) = ui.get(&format!("/api/memory?key={path}"));
        assert_eq!(code, 200, "{got}");
        assert_eq!(got["items"][0]["value"]["content"], "from an agent");
    }
    assert!(!ui.stderr().contains("error"), "{}", ui.stderr());
}

/// `POST /api/recall` does not hold the store's LOCK while the model thinks: a CLI write made
/// while a (slow) command model answers goes through at once.
#[test]
fn cli_writes_proceed_while_the_model_of_a_recall_thinks() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let (command, asked) = slow_model(dir.path(), "default:preferences.editor");
    let ui = Ui::start(&store, &[("MEMOIR_LLM_COMMAND", command.as_str())]);
    let writer = remember_once_asked(&store, asked, "from an agent", "cli.during_recall");
    let (code, r) = ui.post("/api/recall", &json!({"query": "which editor?"}));
    let recalled = Instant::now();
    assert_eq!(code, 200, "{r}");
    wrote_before(writer, recalled);
    assert_eq!(r["metadata"]["mode"], "single", "{r}");
    assert_eq!(r["memories"][0]["path"], "preferences.editor");
    let (code, got) = ui.get("/api/memory?key=cli.during_recall");
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["items"][0]["value"]["content"], "from an agent");
}
