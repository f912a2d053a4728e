//! The record's actor in search: a search by agent filters while ranking (so it finds the
//! agent's memories however far below others' they rank), a question naming an agent ranks
//! that agent's memories first when they have no `Name:` lead, and `search --explain` gives
//! every part of the lexical score.

use std::path::Path;

use serde_json::Value;

use memoir::app::{
    Clock, MergePolicy, Options, ReadPoint, RememberRequest, SearchRequest, WriteAs,
};
use memoir::Memoir;

use crate::common::{memoir, new_store};

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600;

fn options() -> Options {
    Options {
        clock: Clock::fixed(NOW as f64),
        ..Options::default()
    }
}

/// Writes `content` under `paths` as agent `actor`, appending to what is there.
fn write(m: &Memoir, actor: &str, content: &str, paths: &[String]) {
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut req = RememberRequest::new(content, &paths);
    req.merge_policy = Some(MergePolicy::Append);
    let who = WriteAs {
        actor: Some(actor.to_string()),
        ..WriteAs::author("Tester")
    };
    m.remember(&req, &who).unwrap();
}

/// The keys of a search by agent `actor` for `query`, at most `limit`.
fn by_agent(m: &Memoir, query: &str, actor: &str, limit: usize) -> Vec<String> {
    let req = SearchRequest {
        query: query.to_string(),
        limit,
        ..SearchRequest::default()
    };
    let out = m.search_by_agent(&req, actor, &ReadPoint::head()).unwrap();
    assert_eq!(out.count, out.hits.len());
    out.hits.into_iter().map(|h| h.key).collect()
}

#[test]
fn a_search_by_agent_finds_its_memories_below_everyone_elses() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = Memoir::create(
        dir.path().join("store"),
        options(),
        &WriteAs::author("Tester"),
    )
    .unwrap();
    // 1,024 memories of agent-1 that match the query better than any of agent-2's.
    for batch in 0..64 {
        let paths: Vec<String> = (0..16)
            .map(|i| format!("strong.b{batch:02}.m{i:02}"))
            .collect();
        write(&m, "agent-1", "helix helix helix", &paths);
    }
    let weak = "the helix came up once in a long note about many other unrelated things";
    let mine: Vec<String> = (0..5).map(|i| format!("weak.m{i}")).collect();
    write(&m, "agent-2", weak, &mine);
    // A memory both wrote: agent-2 first, agent-1 last (its actor).
    let shared = vec!["shared.both".to_string()];
    write(&m, "agent-2", weak, &shared);
    write(&m, "agent-1", "more on the helix", &shared);
    let plain = SearchRequest {
        query: "helix".into(),
        limit: 1000,
        ..SearchRequest::default()
    };
    let all = m.search(&plain, &ReadPoint::head()).unwrap();
    assert!(all.hits.iter().all(|h| h.key.starts_with("strong.")));
    // Every one of agent-2's memories, though a thousand of agent-1's rank above them.
    let top3 = by_agent(&m, "helix", "agent-2", 3);
    assert_eq!(top3.len(), 3, "{top3:?}");
    let every = by_agent(&m, "helix", "agent-2", 10);
    let mut want: Vec<String> = mine.iter().chain(&shared).cloned().collect();
    want.sort();
    let mut got = every.clone();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(every[..3], top3[..]);
    assert!(by_agent(&m, "helix", "agent-1", 2000).contains(&"shared.both".to_string()));
    assert_eq!(by_agent(&m, "helix", "agent-1", 2000).len(), 1025);
    assert!(by_agent(&m, "helix", "nobody", 10).is_empty());
    // A later write is seen through the index's changes since its file.
    write(
        &m,
        "agent-3",
        "a helix of its own",
        &["late.one".to_string()],
    );
    assert_eq!(by_agent(&m, "helix", "agent-3", 10), ["late.one"]);
    assert_eq!(by_agent(&m, "helix", "agent-2", 10).len(), 6);
}

/// Runs `memoir --json ARGS` on `store` as `actor` (none: no actor).
fn cli(store: &Path, actor: Option<&str>, args: &[&str]) -> Value {
    let mut c = memoir();
    c.env("MEMOIR_NOW", NOW.to_string());
    if let Some(a) = actor {
        c.env("MEMOIR_ACTOR", a);
    }
    let o = c
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The hits of a search with `--explain`: (key, speaker factor).
fn speakers(store: &Path, query: &str) -> Vec<(String, f64)> {
    let v = cli(store, None, &["search", query, "--explain"]);
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let key = h["key"].as_str().unwrap().to_string();
            (key, h["explain"]["speaker"].as_f64().unwrap())
        })
        .collect()
}

#[test]
fn a_question_naming_an_agent_ranks_its_memories_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let said = "I started painting pottery.";
    cli(
        &store,
        Some("melanie"),
        &["remember", said, "-p", "notes.a"],
    );
    cli(
        &store,
        Some("caroline"),
        &["remember", said, "-p", "notes.b"],
    );
    // A leading `Name:` says who speaks, whoever wrote the record.
    let turn = "Melanie: I started painting pottery.";
    cli(
        &store,
        Some("caroline"),
        &["remember", turn, "-p", "notes.c"],
    );
    cli(&store, None, &["remember", said, "-p", "notes.d"]);
    let ranked = speakers(&store, "What did caroline start painting?");
    assert_eq!(ranked[0], ("notes.b".to_string(), 1.5), "{ranked:?}");
    assert!(ranked[1..].iter().all(|(_, s)| *s == 1.0), "{ranked:?}");
    let ranked = speakers(&store, "What did Melanie start painting?");
    let mut boosted: Vec<&str> = ranked
        .iter()
        .filter(|(_, s)| *s == 1.5)
        .map(|(k, _)| k.as_str())
        .collect();
    boosted.sort();
    assert_eq!(boosted, ["notes.a", "notes.c"], "{ranked:?}");
    // Naming nobody, the words decide alone.
    assert!(speakers(&store, "painting pottery")
        .iter()
        .all(|(_, s)| *s == 1.0));
}

#[test]
fn explain_gives_the_parts_of_the_lexical_score() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let turns = [
        ("chat.s1.t1", "We should plan the camping trip."),
        ("chat.s1.t2", "The lake is lovely in June."),
        ("chat.s1.t3", "Camping by the lake then."),
        ("chat.s1.t4", "I will bring the tent."),
        ("chat.s2.t1", "My violin lessons start soon."),
        ("chat.s2.t2", "The lake concert has a violin part."),
    ];
    for (path, content) in turns {
        cli(&store, None, &["remember", content, "-p", path]);
    }
    let query = "camping at the lake";
    let explained = cli(&store, None, &["search", query, "--explain"]);
    let plain = cli(&store, None, &["search", query]);
    let strip = |v: &Value| -> Vec<(Value, Value)> {
        let hits = v["hits"].as_array().unwrap();
        hits.iter()
            .map(|h| (h["key"].clone(), h["score"].clone()))
            .collect()
    };
    // The same hits and scores either way.
    assert_eq!(strip(&explained), strip(&plain));
    let parts = ["words", "siblings", "window", "parent", "feedback"];
    let mut seen = [false; 5];
    for h in explained["hits"].as_array().unwrap() {
        let e = &h["explain"];
        let mut sum = 0.0;
        for (i, p) in parts.iter().enumerate() {
            let x = e[p].as_f64().unwrap_or_else(|| panic!("{p} in {e}"));
            // No part takes from the score (a rounding below zero shows as 0).
            assert!(x >= 0.0 && !x.is_sign_negative(), "{p} in {e}");
            seen[i] |= x > 0.0;
            sum += x;
        }
        let lexical = e["lexical"].as_f64().unwrap();
        assert!((sum - lexical).abs() < 1e-5, "{sum} vs {lexical} in {e}");
    }
    // Siblings, windows and parents all count here.
    assert!(seen[..4].iter().all(|s| *s), "{explained}");
    // Human output shows the parts beside the lexical score.
    let o = memoir()
        .env("MEMOIR_NOW", NOW.to_string())
        .arg("-s")
        .arg(&store)
        .args(["search", query, "--explain"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        text.contains("(words ") && text.contains(" + feedback "),
        "{text}"
    );
}
