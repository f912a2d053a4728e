//! What real hosts and scripts written for the reference rely on: global options after the
//! subcommand (the MCP server's store among them), `~` in store paths, `replace` that
//! replaces, failures that carry `code`, the one namespace of a write, and a query that has
//! words.

use serde_json::json;

use super::{cmd, keys_of, set, Fixture};
use crate::common::Session;

#[test]
fn global_options_work_after_the_subcommand() {
    let f = Fixture::new();
    f.ok(&["remember", "likes tea", "-p", "prefs.drink"]);
    let o = cmd(&[], &["get", "prefs.drink", "--json", "-s", f.s()], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["items"][0]["value"]["content"], "likes tea");
    let o = cmd(
        &[],
        &["status", "-s", f.s(), "-q", "--lock-timeout", "1"],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("Memories: 1"), "{}", o.stdout);
}

#[test]
fn the_mcp_server_takes_its_store_after_the_subcommand() {
    let f = Fixture::new();
    f.ok(&["remember", "likes tea", "-p", "prefs.drink"]);
    // As a host's configuration starts it: `memoir mcp -s PATH -q`, no MEMOIR_STORE.
    let s = Session::stdio_args(&["mcp", "-s", f.s(), "-q"], &[]);
    let got = s.ok("memoir_get", json!({"keys": ["prefs.drink"]}));
    assert_eq!(got["items"][0]["value"]["content"], "likes tea");
    let st = s.ok("memoir_status", json!({}));
    assert_eq!(st["memory_count"], 1, "{st}");
}

#[test]
fn a_leading_tilde_in_a_store_path_is_the_home_directory() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let at_home = [("HOME", h)];
    let o = cmd(&at_home, &["--json", "new", "~/mem"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(home.path().join("mem").join("FORMAT").is_file());
    let o = cmd(
        &at_home,
        &["remember", "x", "-p", "a.b", "--store", "~/mem"],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let env = [("HOME", h), ("MEMOIR_STORE", "~/mem")];
    let o = cmd(&env, &["--json", "get", "a.b"], None);
    assert_eq!(o.json()["items"][0]["found"], true);
    // `~user` and a `~` inside a path are left alone.
    let o = cmd(&at_home, &["--json", "-s", "x~/mem", "status"], None);
    assert_eq!(o.code, 3);
}

#[test]
fn replace_leaves_one_entry_and_history_keeps_the_old_text() {
    let f = Fixture::new();
    f.ok(&["remember", "first", "-p", "a.b"]);
    f.ok(&[
        "remember",
        "second",
        "-p",
        "a.b",
        "--merge-policy",
        "append",
    ]);
    f.ok(&["remember", "third", "-p", "a.b", "--replace"]);
    let v = f.ok(&["get", "a.b"]);
    let entries = v["items"][0]["value"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["content"], "third");
    assert_eq!(entries[0]["status"], "active");
    let old = f.ok(&["get", "a.b", "--at", "HEAD~1"]);
    assert_eq!(
        old["items"][0]["value"]["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The per-type default of context.current replaces too.
    f.ok(&["remember", "on task A", "-p", "context.current"]);
    f.ok(&["remember", "on task B", "-p", "context.current"]);
    let v = f.ok(&["get", "context.current"]);
    let entries = v["items"][0]["value"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["content"], "on task B");
}

#[test]
fn summarize_json_has_exactly_the_contract_fields() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a.b"]);
    let v = f.ok(&["summarize"]);
    assert_eq!(
        keys_of(&v),
        set(&[
            "type",
            "namespace_filter",
            "total_namespaces",
            "total_memories",
            "namespaces"
        ])
    );
}

#[test]
fn every_failure_in_json_carries_success_error_and_code() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a.b"]);
    let o = f.run(true, &["get", "no.such"]);
    assert_eq!(o.code, 2);
    let v = o.json();
    assert_eq!(
        (v["success"].clone(), v["code"].clone()),
        (false.into(), 2.into())
    );
    assert!(v["error"].as_str().unwrap().contains("no.such"));
    assert_eq!(v["items"][0]["found"], false);

    let o = f.run(
        true,
        &["remember", "y", "-p", "a.b", "--merge-policy", "reject"],
    );
    assert_eq!(o.code, 4);
    let v = o.json();
    assert_eq!(
        (v["success"].clone(), v["code"].clone()),
        (false.into(), 4.into())
    );
    assert!(v["error"].as_str().unwrap().contains("reject"));
    assert_eq!(v["conflicts"].as_array().unwrap().len(), 1);

    f.ok(&["branch", "side"]);
    f.ok(&["remember", "main side", "-p", "a.b", "--replace"]);
    f.ok(&[
        "remember",
        "other side",
        "-p",
        "a.b",
        "--replace",
        "--branch",
        "side",
    ]);
    let o = f.run(true, &["merge", "side"]);
    assert_eq!(o.code, 4);
    let v = o.json();
    assert_eq!(
        (v["success"].clone(), v["code"].clone()),
        (false.into(), 4.into())
    );
    assert!(v["error"].is_string());
    assert_eq!(v["conflicts"], serde_json::json!(["default:a.b"]));
}

#[test]
fn bare_paths_take_the_namespace_of_another_path_and_say_so() {
    let f = Fixture::new();
    let o = f.run(true, &["remember", "x", "-p", "a.b", "-p", "work:c.d"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.json()["full_keys"],
        serde_json::json!(["work:a.b", "work:c.d"])
    );
    assert!(
        o.stderr.contains("a.b stored in namespace 'work'"),
        "{}",
        o.stderr
    );
    // With -n, or without any prefix, nothing to say.
    let o = f.run(true, &["remember", "x", "-p", "e.f", "-n", "work"]);
    assert_eq!(o.code, 0);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let help = f.run(false, &["remember", "--help"]);
    assert!(help.stdout.contains("one namespace"), "{}", help.stdout);
}

#[test]
fn a_search_without_a_distinguishing_word_is_a_usage_error() {
    let f = Fixture::new();
    f.ok(&["remember", "the tea is green", "-p", "a.b"]);
    for q in ["", "   ", "the of a", "?!"] {
        let o = f.run(true, &["search", q]);
        assert_eq!(o.code, 2, "{q:?}: {}", o.stdout);
        let v = o.json();
        assert_eq!(v["success"], false);
        assert!(
            v["error"].as_str().unwrap().starts_with("search needs"),
            "{v}"
        );
    }
    assert_eq!(f.ok(&["search", "the green"])["count"], 1);
}

/// Bytes of a store's packs.
fn pack_bytes(f: &Fixture) -> u64 {
    std::fs::read_dir(f.store.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// `remember` with `n` paths `g{tag}.k{i}` of one content: the outcome and how much the
/// packs grew.
fn remember_many(f: &Fixture, tag: &str, n: usize) -> (serde_json::Value, u64) {
    let paths: Vec<String> = (0..n).map(|i| format!("g{tag}.k{i:04}")).collect();
    let mut args = vec!["remember", "one fact shared by many keys"];
    for p in &paths {
        args.extend(["-p", p.as_str()]);
    }
    let before = pack_bytes(f);
    let v = f.ok(&args);
    (v, pack_bytes(f) - before)
}

/// A remember takes any number of paths, and its cost grows with their number, not its
/// square: past 17 keys the relation is stored once, as a set each record names, and read
/// back as every record's related keys, in command-line order.
#[test]
fn one_remember_writes_any_number_of_paths_at_linear_cost() {
    let f = Fixture::new();
    let before = f.commit_count();
    let (v, small) = remember_many(&f, "a", 100);
    assert_eq!(v["full_keys"].as_array().unwrap().len(), 100);
    let (v, large) = remember_many(&f, "b", 1000);
    assert_eq!(v["full_keys"].as_array().unwrap().len(), 1000);
    assert_eq!(f.commit_count(), before + 2);
    // Ten times the keys: about ten times the bytes (naming every other key in each record
    // would be a hundred times).
    assert!(
        large < small * 13,
        "100 keys: {small} bytes, 1000 keys: {large} bytes"
    );
    let got = f.ok(&["get", "gb.k0500"]);
    let related: Vec<String> = got["items"][0]["value"]["related_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = (0..1000)
        .filter(|&i| i != 500)
        .map(|i| format!("gb.k{i:04}"))
        .collect();
    assert_eq!(related, expected);
    // A key written again with another group names both.
    let mut args = vec!["remember", "another fact", "-p", "gb.k0500"];
    let others: Vec<String> = (0..20).map(|i| format!("gc.k{i}")).collect();
    for p in &others {
        args.extend(["-p", p.as_str()]);
    }
    f.ok(&args);
    let got = f.ok(&["get", "gb.k0500"]);
    let related = got["items"][0]["value"]["related_keys"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(related.len(), 999 + 20);
    assert_eq!(related[999], "gc.k0");
    // The sets are memoir's own: not searched, not counted, not the user's to change.
    assert_eq!(f.ok(&["status"])["memory_count"], 1000 + 100 + 20);
    let hits = f.ok(&["search", "shared many keys", "--limit", "2000"]);
    assert!(hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["namespace"] == "default"));
    for args in [
        vec!["remember", "x", "-n", "memoir:related", "-p", "set.x"],
        vec!["forget", "memoir:related:set.x"],
        vec!["forget", "memoir:related:set.x", "--purge"],
    ] {
        let o = f.run(true, &args);
        assert_eq!(o.code, 1, "{args:?}: {}", o.stdout);
        assert!(o.json()["error"]
            .as_str()
            .unwrap()
            .contains("memoir:related"));
    }
    assert!(f.ok(&["fsck"])["success"].as_bool().unwrap());
    // The bound is on the bytes written, not on the number of keys.
    let big = "x".repeat(100_000);
    let mut args = vec!["remember", big.as_str()];
    let paths: Vec<String> = (0..3000).map(|i| format!("big.k{i}")).collect();
    for p in &paths {
        args.extend(["-p", p.as_str()]);
    }
    let o = f.run(true, &args);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.json()["error"].as_str().unwrap().contains("256 MiB"));
}

/// An export lists every related key in every record; importing it names the relation set
/// again, so the copy is as small as the store it came from, reads back the same, and
/// importing it twice changes nothing.
#[test]
fn an_export_of_a_write_of_many_keys_imports_as_it_was() {
    let f = Fixture::new();
    remember_many(&f, "a", 300);
    f.ok(&[
        "remember",
        "a fact of its own",
        "-p",
        "ga.k0001",
        "-p",
        "solo.one",
    ]);
    let export = f.run(false, &["export"]).stdout;
    let file = f.store.parent().unwrap().join("export.jsonl");
    std::fs::write(&file, &export).unwrap();
    let copy = Fixture::new();
    let v = copy.ok(&["import", file.to_str().unwrap()]);
    assert_eq!(v["changed"], 300 + 1 + 1, "{v}");
    assert_eq!(copy.run(false, &["export"]).stdout, export);
    assert!(
        pack_bytes(&copy) < pack_bytes(&f) * 2,
        "copy {} bytes, store {} bytes",
        pack_bytes(&copy),
        pack_bytes(&f)
    );
    let related = copy.ok(&["get", "ga.k0001"])["items"][0]["value"]["related_keys"].clone();
    assert_eq!(related.as_array().unwrap().len(), 299 + 1);
    assert_eq!(related[0], "solo.one");
    assert_eq!(copy.ok(&["import", file.to_str().unwrap()])["changed"], 0);
    // Without its set, a record cannot name more keys than a record holds itself.
    let many: Vec<String> = (0..1100).map(|i| format!("x.k{i}")).collect();
    let line = json!({"key": "x.own", "content": "c", "related_keys": many});
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let o = copy.run(true, &["import", file.to_str().unwrap()]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.json()["error"]
        .as_str()
        .unwrap()
        .contains("no relation set"));
}
