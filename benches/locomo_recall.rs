//! Retrieval benchmark of lexical recall on LoCoMo (see `../shared/data/README.md`).
//!
//! Every turn becomes one memory record in a real sled store (`<sample>:s<session>.t<turn>`,
//! content `Speaker: text` plus the image caption when the turn shared one, timestamp = the
//! session's date), written in one commit as `import` does. Every question of categories 1-4
//! with evidence is a query within its conversation's namespace. Prints:
//! - turn recall@1/5/10: the share of evidence turns among the top k hits;
//! - session recall@5/10 two ways: `top-k turns` (sessions of the top k hits) and `top-k
//!   sessions` (sessions ranked by their best hit);
//! - ingest time, index build from scratch, query latency (median, p95), the incremental index
//!   update after one more memory, and the whole `memoir search` process.
//!
//! The recall figures are printed twice: as search ranks (words and signals, the default)
//! and by words alone (the signals off).
//!
//! With `--tune`, the weights of the signals (speaker, time, date, question; see
//! `memoir::recall::lexical::rerank`) are chosen on the data by grid search for turn
//! recall@10: on all of it, and leaving each conversation out (the weights chosen on the
//! others, scored on it); each with a paired-bootstrap 95% confidence interval of the change
//! from words alone.
//!
//! With `--model DIR` (a sentence-transformers directory such as all-MiniLM-L6-v2), recall
//! by meaning and hybrid too (see `locomo/meaning.rs`); `--tune` then also tunes the
//! fusion.
//!
//! `cargo bench --bench locomo_recall -- [PATH] [--tune] [--keep DIR] [--model DIR]`; PATH
//! defaults to `../shared/data/locomo_dev.json`. Without the file it says so and exits 0.

mod common;
#[path = "locomo/meaning.rs"]
mod meaning;
#[path = "locomo/tune.rs"]
mod tune;
use common::{args, binary, stats as median_p95};

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use memoir::calendar;
use memoir::key::Key;
use memoir::memory::{Entry, Record};
use memoir::prolly::Edit;
use memoir::recall::lexical::LexicalIndex;
use memoir::recall::{self, Query};
use memoir::repo::{Repo, Signature};
use memoir::store::{OpenOptions, Store};
use serde_json::Value;

pub struct Question {
    namespace: String,
    text: String,
    category: u64,
    evidence: Vec<String>,
}

#[derive(Default)]
struct Tally {
    n: usize,
    turn: [f64; 3],
    session_turns: [f64; 2],
    session_ranked: [f64; 2],
}

/// Unix seconds of a LoCoMo session date such as `1:56 pm on 8 May, 2023` (0 if unreadable).
fn session_time(text: &str) -> f64 {
    let lower = text.to_lowercase().replace(',', "");
    let words: Vec<&str> = lower.split_whitespace().collect();
    let (Some(time), Some(ampm)) = (words.first(), words.get(1)) else {
        return 0.0;
    };
    let (h, m) = time.split_once(':').unwrap_or(("0", "0"));
    let mut hour: i64 = h.parse().unwrap_or(0) % 12;
    if *ampm == "pm" {
        hour += 12;
    }
    let minute: i64 = m.parse().unwrap_or(0);
    let day: u32 = words.get(3).and_then(|d| d.parse().ok()).unwrap_or(1);
    let month = words
        .get(4)
        .and_then(|w| calendar::MONTHS.iter().position(|x| x == w))
        .unwrap_or(0) as u32
        + 1;
    let year: i64 = words.get(5).and_then(|y| y.parse().ok()).unwrap_or(1970);
    let days = calendar::days_from_civil(year, month, day);
    (days * calendar::SECS_PER_DAY + hour * 3600 + minute * 60) as f64
}

fn main() {
    // Arguments: [DATA.json] [--keep DIR] (keep the built store in DIR for further timing).
    let mut path = "../shared/data/locomo_dev.json".to_string();
    let mut keep: Option<PathBuf> = None;
    let mut tuning = false;
    let mut model: Option<PathBuf> = None;
    let mut argv = args().into_iter();
    while let Some(a) = argv.next() {
        if a == "--tune" {
            tuning = true;
        } else if a == "--model" {
            model = argv.next().map(PathBuf::from);
        } else if a == "--keep" {
            keep = argv.next().map(PathBuf::from);
        } else {
            path = a;
        }
    }
    let Ok(raw) = std::fs::read(&path) else {
        println!("locomo: {path} not found; benchmark skipped");
        return;
    };
    let data: Value = serde_json::from_slice(&raw).expect("LoCoMo JSON");
    let dir = tempfile_dir();
    let store_path = dir.join("store");
    let store = Store::create(&store_path, &OpenOptions::default()).expect("create store");
    let sig = Signature::new("locomo", 1_700_000_000);
    let repo = Repo::init(store, &sig, "Initialize").expect("init");

    let t_ingest = Instant::now();
    let mut dia_of: HashMap<(String, String), String> = HashMap::new();
    let mut edits = Vec::new();
    let mut questions = Vec::new();
    for sample in data.as_array().expect("a list of samples") {
        let ns = sample["sample_id"].as_str().expect("sample_id").to_string();
        let conv = &sample["conversation"];
        for s in 1.. {
            let Some(turns) = conv.get(format!("session_{s}")).and_then(Value::as_array) else {
                break;
            };
            let when = conv
                .get(format!("session_{s}_date_time"))
                .and_then(Value::as_str)
                .map(session_time)
                .unwrap_or(0.0);
            for (t, turn) in turns.iter().enumerate() {
                let mut content = format!(
                    "{}: {}",
                    turn["speaker"].as_str().unwrap_or(""),
                    turn["text"].as_str().unwrap_or("")
                );
                if let Some(c) = turn.get("blip_caption").and_then(Value::as_str) {
                    content.push_str(&format!(" [shared an image: {c}]"));
                }
                let path = format!("s{s:02}.t{:03}", t + 1);
                let key = Key::new(&ns, &path).expect("valid key");
                let record = Record::new(&key, Entry::new(&content, 1.0, when), vec![]);
                let blob = record.to_blob().expect("record");
                let v = repo.objects().write(&blob).expect("write");
                let dia = turn["dia_id"].as_str().unwrap_or("").to_string();
                dia_of.insert((ns.clone(), path), dia);
                edits.push(Edit::Put(key.encode(), v));
            }
        }
        for qa in sample["qa"].as_array().expect("qa") {
            let category = qa["category"].as_u64().unwrap_or(0);
            let evidence: Vec<String> = qa["evidence"]
                .as_array()
                .map(|e| {
                    e.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if !(1..=4).contains(&category) || evidence.is_empty() {
                continue;
            }
            questions.push(Question {
                namespace: ns.clone(),
                text: qa["question"].as_str().unwrap_or("").to_string(),
                category,
                evidence,
            });
        }
    }
    let memories = edits.len();
    repo.commit("main", edits, &sig, &format!("Import {memories} memories"))
        .expect("commit");
    let ingest = t_ingest.elapsed();
    let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();

    let t0 = Instant::now();
    let (index, _, _) =
        recall::synced_index(&store_path, repo.tree(), repo.objects(), &root).expect("index");
    let build = t0.elapsed();

    println!("ranked as search ranks (words and signals):");
    let latencies = evaluate(&index, &questions, &dia_of, |ix, q| ix.search(q));
    println!("ranked by words alone:");
    evaluate(&index, &questions, &dia_of, |ix, q| ix.search_by_words(q));
    let (med, p95) = median_p95(latencies);
    // The same queries on the index as a later process loads it from the cache file.
    let t_load = Instant::now();
    let loaded = recall::load_cache(&recall::cache_path(&store_path));
    let load_ms = t_load.elapsed().as_secs_f64() * 1e3;
    let mut loaded_latencies = Vec::new();
    for q in &questions {
        let t = Instant::now();
        let hits = loaded.search(&Query {
            text: &q.text,
            namespace: Some(&q.namespace),
            limit: 200,
            ..Default::default()
        });
        loaded_latencies.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(hits.len() <= 200);
    }
    let (lmed, lp95) = median_p95(loaded_latencies);
    println!(
        "cache file: load {load_ms:.2} ms  query median {lmed:.3} ms  p95 {lp95:.3} ms (index as loaded)"
    );
    println!(
        "memories {memories}  questions {}  ingest {:.0} ms  index from scratch {:.1} ms  query median {:.3} ms  p95 {:.3} ms",
        questions.len(),
        ingest.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        med,
        p95
    );

    // One more memory, then the incremental update of the cached index.
    let key = Key::new("conv-26", "s99.t001").expect("key");
    let rec = Record::new(
        &key,
        Entry::new("Caroline: one more thing", 1.0, 0.0),
        vec![],
    );
    let v = repo.objects().write(&rec.to_blob().unwrap()).unwrap();
    repo.commit(
        "main",
        vec![Edit::Put(key.encode(), v)],
        &sig,
        "Store s99.t001",
    )
    .unwrap();
    let root2 = repo.root_of(&repo.head_commit().unwrap()).unwrap();
    let t1 = Instant::now();
    let (_, stats, _) =
        recall::synced_index(&store_path, repo.tree(), repo.objects(), &root2).expect("sync");
    println!(
        "after one remember: index updated incrementally ({} inserted, rebuilt: {}) in {:.2} ms (including cache load and save)",
        stats.inserted,
        stats.rebuilt,
        t1.elapsed().as_secs_f64() * 1e3
    );
    drop(repo);

    // The whole process.
    {
        let bin = binary();
        let mut times = Vec::new();
        for q in questions.iter().take(60) {
            let t = Instant::now();
            let out = std::process::Command::new(&bin)
                .arg("-s")
                .arg(&store_path)
                .args(["--json", "search", &q.text, "-n", &q.namespace, "-k", "10"])
                .output()
                .expect("run memoir");
            assert!(out.status.success(), "memoir search failed");
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (med, p95) = median_p95(times);
        println!("memoir search, whole process (warm index): median {med:.2} ms  p95 {p95:.2} ms");
    }
    if let Some(dir) = &model {
        meaning::run(&index, &questions, &dia_of, dir, tuning);
    } else if tuning {
        tune::run(&index, &questions, &dia_of);
    }
    if let Some(k) = keep {
        let _ = std::fs::remove_dir_all(&k);
        std::fs::rename(&store_path, &k).expect("keep the store");
        println!("store kept at {}", k.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Searches every question with `search` (top 200) and prints the recall table; returns the
/// query latencies (ms).
pub fn evaluate(
    index: &LexicalIndex,
    questions: &[Question],
    dia_of: &HashMap<(String, String), String>,
    search: impl Fn(&LexicalIndex, &Query<'_>) -> Vec<recall::Hit>,
) -> Vec<f64> {
    let session = |dia: &str| dia.split(':').next().unwrap_or("").to_string();
    let mut tallies: BTreeMap<u64, Tally> = BTreeMap::new();
    let mut latencies = Vec::new();
    for q in questions {
        let t = Instant::now();
        let hits = search(
            index,
            &Query {
                text: &q.text,
                namespace: Some(&q.namespace),
                limit: 200,
                ..Default::default()
            },
        );
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        let got: Vec<String> = hits
            .iter()
            .map(|h| dia_of[&(h.namespace.clone(), h.path.clone())].clone())
            .collect();
        let mut ranked_sessions: Vec<String> = Vec::new();
        for d in &got {
            let s = session(d);
            if !ranked_sessions.contains(&s) {
                ranked_sessions.push(s);
            }
        }
        let mut ev_sessions: Vec<String> = q.evidence.iter().map(|e| session(e)).collect();
        ev_sessions.sort();
        ev_sessions.dedup();
        let tally = tallies.entry(q.category).or_default();
        tally.n += 1;
        for (i, k) in [1usize, 5, 10].iter().enumerate() {
            let top = &got[..got.len().min(*k)];
            let found = q.evidence.iter().filter(|e| top.contains(e)).count();
            tally.turn[i] += found as f64 / q.evidence.len() as f64;
        }
        for (i, k) in [5usize, 10].iter().enumerate() {
            let top: Vec<String> = got[..got.len().min(*k)]
                .iter()
                .map(|d| session(d))
                .collect();
            let found = ev_sessions.iter().filter(|s| top.contains(s)).count();
            tally.session_turns[i] += found as f64 / ev_sessions.len() as f64;
            let top = &ranked_sessions[..ranked_sessions.len().min(*k)];
            let found = ev_sessions.iter().filter(|s| top.contains(s)).count();
            tally.session_ranked[i] += found as f64 / ev_sessions.len() as f64;
        }
    }
    let mut all = Tally::default();
    println!("                          turn recall      session@k (top-k turns)  session@k (top-k sessions)");
    println!("category      n      @1     @5    @10          @5    @10                  @5    @10");
    for (c, t) in &tallies {
        print_row(&format!("{c}"), t);
        all.n += t.n;
        for i in 0..3 {
            all.turn[i] += t.turn[i];
        }
        for i in 0..2 {
            all.session_turns[i] += t.session_turns[i];
            all.session_ranked[i] += t.session_ranked[i];
        }
    }
    print_row("all", &all);
    latencies
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("memoir-locomo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn print_row(label: &str, t: &Tally) {
    let pct = |x: f64| 100.0 * x / t.n.max(1) as f64;
    println!(
        "{label:<8} {:>6}  {:>6.1} {:>6.1} {:>6.1}      {:>6.1} {:>6.1}              {:>6.1} {:>6.1}",
        t.n,
        pct(t.turn[0]),
        pct(t.turn[1]),
        pct(t.turn[2]),
        pct(t.session_turns[0]),
        pct(t.session_turns[1]),
        pct(t.session_ranked[0]),
        pct(t.session_ranked[1]),
    );
}
