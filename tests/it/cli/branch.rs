//! `branch`, `--branch` and `merge` with its strategies and exit codes.

use serde_json::Value;

use super::{assert_error, Fixture};

/// A write that creates its branch says so (COMPAT: `branch_created: true`, a stderr line in
/// human mode), and names the nearest existing branch, since a typo creates one too; every
/// write command does it, and a write to an existing branch does not.
#[test]
fn a_write_that_creates_its_branch_says_so() {
    let f = Fixture::new();
    f.ok(&["remember", "on main", "-p", "a"]);
    f.ok(&["branch", "side"]);
    let o = f.run(false, &["remember", "typo", "-p", "b", "--branch", "sied"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("created branch 'sied' from main (did you mean 'side'?)"),
        "{}",
        o.stderr
    );
    let o = f.run(false, &["remember", "again", "-p", "c", "--branch", "sied"]);
    assert!(!o.stderr.contains("created branch"), "{}", o.stderr);
    let o = f.run(true, &["remember", "json", "-p", "d", "--branch", "sied"]);
    assert_eq!(o.json().get("branch_created"), None);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    // Far from every name: no suggestion.
    let o = f.run(false, &["forget", "a", "--branch", "cleanup-2026"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("created branch 'cleanup-2026' from main"));
    assert!(!o.stderr.contains("did you mean"), "{}", o.stderr);
    let writes: [&[&str]; 5] = [
        &["remember", "x", "-p", "e", "--branch", "w1"],
        &["forget", "a", "--branch", "w2"],
        &["taxonomy", "init", "--branch", "w3"],
        &["import", "-", "--branch", "w4"],
        &["remember", "x", "-p", "e", "--branch", "w1"],
    ];
    for (i, args) in writes.iter().enumerate() {
        let stdin = (args[0] == "import").then_some(r#"{"key":"z","content":"zz"}"#);
        let mut all = vec!["-s", f.s(), "--json"];
        all.extend_from_slice(args);
        let o = super::cmd(&[], &all, stdin);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        let created = o.json().get("branch_created").cloned();
        let want = (i < 4).then_some(Value::Bool(true));
        assert_eq!(created, want, "{args:?}");
    }
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
