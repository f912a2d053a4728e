//! `search --mode` and `recall --mode` through the binary with the real all-MiniLM-L6-v2:
//! what each mode finds, vectors made once and kept (across revisions too), a damaged
//! vector cache made again, and the behaviour without a model.

use serde_json::json;

use super::{hit_keys, run, store_with_memories};
use crate::common::{minilm_model, Session};

/// No word in common with the memory it means (`biking with my neighbor`).
const PARAPHRASE: &str = "bicycle ride with a friend";

#[test]
fn semantic_and_hybrid_search_find_a_paraphrase() {
    let Some(model) = minilm_model() else { return };
    let model = model.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_memories(dir.path());
    let o = run(
        &store,
        Some(model),
        &[],
        &["search", PARAPHRASE, "--mode", "semantic", "-k", "2"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["mode"], "semantic");
    assert_eq!(hit_keys(&o)[0], "chat.s1.t1", "{}", o.stdout);
    assert_eq!(o.json()["count"], 2);
    // Hybrid is the default with a model, and keeps what words find.
    let o = run(&store, Some(model), &[], &["search", PARAPHRASE]);
    assert_eq!(o.json()["mode"], "hybrid");
    assert_eq!(hit_keys(&o)[0], "chat.s1.t1");
    let o = run(
        &store,
        Some(model),
        &[],
        &["search", "PostgreSQL migration"],
    );
    assert_eq!(hit_keys(&o)[0], "chat.s2.t1");
    // Lexical stays lexical.
    let o = run(
        &store,
        Some(model),
        &[],
        &["search", PARAPHRASE, "--mode", "lexical"],
    );
    assert_eq!(o.json()["mode"], "lexical");
    assert!(
        !hit_keys(&o).contains(&"chat.s1.t1".to_string()),
        "{}",
        o.stdout
    );
    // Filters hold by meaning too.
    let o = run(
        &store,
        Some(model),
        &[],
        &[
            "search",
            PARAPHRASE,
            "--mode",
            "semantic",
            "--keys",
            "chat.s2.*",
        ],
    );
    assert!(
        hit_keys(&o).iter().all(|k| k.starts_with("chat.s2.")),
        "{}",
        o.stdout
    );
    // recall ranks by meaning when asked, and says so.
    let o = run(
        &store,
        Some(model),
        &[],
        &["recall", PARAPHRASE, "--mode", "semantic", "-l", "1"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(v["metadata"]["mode"], "semantic");
    assert_eq!(v["memories"][0]["path"], "chat.s1.t1");
    assert_eq!(v["memories"][0]["metadata"]["mode"], "semantic");
}

#[test]
fn vectors_are_made_once_and_kept_across_revisions() {
    let Some(model) = minilm_model() else { return };
    let model = model.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_memories(dir.path());
    let search = |extra: &[&str]| {
        let mut args = vec!["search", PARAPHRASE, "--mode", "hybrid"];
        args.extend_from_slice(extra);
        let o = run(&store, Some(model), &[], &args);
        assert_eq!(o.code, 0, "{}", o.stderr);
        o
    };
    let first = search(&[]);
    assert!(
        first
            .stderr
            .contains("embedded 5 memories (0 vectors reused)"),
        "{}",
        first.stderr
    );
    assert!(store.join("cache/vectors.bin").is_file());
    let again = search(&[]);
    assert!(!again.stderr.contains("embedded"), "{}", again.stderr);
    assert_eq!(hit_keys(&again), hit_keys(&first));
    // A new memory is the only one embedded; the old revision needs none.
    let o = run(
        &store,
        Some(model),
        &[],
        &[
            "remember",
            "Melanie: I ran a marathon in Berlin.",
            "-p",
            "chat.s3.t1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = search(&[]);
    assert!(
        o.stderr.contains("embedded 1 memories (5 vectors reused)"),
        "{}",
        o.stderr
    );
    let o = search(&["--at", "HEAD~1"]);
    assert!(!o.stderr.contains("embedded"), "{}", o.stderr);
    assert!(!hit_keys(&o).contains(&"chat.s3.t1".to_string()));
    let o = search(&[]);
    assert!(!o.stderr.contains("embedded"), "{}", o.stderr);
    // Another branch shares the values, and so their vectors.
    let o = run(&store, Some(model), &[], &["branch", "agent-1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(
        &store,
        Some(model),
        &[],
        &[
            "remember",
            "Caroline: I read a novel.",
            "-p",
            "chat.s4.t1",
            "--branch",
            "agent-1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = search(&["--branch", "agent-1"]);
    assert!(
        o.stderr.contains("embedded 1 memories (6 vectors reused)"),
        "{}",
        o.stderr
    );
    let o = search(&[]);
    assert!(!o.stderr.contains("embedded"), "{}", o.stderr);
}

#[test]
fn a_damaged_vector_cache_is_made_again() {
    let Some(model) = minilm_model() else { return };
    let model = model.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_memories(dir.path());
    let args = ["search", PARAPHRASE, "--mode", "semantic"];
    let first = run(&store, Some(model), &[], &args);
    let file = store.join("cache/vectors.bin");
    let good = std::fs::read(&file).unwrap();
    let damages: [fn(&mut Vec<u8>); 3] = [
        |b| {
            let n = b.len() / 2;
            b[n] ^= 0x40;
        },
        |b| b.truncate(b.len() - 5),
        |b| b.clear(),
    ];
    for damage in damages {
        let mut bytes = good.clone();
        damage(&mut bytes);
        std::fs::write(&file, &bytes).unwrap();
        let o = run(&store, Some(model), &[], &args);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(
            o.stderr.contains("vector cache was damaged"),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains("embedded 5 memories"), "{}", o.stderr);
        assert_eq!(hit_keys(&o), hit_keys(&first));
        assert_eq!(
            std::fs::read(&file).unwrap(),
            good,
            "the file is written again whole"
        );
    }
    // fsck reports nothing wrong with it, and gc keeps it.
    let o = run(&store, Some(model), &[], &["fsck"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let o = run(&store, Some(model), &[], &["gc"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let o = run(&store, Some(model), &[], &args);
    assert!(!o.stderr.contains("embedded"), "{}", o.stderr);
}

#[test]
fn without_a_model_search_is_lexical_and_semantic_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_memories(dir.path());
    let o = run(&store, None, &[], &["search", "biking neighbor"]);
    assert_eq!(o.json()["mode"], "lexical");
    assert_eq!(hit_keys(&o)[0], "chat.s1.t1");
    let o = run(
        &store,
        None,
        &[],
        &["search", "biking", "--mode", "semantic"],
    );
    assert_eq!(o.code, 1);
    let e = o.json()["error"].as_str().unwrap().to_string();
    assert!(e.contains("MEMOIR_EMBED_MODEL"), "{e}");
    let o = run(&store, None, &[], &["search", "biking", "--mode", "hybrid"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.json()["mode"], "lexical");
    assert!(
        o.stderr.contains("hybrid search is lexical"),
        "{}",
        o.stderr
    );
    let o = run(&store, None, &[], &["recall", "biking", "--mode", "hybrid"]);
    let v = o.json();
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["metadata"]["fellback_from"], "hybrid");
    assert!(!store.join("cache/vectors.bin").exists());
    // A model directory that is not one is an error naming what is missing.
    let o = run(
        &store,
        Some(dir.path().to_str().unwrap()),
        &[],
        &["search", "biking"],
    );
    assert_eq!(o.code, 1);
    assert!(o.json()["error"].as_str().unwrap().contains("config.json"));
    let o = run(
        &store,
        None,
        &[("MEMOIR_EMBED_BASE_URL", "http://127.0.0.1:9")],
        &["search", "biking"],
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
}

#[test]
fn the_mcp_search_tool_takes_a_mode() {
    let Some(model) = minilm_model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_memories(dir.path());
    let s = Session::stdio(
        &store,
        &[],
        &[],
        &[
            ("MEMOIR_EMBED_MODEL", model.to_str().unwrap()),
            ("MEMOIR_NOW", "1700000100"),
        ],
    );
    let v = s.ok(
        "memoir_search",
        json!({"query": PARAPHRASE, "mode": "semantic", "limit": 1}),
    );
    assert_eq!(v["mode"], "semantic");
    assert_eq!(v["hits"][0]["key"], "chat.s1.t1");
    let v = s.ok(
        "memoir_search",
        json!({"query": PARAPHRASE, "mode": "lexical"}),
    );
    assert_eq!(v["mode"], "lexical");
}
