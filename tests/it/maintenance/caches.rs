//! The derived caches under `cache/`, through the real binary: a cache naming objects gc
//! removed is rebuilt by its reader (never an error), gc prunes every cache of what it
//! removed, fsck reports stale or unusable caches without failing, and a cache path of the
//! wrong type never blocks a write. Also the damage fsck and gc must see (a pack's magic, a
//! corrupt reachable value, a damaged record id) and how it is worded.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{cli, memoir, new_store, Out, Session};
use memoir::repo::graph_cache::CommitGraph;
use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};

/// `memoir -s STORE args...` (human output unless `--json` is among them).
fn run(store: &Path, args: &[&str]) -> Out {
    Out::from(memoir().arg("-s").arg(store).args(args).output().unwrap())
}

/// Runs with `--json` and requires exit 0.
fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = cli(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// Every regular file under `dir`, recursively.
pub(super) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The files of the store that hold `needle`.
pub(super) fn files_holding(store: &Path, needle: &[u8]) -> Vec<PathBuf> {
    files_under(store)
        .into_iter()
        .filter(|p| std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)))
        .collect()
}

/// The hit keys of a search.
fn hit_keys(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect()
}

/// The `caches` findings of fsck, which must be sound (exit 0).
fn cache_findings(store: &Path) -> Vec<Value> {
    let v = ok(store, &["fsck"]);
    assert_eq!(v["clean"], true, "{v}");
    v["caches"].as_array().unwrap().clone()
}

/// The reproduction: a branch whose text was searched, deleted and collected. Every
/// later search and recall works (CLI and MCP), fsck has nothing to say, and no file of the
/// store holds the branch's text any more.
#[test]
fn a_deleted_collected_branch_leaves_search_and_recall_working() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(
        &store,
        &["remember", "alpha is the first letter", "-p", "a.b"],
    );
    ok(
        &store,
        &["remember", "gammaray burst", "-p", "e.c", "--branch", "exp"],
    );
    assert_eq!(
        hit_keys(&ok(&store, &["search", "gammaray", "--branch", "exp"])),
        ["e.c"]
    );
    // The commit graph learns the branch's commits too.
    ok(&store, &["log", "exp"]);
    let exp_tip = ok(&store, &["log", "-n", "1", "exp"])["commits"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&store, &["branch", "-D", "exp"]);
    let gc = ok(&store, &["gc"]);
    assert!(gc["objects_removed"].as_u64().unwrap() >= 3, "{gc}");
    for _ in 0..2 {
        assert_eq!(hit_keys(&ok(&store, &["search", "alpha"])), ["a.b"]);
    }
    let rc = ok(&store, &["recall", "alpha letter"]);
    assert_eq!(rc["memories"][0]["path"], "a.b");
    assert_eq!(
        hit_keys(&ok(&store, &["search", "gammaray"])),
        Vec::<String>::new()
    );
    assert_eq!(cache_findings(&store), Vec::<Value>::new());
    assert_eq!(files_holding(&store, b"gammaray"), Vec::<PathBuf>::new());
    // The commit graph forgot the branch's commits.
    let g = CommitGraph::load(&store.join("cache").join("commit-graph"));
    assert!(!g.is_empty());
    let raw: [u8; 32] = memoir::object::from_hex(&exp_tip)
        .unwrap()
        .try_into()
        .unwrap();
    let exp_tip = memoir::object::ObjectId::from_bytes(raw);
    assert_eq!(g.position(&exp_tip), None);

    // The same over MCP, after the same steps on a fresh branch.
    ok(
        &store,
        &[
            "remember",
            "deltawave text",
            "-p",
            "e.d",
            "--branch",
            "exp2",
        ],
    );
    ok(&store, &["search", "deltawave", "--branch", "exp2"]);
    ok(&store, &["branch", "-D", "exp2"]);
    ok(&store, &["gc"]);
    let s = Session::stdio(&store, &[], &[], &[]);
    let se = s.ok("memoir_search", json!({"query": "alpha"}));
    assert_eq!(se["hits"][0]["key"], "a.b");
    let rc = s.ok(
        "memoir_recall",
        json!({"query": "alpha", "mode": "lexical"}),
    );
    assert_eq!(rc["memories"][0]["path"], "a.b");
}

/// A cache that names a removed tree (put back by hand, as an interrupted gc or purge of an
/// older build could leave it) is a non-fatal fsck finding, is rebuilt by the next search,
/// and is dropped by gc, as is a temporary file a killed cache writer left.
#[test]
fn stale_caches_are_reported_rebuilt_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(
        &store,
        &["remember", "alpha is the first letter", "-p", "a.b"],
    );
    ok(
        &store,
        &["remember", "gammaray burst", "-p", "e.c", "--branch", "exp"],
    );
    ok(&store, &["search", "gammaray", "--branch", "exp"]);
    ok(&store, &["log", "exp"]);
    let cache = store.join("cache");
    let saved: Vec<(PathBuf, Vec<u8>)> = ["lexical.idx", "commit-graph"]
        .iter()
        .map(|f| (cache.join(f), std::fs::read(cache.join(f)).unwrap()))
        .collect();
    ok(&store, &["branch", "-D", "exp"]);
    ok(&store, &["gc"]);
    let put_back = || {
        for (p, b) in &saved {
            std::fs::write(p, b).unwrap();
        }
        std::fs::write(cache.join("lexical.idx.tmp.4242.0"), b"gammaray burst").unwrap();
    };
    put_back();

    let found = cache_findings(&store);
    let files: Vec<&str> = found.iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        [
            "cache/commit-graph",
            "cache/lexical.idx",
            "cache/lexical.idx.tmp.4242.0"
        ],
        "{found:?}"
    );
    assert!(found.iter().all(|f| f["kind"] == "stale"), "{found:?}");
    let human = run(&store, &["fsck"]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("Store is sound"), "{}", human.stdout);
    assert!(
        human.stdout.contains("⚠ cache/lexical.idx:"),
        "{}",
        human.stdout
    );

    // A reader rebuilds the index (saying so with -v), and it is sound again.
    let v = run(&store, &["-v", "search", "alpha"]);
    assert_eq!(v.code, 0, "{}", v.stderr);
    assert!(v.stdout.contains("a.b"), "{}", v.stdout);
    assert!(
        v.stderr.contains("index built from the store"),
        "{}",
        v.stderr
    );
    assert_eq!(
        hit_keys(&ok(&store, &["search", "gammaray"])),
        Vec::<String>::new()
    );

    // gc drops what is stale, even with nothing to collect.
    put_back();
    let g = run(&store, &["-v", "gc"]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert!(
        g.stderr.contains("removed the lexical index"),
        "{}",
        g.stderr
    );
    assert!(
        g.stderr.contains("pruned 1 removed commit(s)"),
        "{}",
        g.stderr
    );
    assert!(g.stderr.contains("temporary cache file"), "{}", g.stderr);
    assert_eq!(cache_findings(&store), Vec::<Value>::new());
    assert_eq!(files_holding(&store, b"gammaray"), Vec::<PathBuf>::new());
    assert_eq!(hit_keys(&ok(&store, &["search", "alpha"])), ["a.b"]);
}

/// A cache path of the wrong type (`cache/head` a directory, `cache` a file, a cache file that
/// is a directory) never blocks a write: every write succeeds, reads fall back to the store
/// (saying so with -v), and fsck reports the path without failing.
#[test]
fn cache_paths_of_the_wrong_type_never_block_writes() {
    type Setup = fn(&Path);
    let setups: [(&str, Setup); 4] = [
        ("cache/head", |c| {
            std::fs::create_dir_all(c.join("head/inner")).unwrap()
        }),
        ("cache", |c| std::fs::write(c, b"a file").unwrap()),
        ("cache/lexical.idx", |c| {
            std::fs::create_dir_all(c.join("lexical.idx")).unwrap()
        }),
        ("cache/commit-graph", |c| {
            std::fs::create_dir_all(c.join("commit-graph")).unwrap()
        }),
    ];
    for (what, setup) in setups {
        let dir = tempfile::tempdir().unwrap();
        let store = new_store(dir.path());
        let cache = store.join("cache");
        let _ = std::fs::remove_dir_all(&cache);
        setup(&cache);
        let lines = dir.path().join("in.jsonl");
        std::fs::write(
            &lines,
            "{\"key\": \"i.a\", \"namespace\": \"default\", \"content\": \"imported fact\"}\n",
        )
        .unwrap();
        for args in [
            &["remember", "first fact", "-p", "a.b"][..],
            &["remember", "second fact", "-p", "a.c", "--branch", "side"],
            &["import", lines.to_str().unwrap()],
            &["merge", "side"],
            &["forget", "a.b"],
            &["checkout", "side"],
            &["checkout", "main"],
            &["branch", "-D", "side"],
            &["gc"],
            &["forget", "--purge", "a.b"],
        ] {
            let (code, v) = cli(&store, args);
            assert_eq!(code, 0, "{what}: {args:?}: {v}");
        }
        let s = run(&store, &["-v", "search", "fact"]);
        assert_eq!(s.code, 0, "{what}: {}", s.stderr);
        assert!(s.stdout.contains("a.c"), "{what}: {}", s.stdout);
        if what == "cache" || what == "cache/lexical.idx" {
            assert!(
                s.stderr.contains("index cache not saved"),
                "{what}: {}",
                s.stderr
            );
        }
        ok(&store, &["log"]);
        ok(&store, &["blame", "a.c"]);
        let found = cache_findings(&store);
        assert_eq!(found.len(), 1, "{what}: {found:?}");
        assert_eq!(
            (found[0]["file"].as_str(), found[0]["kind"].as_str()),
            (Some(what), Some("unusable"))
        );
        // Nothing of the user's was removed.
        assert!(
            std::fs::symlink_metadata(store.join(what)).is_ok(),
            "{what}"
        );
    }
}

/// fsck checks that every pack begins with its magic (exit 5, naming the file), and gc,
/// whose mark phase finds every object sound, rewrites the pack.
#[test]
fn a_damaged_pack_header_is_flagged_by_fsck_and_rewritten_by_gc() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["remember", "alpha fact", "-p", "a.b"]);
    let pack = store.join("packs").join("pack-00000001");
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[..4].copy_from_slice(b"XXXX");
    std::fs::write(&pack, &bytes).unwrap();
    let (code, v) = cli(&store, &["fsck"]);
    assert_eq!(code, 5, "{v}");
    let f = &v["findings"][0];
    assert_eq!(f["subject"], "file packs/pack-00000001", "{v}");
    assert_eq!(f["kind"], "corrupt");
    assert!(f["detail"].as_str().unwrap().contains("pack magic"), "{v}");
    ok(&store, &["gc"]);
    assert!(!pack.exists());
    assert_eq!(ok(&store, &["fsck"])["findings"], json!([]));
    assert_eq!(
        ok(&store, &["get", "a.b"])["items"][0]["value"]["content"],
        "alpha fact"
    );
}

/// gc refuses (exit 5, nothing removed) when a reachable value is corrupt, as its help says:
/// it reads every reachable object first, values included.
#[test]
fn gc_refuses_a_corrupt_reachable_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["remember", "Original text", "-p", "a.b"]);
    ok(
        &store,
        &["remember", "doomed", "-p", "d.d", "--branch", "gone"],
    );
    ok(&store, &["branch", "-D", "gone"]);
    let unreachable = ok(&store, &["fsck"])["unreachable_objects"].clone();
    assert!(unreachable.as_u64().unwrap() > 0);
    let pack = store.join("packs").join("pack-00000001");
    let mut bytes = std::fs::read(&pack).unwrap();
    let at = bytes.windows(8).position(|w| w == b"Original").unwrap();
    bytes[at..at + 8].copy_from_slice(b"Tampered");
    std::fs::write(&pack, &bytes).unwrap();
    let (code, v) = cli(&store, &["gc"]);
    assert_eq!(code, 5, "{v}");
    assert!(v["error"].as_str().unwrap().contains("is corrupt"), "{v}");
    let (code, v) = cli(&store, &["fsck"]);
    assert_eq!(code, 5);
    assert_eq!(v["unreachable_objects"], unreachable, "gc removed nothing");
}

/// A record whose id bytes are damaged is reported as the damaged object it is, saying
/// where and what is wrong, never as "unreadable kind tag: truncated at byte 0".
#[test]
fn damaged_record_ids_are_reported_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    ok(&store, &["remember", "alpha fact", "-p", "a.b"]);
    // A repair writes the pack's index file, which then names the record.
    ok(&store, &["fsck", "--repair"]);
    // The value's record: find its id from the tree, then its record in the pack.
    let value = {
        let repo = Repo::open(Store::open(&store, &OpenOptions::default()).unwrap()).unwrap();
        let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
        let key = memoir::key::Key::new("default", "a.b").unwrap().encode();
        repo.tree().get(&root, &key).unwrap().unwrap()
    };
    let pack = store.join("packs").join("pack-00000001");
    let mut bytes = std::fs::read(&pack).unwrap();
    let at = bytes
        .windows(32)
        .position(|w| w == value.as_bytes())
        .unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(&pack, &bytes).unwrap();
    let words = format!("the record at byte {at} of packs/pack-00000001 names another object");
    let (code, v) = cli(&store, &["get", "a.b"]);
    assert_eq!(code, 5, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains(&value.to_hex()) && e.contains(&words), "{e}");
    let (code, v) = cli(&store, &["fsck"]);
    assert_eq!(code, 5);
    let d = v["findings"][0]["detail"].as_str().unwrap();
    assert!(
        d.contains(&words) && !d.contains("truncated at byte 0"),
        "{v}"
    );
    assert_eq!(
        v["findings"][0]["subject"],
        format!("object {}", value.to_hex())
    );
}

/// gc prunes the lexical index by the trees its two files name: a full file of a removed
/// tree whose delta reaches HEAD's tree is written whole there (the index stays warm and
/// closed reads), and a delta to a removed tree goes while the full file stays.
#[test]
fn gc_prunes_the_lexical_index_by_the_trees_its_files_name() {
    let cache_of = |store: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(store.join("cache"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("lexical"))
            .collect();
        names.sort();
        names
    };
    for delta_reaches_head in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let store = new_store(dir.path());
        ok(
            &store,
            &["remember", "alpha is the first letter", "-p", "a.b"],
        );
        ok(
            &store,
            &["remember", "gammaray burst", "-p", "e.c", "--branch", "exp"],
        );
        if delta_reaches_head {
            ok(&store, &["search", "gammaray", "--branch", "exp"]);
            ok(&store, &["search", "alpha"]);
        } else {
            ok(&store, &["search", "alpha"]);
            ok(&store, &["search", "gammaray", "--branch", "exp"]);
        }
        assert_eq!(cache_of(&store), ["lexical.delta", "lexical.idx"]);
        ok(&store, &["branch", "-D", "exp"]);
        let g = run(&store, &["-v", "gc"]);
        assert_eq!(g.code, 0, "{}", g.stderr);
        let said = if delta_reaches_head {
            "rewrote the lexical index without removed documents"
        } else {
            "removed the lexical index's delta file"
        };
        assert!(g.stderr.contains(said), "{}", g.stderr);
        assert_eq!(cache_of(&store), ["lexical.idx"]);
        assert_eq!(files_holding(&store, b"gammaray"), Vec::<PathBuf>::new());
        assert_eq!(cache_findings(&store), Vec::<Value>::new());
        // Warm: answered from the cache of the last close, without rebuilding.
        let v = run(&store, &["-v", "search", "alpha"]);
        assert!(v.stdout.contains("a.b"), "{}", v.stdout);
        assert!(!v.stderr.contains("index built"), "{}", v.stderr);
    }
}
