//! A store written by the previous release (format version 3, before the database's `meta`
//! tree) opens with this build: every memory reads back, its history and branches are
//! there, `fsck` finds it clean, a new memory is written beside the old ones, and
//! `fsck --repair` rebuilds the database without losing any of it.
//!
//! `tests/fixtures/store-v3-release.tar.gz` was made with the `memoir` binary built from
//! commit 5aba01a, as `M`:
//!
//! ```sh
//! t=1767225600
//! m() { t=$((t + 60)); env -i MEMOIR_AUTHOR="Fixture <fixture@example.org>" MEMOIR_NOW=$t "$M" -s store "$@"; }
//! env -i MEMOIR_NOW=$t "$M" new store
//! m remember "prefers pytest over unittest" -p preferences.coding.testing
//! m remember "indents Python with 4 spaces" -p preferences.coding.style
//! m remember -n work "the atlas deadline is 14 March" -p projects.atlas.deadline
//! m remember -n work "standup is at 09:30 on weekdays" -p meetings.standup
//! m checkout -b experiment
//! m remember "lints with ruff" -p preferences.coding.lint
//! m remember -n work "atlas runs on Postgres 16" -p projects.atlas.db
//! m checkout main
//! m remember "lives in Lisbon" -p profile.location
//! m merge experiment
//! m forget preferences.coding.style
//! m remember -n work "standup is at 10:00 on weekdays" -p meetings.standup --replace
//! tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1767225600 -cf - store \
//!     | gzip -9n > store-v3-release.tar.gz
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use memoir::store::FORMAT_VERSION;

use crate::common::{cli, memoir, Out};

/// The fixture: a store directory `store` in a gzipped tarball.
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/store-v3-release.tar.gz"
);

/// What the release's FORMAT file says.
const FORMAT: &str = "memoir-store\nformat-version: 3\nbackend: sled\n";

/// What FORMAT says once this build has opened the store (it upgrades it in place).
fn current_format() -> String {
    format!("memoir-store\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
}

/// The memories at the release's HEAD: full key, content, timestamp.
const MEMORIES: [(&str, &str, f64); 6] = [
    (
        "default:preferences.coding.testing",
        "prefers pytest over unittest",
        1767225660.0,
    ),
    (
        "default:preferences.coding.lint",
        "lints with ruff",
        1767225960.0,
    ),
    ("default:profile.location", "lives in Lisbon", 1767226140.0),
    (
        "work:projects.atlas.deadline",
        "the atlas deadline is 14 March",
        1767225780.0,
    ),
    (
        "work:projects.atlas.db",
        "atlas runs on Postgres 16",
        1767226020.0,
    ),
    (
        "work:meetings.standup",
        "standup is at 10:00 on weekdays",
        1767226320.0,
    ),
];

/// The memory forgotten before the release's HEAD.
const FORGOTTEN: &str = "default:preferences.coding.style";

/// The commits of `main`, newest first: id, parents, message.
const COMMITS: [(&str, &[&str], &str); 11] = [
    (
        RELEASE_HEAD,
        &["87ed755ddf78107ffe592c02e759e2e2dfc8d8bf221e5e06ee07d78ff5c5b326"],
        "Store meetings.standup in work",
    ),
    (
        "87ed755ddf78107ffe592c02e759e2e2dfc8d8bf221e5e06ee07d78ff5c5b326",
        &["3f6b34365997659ddd1e3246f6b4f055fe370e676ff07d7943d013517c5ac43a"],
        "Delete preferences.coding.style from default",
    ),
    (
        "3f6b34365997659ddd1e3246f6b4f055fe370e676ff07d7943d013517c5ac43a",
        &[
            "02d3229c24c0ac1962f31ffe752193c854c991f6cfa3c4f30b69907797cd52cc",
            "71c2a5a281c71e1887c99cd0a0be15aaa597901a36fb1f263e9fe97eacc54c50",
        ],
        "Merge branch 'experiment' into main",
    ),
    (
        "02d3229c24c0ac1962f31ffe752193c854c991f6cfa3c4f30b69907797cd52cc",
        &["7e11104ed9165d480fa3db83b163eba409bc9dc53037d73372fc75a47d8e00e0"],
        "Store profile.location in default",
    ),
    (
        "71c2a5a281c71e1887c99cd0a0be15aaa597901a36fb1f263e9fe97eacc54c50",
        &["7bb971ade364999e3e2762882b768153152f5f0f1705619b32936ecdff9ba18b"],
        "Store projects.atlas.db in work",
    ),
    (
        "7bb971ade364999e3e2762882b768153152f5f0f1705619b32936ecdff9ba18b",
        &["7e11104ed9165d480fa3db83b163eba409bc9dc53037d73372fc75a47d8e00e0"],
        "Store preferences.coding.lint in default",
    ),
    (
        "7e11104ed9165d480fa3db83b163eba409bc9dc53037d73372fc75a47d8e00e0",
        &["95a942b430be33d17432fb4c2885c116caf4929f783f4726adad6f74cf05fdf2"],
        "Store meetings.standup in work",
    ),
    (
        "95a942b430be33d17432fb4c2885c116caf4929f783f4726adad6f74cf05fdf2",
        &["3db525a110fa07d2d71d1cef3c7dc0d313d587ef26b8ed7533de4bdb33accac2"],
        "Store projects.atlas.deadline in work",
    ),
    (
        "3db525a110fa07d2d71d1cef3c7dc0d313d587ef26b8ed7533de4bdb33accac2",
        &["5746da48d5b200ad11d2f5f0514218dad6fd8df7092ab6b5cedfa2d22f9ce8af"],
        "Store preferences.coding.style in default",
    ),
    (
        "5746da48d5b200ad11d2f5f0514218dad6fd8df7092ab6b5cedfa2d22f9ce8af",
        &["a964f06a3c4cce73869c0bfbd93f21e672cc3623f082952941d0593e4d5764ff"],
        "Store preferences.coding.testing in default",
    ),
    (
        "a964f06a3c4cce73869c0bfbd93f21e672cc3623f082952941d0593e4d5764ff",
        &[],
        "Initialize memoir store",
    ),
];

/// The release's head: the tip of `main`.
const RELEASE_HEAD: &str = "c88ba82685b6a992ebf6843dddd1fd699ad20e09fd7dc218c5532e16c44d36f6";

/// The tip of `experiment`, merged into `main`.
const EXPERIMENT: &str = "71c2a5a281c71e1887c99cd0a0be15aaa597901a36fb1f263e9fe97eacc54c50";

/// The memory this build adds, the clock it writes at, and the commit it makes (the same id
/// the release makes for it: the commit encoding is unchanged).
const NEW_KEY: &str = "default:habits.reading";
const NEW_CONTENT: &str = "reads release notes on Fridays";
const NEW_NOW: &str = "1767230000";
const NEW_COMMIT: &str = "5f3bf12806efd64c1fd20878223a658c2a3d33db3e40da27c4e2b2433da4a94c";

/// The fixture `fixture` unpacked into `dir`: its store directory.
fn unpack(dir: &Path, fixture: &str) -> PathBuf {
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(fixture)
        .arg("-C")
        .arg(dir)
        .output()
        .expect("run tar");
    assert!(
        out.status.success(),
        "tar: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("store")
}

/// `get --json` of every memory of `memories` and of the forgotten one: each found with
/// its content and timestamp, the forgotten one not found.
fn assert_memories(store: &Path, memories: &[(&str, &str, f64)]) {
    let mut keys: Vec<&str> = memories.iter().map(|m| m.0).collect();
    keys.push(FORGOTTEN);
    let mut args = vec!["get"];
    args.extend(&keys);
    let (code, v) = cli(store, &args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["count"], keys.len(), "{v}");
    assert_eq!(v["found_count"], memories.len(), "{v}");
    let items = v["items"].as_array().expect("items");
    assert_eq!(items.len(), keys.len(), "{v}");
    for (item, (key, content, timestamp)) in items.iter().zip(memories) {
        assert_eq!(item["full_key"], *key, "{item}");
        assert_eq!(item["found"], true, "{item}");
        assert_eq!(item["value"]["content"], *content, "{item}");
        assert_eq!(item["value"]["timestamp"], *timestamp, "{item}");
        assert_eq!(
            item["value"]["entries"],
            json!([{
                "confidence": 1.0,
                "content": content,
                "status": "active",
                "timestamp": timestamp,
            }]),
            "{item}"
        );
    }
    let last = &items[memories.len()];
    assert_eq!(last["full_key"], FORGOTTEN, "{last}");
    assert_eq!(last["found"], false, "{last}");
    assert_eq!(last["value"], Value::Null, "{last}");
}

/// `log --json` of `main`: the ids, parents and messages of `commits`, newest first.
fn assert_log(store: &Path, commits: &[(&str, &[&str], &str)]) {
    let (code, v) = cli(store, &["log"]);
    assert_eq!(code, 0, "{v}");
    let got: Vec<(String, Vec<String>, String)> = v["commits"]
        .as_array()
        .expect("commits")
        .iter()
        .map(|c| {
            let parents = c["parents"].as_array().expect("parents");
            (
                c["hash"].as_str().expect("hash").to_string(),
                parents
                    .iter()
                    .map(|p| p.as_str().expect("parent").to_string())
                    .collect(),
                c["message"].as_str().expect("message").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, Vec<String>, String)> = commits
        .iter()
        .map(|(id, parents, message)| {
            (
                id.to_string(),
                parents.iter().map(|p| p.to_string()).collect(),
                message.to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// `fsck --json` (with `extra` options): clean, having checked `commits` commits, `objects`
/// objects and the three refs (HEAD, main, experiment). Returns its report.
fn assert_fsck_clean(store: &Path, extra: &[&str], commits: u64, objects: u64) -> Value {
    let mut args = vec!["fsck"];
    args.extend(extra);
    let (code, v) = cli(store, &args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(v["findings"], json!([]), "{v}");
    assert_eq!(v["commits_checked"], commits, "{v}");
    assert_eq!(v["objects_checked"], objects, "{v}");
    assert_eq!(v["refs_checked"], 3, "{v}");
    assert_eq!(v["unreachable_objects"], 0, "{v}");
    v
}

#[test]
fn a_store_the_previous_release_wrote_reads_writes_and_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let store = unpack(dir.path(), FIXTURE);
    assert_eq!(
        std::fs::read_to_string(store.join("FORMAT")).unwrap(),
        FORMAT
    );

    // What the release wrote reads back: memories, the forgotten one's absence, history,
    // branches, the value before the last replace, and the ref log.
    assert_memories(&store, &MEMORIES);
    assert_log(&store, &COMMITS);
    let (code, v) = cli(&store, &["branch"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v,
        json!({"branches": ["experiment", "main"], "current": "main"})
    );
    let (code, v) = cli(&store, &["log", "-n", "1", "experiment"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["commits"][0]["hash"], EXPERIMENT, "{v}");
    let (code, v) = cli(&store, &["get", "--at", "HEAD~1", "work:meetings.standup"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["items"][0]["value"]["content"], "standup is at 09:30 on weekdays",
        "{v}"
    );
    let (code, v) = cli(&store, &["reflog"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["count"], 15, "{v}");
    assert_eq!(v["entries"][0]["ref"], "main", "{v}");
    assert_eq!(v["entries"][0]["new"], RELEASE_HEAD, "{v}");
    assert_eq!(v["entries"][0]["old"], COMMITS[1].0, "{v}");
    assert_fsck_clean(&store, &[], 11, 30);

    // A new memory is committed on top of the release's head.
    let out = memoir()
        .env("MEMOIR_NOW", NEW_NOW)
        .arg("-s")
        .arg(&store)
        .args(["--json", "remember", NEW_CONTENT, "-p", NEW_KEY])
        .output()
        .expect("run memoir");
    let out = Out::from(out);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["full_key"], NEW_KEY, "{v}");
    assert_eq!(v["commit_hash"], NEW_COMMIT, "{v}");

    let mut memories = MEMORIES.to_vec();
    memories.push((NEW_KEY, NEW_CONTENT, 1767230000.0));
    let mut commits: Vec<(&str, &[&str], &str)> = vec![(
        NEW_COMMIT,
        &[RELEASE_HEAD],
        "Store habits.reading in default",
    )];
    commits.extend(COMMITS);
    assert_memories(&store, &memories);
    assert_log(&store, &commits);
    assert_fsck_clean(&store, &[], 12, 33);

    // A repair rebuilds the database from the packs and the ref log: nothing is skipped,
    // torn or rolled back, every ref is restored, and every memory still reads back.
    let v = assert_fsck_clean(&store, &["--repair"], 12, 33);
    let repair = &v["repair"];
    assert_eq!(repair["objects_indexed"], 33, "{v}");
    assert_eq!(
        repair["refs_restored"],
        json!(["HEAD", "refs/heads/experiment", "refs/heads/main"]),
        "{v}"
    );
    assert_eq!(repair["refs_rolled_back"], json!([]), "{v}");
    assert_eq!(repair["skipped"], json!([]), "{v}");
    assert_eq!(repair["torn_packs"], json!([]), "{v}");
    assert_memories(&store, &memories);
    assert_log(&store, &commits);
    assert_fsck_clean(&store, &[], 12, 33);
    assert_eq!(
        std::fs::read_to_string(store.join("FORMAT")).unwrap(),
        current_format()
    );
}

/// A store of the release before the object index left the database: version 3, with 4,202
/// memories, most of its index in a run file (`db/runs/`) and the rest in the database,
/// written by the `memoir` binary built from commit f943ad7:
///
/// ```sh
/// t=1767225600
/// m() { t=$((t + 60)); env -i MEMOIR_AUTHOR="Fixture <fixture@example.org>" MEMOIR_NOW=$t "$M" -s store "$@"; }
/// env -i MEMOIR_NOW=$t "$M" new store
/// python3 -c "import json
/// for i in range(4200):
///     print(json.dumps({'key': f'facts.batch{i//100}.n{i}', 'content': f'fact {i}'}))" > facts.jsonl
/// m import facts.jsonl
/// m remember "prefers pytest over unittest" -p preferences.coding.testing
/// m checkout -b experiment; m remember "lints with ruff" -p preferences.coding.lint
/// m checkout main; m merge experiment; m forget facts.batch0.n1; m gc
/// m remember "lives in Lisbon" -p profile.location
/// ```
const RUNS_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/store-v3-runs.tar.gz"
);

/// `get` of `key`: its content, or `None` when it is not found (exit 2).
fn content_of(store: &Path, key: &str) -> Option<String> {
    let (code, v) = cli(store, &["get", key]);
    assert_eq!(code, if v["found_count"] == 0 { 2 } else { 0 }, "{v}");
    v["items"][0]["value"]["content"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_store_whose_index_is_in_run_files_upgrades_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let store = unpack(dir.path(), RUNS_FIXTURE);
    assert_eq!(
        std::fs::read_to_string(store.join("FORMAT")).unwrap(),
        FORMAT
    );
    assert!(store.join("db/runs").is_dir());
    let (code, v) = cli(&store, &["status"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["memory_count"], 4202, "{v}");
    assert_eq!(
        std::fs::read_to_string(store.join("FORMAT")).unwrap(),
        current_format()
    );
    // The database holds only the refs now; the index is beside its pack.
    assert!(!store.join("db/runs").exists());
    assert!(!store.join("cache/pack-00000001.idx").exists());
    assert!(store.join("packs/pack-00000001.idx").is_file());
    for (key, content) in [
        ("facts.batch0.n0", Some("fact 0")),
        ("facts.batch0.n1", None),
        ("facts.batch41.n4199", Some("fact 4199")),
        ("preferences.coding.lint", Some("lints with ruff")),
        ("profile.location", Some("lives in Lisbon")),
    ] {
        assert_eq!(content_of(&store, key).as_deref(), content, "{key}");
    }
    let (code, v) = cli(&store, &["log", "-n", "1"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["commits"][0]["message"], "Store profile.location in default",
        "{v}"
    );
    let (code, v) = cli(&store, &["fsck"]);
    assert_eq!((code, &v["clean"]), (0, &json!(true)), "{v}");
    let out = Out::from(
        memoir()
            .arg("-s")
            .arg(&store)
            .args([
                "--json",
                "remember",
                "reads on Sundays",
                "-p",
                "habits.reading",
            ])
            .output()
            .expect("run memoir"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (code, v) = cli(&store, &["fsck", "--repair"]);
    assert_eq!((code, &v["clean"]), (0, &json!(true)), "{v}");
    assert_eq!(v["repair"]["refs_rolled_back"], json!([]), "{v}");
    assert_eq!(
        content_of(&store, "habits.reading").as_deref(),
        Some("reads on Sundays")
    );
    assert_eq!(
        content_of(&store, "facts.batch20.n2000").as_deref(),
        Some("fact 2000")
    );
}
