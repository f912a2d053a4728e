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

/// A write's cost is bounded: more than 16 paths in one remember is refused whole (each
/// record names every other key), and 16 are stored in one commit.
#[test]
fn one_remember_writes_at_most_sixteen_paths() {
    let f = Fixture::new();
    let paths: Vec<String> = (0..17).map(|i| format!("k.p{i}")).collect();
    let mut args = vec!["remember", "shared"];
    for p in &paths {
        args.extend(["-p", p.as_str()]);
    }
    let o = f.run(true, &args);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.json()["error"].as_str().unwrap().contains("at most 16"));
    let before = f.commit_count();
    args.truncate(2 + 2 * 16);
    let v = f.ok(&args);
    assert_eq!(v["full_keys"].as_array().unwrap().len(), 16);
    assert_eq!(f.commit_count(), before + 1);
}
