//! The ranking signals of search besides words (speaker, time expressions, event dates,
//! question turns) and `search --explain`, on small hand-made stores through the binary; and
//! that stores without speakers or dates rank as by their words alone.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{cli_at, memoir, new_store};

/// 2026-01-01T00:00:00Z.
const NOW: &str = "1767225600";

fn run(store: &Path, args: &[&str]) -> (i32, Value) {
    cli_at(store, NOW.parse().unwrap(), args)
}

/// A store holding `memories` (path, content, optional event time).
fn store_of(dir: &Path, memories: &[(&str, &str, Option<&str>)]) -> PathBuf {
    let store = new_store(dir);
    for (path, content, when) in memories {
        let mut args = vec!["remember", content, "-p", path];
        if let Some(w) = when {
            args.extend(["--event-time", w]);
        }
        let (code, v) = run(&store, &args);
        assert_eq!(code, 0, "{v}");
    }
    store
}

/// The keys of a search's hits, best first, and the hits.
fn search(store: &Path, query: &str, extra: &[&str]) -> (Vec<String>, Vec<Value>) {
    let mut args = vec!["search", query];
    args.extend(extra);
    let (code, v) = run(store, &args);
    assert_eq!(code, 0, "{v}");
    let hits = v["hits"].as_array().unwrap().clone();
    let keys = hits
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect();
    (keys, hits)
}

#[test]
fn a_question_naming_a_speaker_ranks_that_speakers_turns_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(
        dir.path(),
        &[
            (
                "chat.s1.t1",
                "Melanie: Caroline, I started painting pottery.",
                None,
            ),
            (
                "chat.s1.t2",
                "Caroline: I started painting pottery too.",
                None,
            ),
        ],
    );
    let (keys, hits) = search(&store, "What did Caroline start painting?", &["--explain"]);
    assert_eq!(keys, ["chat.s1.t2", "chat.s1.t1"]);
    assert_eq!(hits[0]["explain"]["speaker"], 1.5);
    assert_eq!(hits[1]["explain"]["speaker"], 1.0);
    // Naming nobody, the words decide alone.
    let (_, hits) = search(&store, "painting pottery", &["--explain"]);
    assert!(hits.iter().all(|h| h["explain"]["speaker"] == 1.0));
}

#[test]
fn a_temporal_question_ranks_records_holding_a_time_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(
        dir.path(),
        &[
            ("trip.a", "Camping at the lake.", None),
            ("trip.b", "Camping at the lake yesterday.", None),
        ],
    );
    // By words, the shorter record first.
    let (keys, hits) = search(&store, "camping lake", &["--explain"]);
    assert_eq!(keys, ["trip.a", "trip.b"]);
    assert!(hits.iter().all(|h| h["explain"]["time"] == 1.0));
    // Asked when, the one that names a time.
    let (keys, hits) = search(
        &store,
        "When did they go camping at the lake?",
        &["--explain"],
    );
    assert_eq!(keys, ["trip.b", "trip.a"], "{hits:?}");
    assert_eq!(hits[0]["explain"]["time"], 1.3);
    assert_eq!(hits[1]["explain"]["time"], 1.0);
}

#[test]
fn a_dated_query_ranks_records_of_that_date_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(
        dir.path(),
        &[
            ("notes.a", "Team offsite planned", Some("2023-06-20")),
            ("notes.b", "Team offsite planned", Some("2023-05-08")),
            // The leading date of the content is its event time.
            ("notes.c", "[12 March 2024] Team offsite booked", None),
        ],
    );
    let (keys, hits) = search(&store, "team offsite in May 2023", &["--explain"]);
    assert_eq!(keys[0], "notes.b", "{hits:?}");
    assert_eq!(hits[0]["explain"]["date"], 2.0);
    assert!(hits[1..].iter().all(|h| h["explain"]["date"] == 1.0));
    let (keys, hits) = search(&store, "team offsite on 2024-03-12", &["--explain"]);
    assert_eq!(keys[0], "notes.c", "{hits:?}");
    assert_eq!(hits[0]["explain"]["date"], 2.0);
    // Without a date in the query, no record gets the date factor.
    let (_, hits) = search(&store, "team offsite", &["--explain"]);
    assert!(hits.iter().all(|h| h["explain"]["date"] == 1.0));
    // The event time is the record's timestamp; the commit keeps the time of the write.
    let (_, got) = run(&store, &["get", "notes.b"]);
    let ts = got["items"][0]["value"]["timestamp"].as_f64().unwrap();
    assert!((1_683_504_000.0..1_683_590_400.0).contains(&ts), "{ts}");
    let (_, log) = run(&store, &["log", "-n", "1"]);
    assert_eq!(
        log["commits"][0]["timestamp"].as_f64(),
        Some(1_767_225_600.0)
    );
}

#[test]
fn a_turn_that_asks_ranks_below_the_same_words_said() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(
        dir.path(),
        &[
            (
                "chat.t1",
                "Alice: you adopted a dog from the shelter?",
                None,
            ),
            ("chat.t2", "Bob: you adopted a dog from the shelter.", None),
        ],
    );
    let (keys, hits) = search(&store, "adopted dog shelter", &["--explain"]);
    assert_eq!(keys, ["chat.t2", "chat.t1"], "{hits:?}");
    assert_eq!(hits[0]["explain"]["lexical"], hits[1]["explain"]["lexical"]);
    assert_eq!(hits[1]["explain"]["question"], 0.9);
    assert_eq!(hits[0]["explain"]["question"], 1.0);
}

#[test]
fn explain_shows_every_term_and_their_product_is_the_score() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(
        dir.path(),
        &[
            (
                "chat.t1",
                "Caroline: when did you go hiking? yesterday?",
                None,
            ),
            ("chat.t2", "Caroline: I went hiking yesterday.", None),
        ],
    );
    let (_, hits) = search(&store, "When did Caroline go hiking?", &["--explain"]);
    for h in &hits {
        let e = &h["explain"];
        let mut product = 1.0;
        for term in ["lexical", "speaker", "time", "date", "question"] {
            product *= e[term].as_f64().unwrap_or_else(|| panic!("{term} in {e}"));
        }
        let score = h["score"].as_f64().unwrap();
        assert!((product - score).abs() < 1e-5, "{product} vs {score}");
    }
    // Without --explain, hits have the members they always had.
    let (_, plain) = search(&store, "When did Caroline go hiking?", &[]);
    assert!(plain.iter().all(|h| h.get("explain").is_none()));
    let keys: Vec<_> = plain.iter().map(|h| &h["key"]).collect();
    assert_eq!(keys, hits.iter().map(|h| &h["key"]).collect::<Vec<_>>());
    // Human output names the terms under each hit.
    let o = memoir()
        .env("MEMOIR_NOW", NOW)
        .arg("-s")
        .arg(&store)
        .args(["search", "When did Caroline go hiking?", "--explain"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        text.contains("lexical ") && text.contains("x speaker 1.5"),
        "{text}"
    );
}

#[test]
fn an_unreadable_event_time_is_refused_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (code, v) = run(
        &store,
        &["remember", "x y", "-p", "a.b", "--event-time", "someday"],
    );
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["success"], false);
    let (_, got) = run(&store, &["get", "a.b"]);
    assert_eq!(got["items"][0]["found"], false);
}
