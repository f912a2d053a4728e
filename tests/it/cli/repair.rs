//! A store whose database is lost or damaged comes back with every acknowledged commit:
//! the object index from the packs, the refs from the ref log (`fsck --repair`); the ref log
//! itself (`memoir reflog`) shows every move and brings back a deleted branch.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{cli, new_store};

fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = cli(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// A store with two branches and a detached-free HEAD on `main`; returns what must survive:
/// each branch's tip and every memory on it.
fn seeded(dir: &Path) -> (std::path::PathBuf, Vec<(String, Value, Value)>) {
    let store = new_store(dir);
    for i in 0..12 {
        ok(
            &store,
            &[
                "remember",
                &format!("fact {i}"),
                "-p",
                &format!("t{}.k{i}", i % 3),
            ],
        );
    }
    ok(
        &store,
        &["remember", "on the side", "-p", "s.x", "--branch", "side"],
    );
    ok(
        &store,
        &["remember", "fact 3, revised", "-p", "t0.k3", "--replace"],
    );
    let snapshot = snapshot_of(&store);
    (store, snapshot)
}

/// What must survive a repair: each branch's tip and every memory on it.
fn snapshot_of(store: &Path) -> Vec<(String, Value, Value)> {
    ["main", "side"]
        .iter()
        .map(|b| {
            let tip = ok(store, &["log", "-n", "1", b])["commits"][0]["hash"].clone();
            let (_, export) = cli(store, &["summarize", "--keys", "**", "--branch", b]);
            (b.to_string(), tip, export)
        })
        .collect()
}

fn assert_restored(store: &Path, snapshot: &[(String, Value, Value)]) {
    for (b, tip, export) in snapshot {
        assert_eq!(
            &ok(store, &["log", "-n", "1", b])["commits"][0]["hash"],
            tip,
            "{b}"
        );
        let (_, now) = cli(store, &["summarize", "--keys", "**", "--branch", b]);
        assert_eq!(&now, export, "{b}");
    }
    let got = ok(store, &["get", "t0.k3", "s.x", "--branch", "side"]);
    assert_eq!(got["items"][0]["value"]["content"], "fact 3");
    assert_eq!(got["items"][1]["value"]["content"], "on the side");
    assert_eq!(
        ok(store, &["get", "t0.k3"])["items"][0]["value"]["content"],
        "fact 3, revised"
    );
    let fsck = ok(store, &["fsck"]);
    assert_eq!(fsck["clean"], true, "{fsck}");
}

#[test]
fn a_deleted_database_is_rebuilt_from_the_packs_and_the_ref_log() {
    let dir = tempfile::tempdir().unwrap();
    let (store, snapshot) = seeded(dir.path());
    fs::remove_dir_all(store.join("db")).unwrap();
    let (code, v) = cli(&store, &["get", "t0.k3"]);
    assert_eq!(code, 5, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("fsck --repair"),
        "{v}"
    );

    let rep = ok(&store, &["fsck", "--repair"]);
    assert_eq!(rep["clean"], true, "{rep}");
    assert_eq!(rep["repair"]["old_database"], Value::Null);
    assert_eq!(
        rep["repair"]["refs_restored"],
        serde_json::json!(["HEAD", "refs/heads/main", "refs/heads/side"])
    );
    assert!(
        rep["repair"]["objects_indexed"].as_u64().unwrap() > 30,
        "{rep}"
    );
    assert_restored(&store, &snapshot);
    // Writes go on from there.
    ok(&store, &["remember", "after the repair", "-p", "n.n"]);
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
}

#[test]
fn a_damaged_database_is_reported_as_such_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let (store, snapshot) = seeded(dir.path());
    let log = store.join("db").join("db");
    let mut bytes = fs::read(&log).unwrap();
    let step = (bytes.len() / 40).max(1);
    for at in (64..bytes.len()).step_by(step) {
        bytes[at] ^= 0xff;
    }
    fs::write(&log, &bytes).unwrap();
    let (code, v) = cli(&store, &["get", "t0.k3"]);
    assert_eq!(code, 5, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("fsck --repair"),
        "{v}"
    );

    let rep = ok(&store, &["fsck", "--repair"]);
    assert_eq!(rep["repair"]["old_database"], "db.damaged", "{rep}");
    assert!(
        store.join("db.damaged").join("db").is_file(),
        "the old one is kept"
    );
    assert_restored(&store, &snapshot);
}

#[test]
fn a_store_without_a_ref_log_is_not_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = seeded(dir.path());
    fs::remove_file(store.join("reflog")).unwrap();
    let (code, v) = cli(&store, &["fsck", "--repair"]);
    assert_eq!(code, 5, "{v}");
    assert!(v["error"].as_str().unwrap().contains("no ref log"), "{v}");
    assert!(!store.join("db.damaged").exists(), "nothing changed");
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
}

#[test]
fn the_ref_log_lists_every_move_and_brings_back_a_deleted_branch() {
    let dir = tempfile::tempdir().unwrap();
    let (store, snapshot) = seeded(dir.path());
    let side_tip = snapshot[1].1.as_str().unwrap().to_string();
    ok(&store, &["branch", "-D", "side"]);
    let log = ok(&store, &["reflog", "side"]);
    let entries = log["entries"].as_array().unwrap();
    let messages: Vec<&str> = entries
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "branch: deleted side",
            "commit: Store s.x in default",
            "branch: created side"
        ]
    );
    assert_eq!(entries[0]["old"], side_tip.as_str());
    assert_eq!(entries[0]["new"], Value::Null);
    assert!(entries.iter().all(|e| e["ref"] == "side"));
    let all = ok(&store, &["reflog"]);
    let oldest: Vec<(&Value, &Value)> = all["entries"].as_array().unwrap()[..]
        .iter()
        .rev()
        .take(2)
        .map(|e| (&e["ref"], &e["new"]))
        .collect();
    assert_eq!(oldest[1].0, "HEAD");
    assert_eq!(oldest[1].1, "ref: refs/heads/main");
    assert_eq!(oldest[0].0, "main");
    assert_eq!(ok(&store, &["reflog", "main", "-n", "2"])["count"], 2);

    ok(&store, &["branch", "side", "--from", &side_tip]);
    let got = ok(&store, &["get", "s.x", "--branch", "side"]);
    assert_eq!(got["items"][0]["value"]["content"], "on the side");
}

/// Imports enough memories into `store` that its pack gets an index file, and returns it.
fn with_an_index_file(dir: &Path, store: &Path) -> std::path::PathBuf {
    let lines: String = (0..9000)
        .map(|i| {
            serde_json::json!({"key": format!("bulk.g{}.m{i}", i % 40), "namespace": "default",
                "content": format!("bulk fact number {i}"), "confidence": 1.0,
                "timestamp": 1767225600.0})
            .to_string()
                + "\n"
        })
        .collect();
    let file = dir.join("bulk.jsonl");
    fs::write(&file, lines).unwrap();
    ok(store, &["import", file.to_str().unwrap()]);
    let idx = store.join("packs").join("pack-00000001.idx");
    assert!(idx.is_file(), "a pack tail past 1 MiB gets an index file");
    idx
}

/// A pack index file whose bytes changed is found by fsck (exit 5, naming it) and rebuilt
/// from its pack by `fsck --repair`; a command that meets the damage (an object not found
/// or not where the file says) rebuilds it itself and answers right. Every branch comes
/// back either way.
#[test]
fn a_damaged_index_file_is_found_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = seeded(dir.path());
    let idx = with_an_index_file(dir.path(), &store);
    let snapshot = snapshot_of(&store);
    let good = fs::read(&idx).unwrap();

    // Its checksum: no lookup meets it, fsck checks the file whole.
    let mut bytes = good.clone();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    fs::write(&idx, &bytes).unwrap();
    let (code, v) = cli(&store, &["fsck"]);
    assert_eq!(code, 5, "{v}");
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["subject"] == "file packs/pack-00000001.idx" && f["kind"] == "corrupt");
    assert!(found, "{v}");
    let rep = ok(&store, &["fsck", "--repair"]);
    assert_eq!(rep["clean"], true, "{rep}");
    assert_restored(&store, &snapshot);
    assert!(fs::read(&idx).unwrap() == good, "rebuilt as it was");

    // Bytes of ids and places: fsck, reading every object, finds them all, and the file is
    // rebuilt.
    let mut bytes = good.clone();
    for at in [1100, good.len() / 2, good.len() - 40] {
        bytes[at] ^= 0x5a;
    }
    fs::write(&idx, &bytes).unwrap();
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
    assert!(fs::read(&idx).unwrap() == good, "rebuilt as it was");
    assert_restored(&store, &snapshot);
    ok(&store, &["remember", "after the repair", "-p", "n.n"]);
    assert_eq!(ok(&store, &["fsck"])["clean"], true);
}
