//! `log`, `blame`, `diff`, `--at` and commit prefixes.

use memoir::key::Key;

use super::{assert_error, keys_of, set, Fixture};
use crate::common::AUTHOR;

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
