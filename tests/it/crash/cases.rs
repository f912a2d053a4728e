//! The commands under test, each on a store prepared for it: a test per command.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use super::check::state;
use super::{exec, run_case, Case};
use crate::common::{open_sled_when_free, pack_records};

/// `memoir -s STORE --json ARGS` in `root`, which must succeed (preparing a case).
fn prep_at(root: &Path, store: &str, args: &[&str]) -> Value {
    let mut a: Vec<OsString> = vec!["-s".into(), store.into(), "--json".into()];
    a.extend(args.iter().map(OsString::from));
    let run = exec(root, Path::new(env!("CARGO_BIN_EXE_memoir")), &a);
    assert_eq!(
        run.code,
        Some(0),
        "preparing: {args:?}: {} / {}",
        run.outcome(),
        run.stdout
    );
    run.json().unwrap_or(Value::Null)
}

/// `memoir -s s --json ARGS` in `root`, which must succeed.
fn prep(root: &Path, args: &[&str]) -> Value {
    prep_at(root, "s", args)
}

/// A store `s` with twelve facts on `main` (`t<i % 3>.k<i>`), a secret at `vault.key`, a
/// branch `side` that changed `t0.k3` and added `side.x` while `main` added `main.only`, and
/// 200 memories (marked `zqscrapxv`) on a branch deleted since, whose objects only a
/// collection removes.
fn base() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    prep(r, &["new", "s"]);
    for i in 1..=12 {
        let content = format!("fact {i} about topic{}", i % 3);
        prep(
            r,
            &["remember", &content, "-p", &format!("t{}.k{i}", i % 3)],
        );
    }
    prep(
        r,
        &["remember", "zqsecretxv opens the vault", "-p", "vault.key"],
    );
    prep(r, &["branch", "side"]);
    prep(
        r,
        &[
            "remember",
            "on the side",
            "-p",
            "side.x",
            "--branch",
            "side",
        ],
    );
    let revised = ["--branch", "side", "--replace"];
    prep(
        r,
        &[
            &["remember", "fact 3, revised", "-p", "t0.k3"][..],
            &revised,
        ]
        .concat(),
    );
    prep(r, &["remember", "only on main", "-p", "main.only"]);
    let bulk: String = (0..200)
        .map(|i| {
            serde_json::json!({"key": format!("scrap.item{i:03}"), "namespace": "default",
                "content": format!("zqscrapxv bulk memory {i}")})
            .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(r.join("scrap.jsonl"), bulk).unwrap();
    prep(r, &["import", "scrap.jsonl", "--branch", "scrap"]);
    prep(r, &["branch", "-D", "scrap"]);
    root
}

/// `base` with a directory remote `origin` at `remote` holding its `main`.
fn with_remote() -> tempfile::TempDir {
    let root = base();
    let r = root.path();
    let url = r.join("remote");
    prep(r, &["remote", "add", "origin", url.to_str().unwrap()]);
    prep(r, &["push", "origin", "main"]);
    root
}

/// `with_remote`, where another store (`b`, a clone) has since pushed two memories to main.
fn remote_ahead() -> tempfile::TempDir {
    let root = with_remote();
    let r = root.path();
    prep(r, &["clone", r.join("remote").to_str().unwrap(), "b"]);
    prep_at(
        r,
        "b",
        &["remember", "from the other store", "-p", "other.a"],
    );
    prep_at(
        r,
        "b",
        &["remember", "fact 5, from b", "-p", "t2.k5", "--replace"],
    );
    prep_at(r, "b", &["push", "origin", "main"]);
    root
}

#[test]
fn remember() {
    let case = Case::new(
        "remember",
        base(),
        &["remember", "a fresh fact", "-p", "fresh.k"],
    );
    run_case(&case);
}

#[test]
fn import() {
    let root = base();
    let lines = [
        serde_json::json!({"key": "imp.a", "namespace": "default", "content": "imported a"}),
        serde_json::json!({"key": "imp.b", "namespace": "notes", "content": "imported b"}),
        serde_json::json!({"key": "t2.k2", "namespace": "default", "content": "fact 2, anew"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = root.path().join("in.jsonl");
    std::fs::write(&file, text).unwrap();
    let case = Case::new("import", root, &["import", file.to_str().unwrap()]);
    run_case(&case);
}

/// An import whose records take the newest pack's tail past a megabyte, so that its flush
/// also writes the pack's index file (a temporary file, synced, renamed, the directory
/// synced): every one of those steps is a crash point too.
#[test]
fn import_writing_an_index_file() {
    let root = base();
    let text: String = (0..4000)
        .map(|i| {
            let content = format!(
                "bulk fact {i}: {}",
                "the agent learned a thing. ".repeat(10)
            );
            format!(
                "{}\n",
                serde_json::json!({"key": format!("bulk.g{}.m{i}", i % 20), "content": content})
            )
        })
        .collect();
    let file = root.path().join("bulk.jsonl");
    std::fs::write(&file, text).unwrap();
    let case = Case::new(
        "import-index-file",
        root,
        &["import", file.to_str().unwrap()],
    );
    run_case(&case);
}

#[test]
fn merge() {
    let mut case = Case::new("merge", base(), &["merge", "side"]);
    case.revs = vec!["main", "side"];
    run_case(&case);
}

#[test]
fn forget_purge() {
    let mut case = Case::new(
        "forget --purge",
        base(),
        &["forget", "--purge", "vault.key"],
    );
    case.revs = vec!["main", "side"];
    case.erased = Some(("zqsecretxv", true));
    case.rerun = true;
    run_case(&case);
}

#[test]
fn gc() {
    let mut case = Case::new("gc", base(), &["gc"]);
    case.revs = vec!["main", "side"];
    case.erased = Some(("zqscrapxv", false));
    case.rerun = true;
    run_case(&case);
}

/// A repair case: `damage` is done to the store after its memories are read.
fn repair(name: &'static str, root: tempfile::TempDir, damage: impl FnOnce(&Path)) {
    let revs = vec!["main", "side"];
    let before = state(root.path(), &revs).unwrap();
    damage(&root.path().join("s"));
    let mut case = Case::new(name, root, &["fsck", "--repair"]);
    case.revs = revs;
    case.repair = true;
    case.before = Some(before);
    run_case(&case);
}

#[test]
fn fsck_repair_of_a_lost_database() {
    repair("fsck --repair (db/ lost)", base(), |s| {
        std::fs::remove_dir_all(s.join("db")).unwrap();
    });
}

#[test]
fn fsck_repair_of_a_damaged_database_and_a_torn_pack() {
    let root = base();
    let r = root.path();
    // A record cut short by a crash (an id and a length of 300, then 50 of its bytes) at the
    // end of the newest pack, and two commits written after it.
    let packs = r.join("s").join("packs");
    let mut names: Vec<_> = std::fs::read_dir(&packs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let newest = names.last().unwrap();
    let mut bytes = std::fs::read(newest).unwrap();
    bytes.extend([0x5a; 32]);
    bytes.extend(300u32.to_be_bytes());
    bytes.extend([0x61; 50]);
    std::fs::write(newest, bytes).unwrap();
    prep(
        r,
        &["remember", "written after the torn record", "-p", "torn.a"],
    );
    prep(
        r,
        &[
            "remember",
            "and another",
            "-p",
            "torn.b",
            "--branch",
            "side",
        ],
    );
    repair("fsck --repair (db/db damaged, torn pack)", root, |s| {
        // Bytes of sled's log flipped all along it, as in tests/it/cli/repair.rs.
        let log = s.join("db").join("db");
        let mut bytes = std::fs::read(&log).unwrap();
        let step = (bytes.len() / 40).max(1);
        for at in (64..bytes.len()).step_by(step) {
            bytes[at] ^= 0xff;
        }
        std::fs::write(&log, &bytes).unwrap();
    });
}

#[test]
fn push() {
    let root = with_remote();
    prep(root.path(), &["remember", "to be pushed", "-p", "pushed.a"]);
    prep(
        root.path(),
        &["remember", "fact 4, revised", "-p", "t1.k4", "--replace"],
    );
    let mut case = Case::new("push", root, &["push", "origin", "main"]);
    case.revs = vec!["main", "origin/main"];
    case.remote = true;
    case.rerun = true;
    run_case(&case);
}

#[test]
fn fetch() {
    let mut case = Case::new("fetch", remote_ahead(), &["fetch", "origin"]);
    case.revs = vec!["main", "origin/main"];
    case.rerun = true;
    run_case(&case);
}

#[test]
fn pull() {
    let root = remote_ahead();
    prep(root.path(), &["remember", "only here", "-p", "local.k"]);
    let mut case = Case::new("pull", root, &["pull", "origin", "main"]);
    case.revs = vec!["main", "origin/main"];
    run_case(&case);
}

#[test]
fn watch_scan() {
    let root = base();
    let doc = root.path().join("doc.md");
    let text = |changed: &str| {
        format!(
            "# Field notes\n\n## Rivers\n\nThe river runs {changed}.\n\n## Granite\n\n\
             Granite holds.\n\n## Lanterns\n\nLanterns at dusk.\n"
        )
    };
    std::fs::write(&doc, text("north")).unwrap();
    prep(root.path(), &["watch", "add", doc.to_str().unwrap()]);
    std::fs::write(&doc, text("south, then west")).unwrap();
    run_case(&Case::new("watch scan", root, &["watch", "scan"]));
}

/// Rewrites the store at `store` in the version-2 layout: one sled entry per object in tree
/// `index` (pack u32, record offset u64, length u32, big-endian), no runs, no `meta`, no
/// caches, FORMAT saying 2.
fn downgrade_to_v2(store: &Path) {
    let mut index = std::collections::BTreeMap::new();
    let mut packs: Vec<_> = std::fs::read_dir(store.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    packs.sort();
    for pack in packs {
        let name = pack.file_name().unwrap().to_str().unwrap().to_string();
        let no: u32 = name.strip_prefix("pack-").unwrap().parse().unwrap();
        for (id, offset, len) in pack_records(&pack) {
            let loc = [
                &no.to_be_bytes()[..],
                &offset.to_be_bytes(),
                &len.to_be_bytes(),
            ]
            .concat();
            index.insert(id, loc);
        }
    }
    let db = open_sled_when_free(&store.join("db"));
    for tree in ["meta", "recent", "run-list"] {
        db.drop_tree(tree).unwrap();
    }
    let tree = db.open_tree("index").unwrap();
    for (id, loc) in &index {
        tree.insert(id, loc.as_slice()).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    for dir in [store.join("db").join("runs"), store.join("cache")] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
    std::fs::write(
        store.join("FORMAT"),
        "memoir-store\nformat-version: 2\nbackend: sled\n",
    )
    .unwrap();
}

/// The store upgrade: a write that opens a store of format version 2, which rebuilds its
/// database in the current format first.
#[test]
fn upgrade() {
    let root = base();
    let before = state(root.path(), &["main"]).unwrap();
    downgrade_to_v2(&root.path().join("s"));
    let args = ["remember", "written after the upgrade", "-p", "up.x"];
    let mut case = Case::new("upgrade", root, &args);
    case.before = Some(before);
    run_case(&case);
}
