//! Retrieval benchmark of lexical recall on LoCoMo (see `../shared/data/README.md`).
//!
//! Every turn becomes one memory (`<sample>:s<session>.t<turn>`, content `Speaker: text`,
//! plus the image caption when the turn shared one); every question of categories 1-4 with
//! evidence is a query within its conversation's namespace. Prints turn recall@1/5/10 and
//! session recall@5/10 per category and overall, query latency and index build time.
//!
//! `cargo run --release --example locomo [PATH]`; PATH defaults to
//! `../shared/data/locomo_dev.json`. Without the file it says so and exits 0.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use memoir::key::Key;
use memoir::object::{Blob, ObjectId, Objects};
use memoir::prolly::{Edit, NodeStore};
use memoir::recall::{lexical::split_key, Doc, LexicalIndex, Query, RecallError};
use memoir::store::{ObjectStore, Store};
use serde_json::Value;

struct Question {
    namespace: String,
    text: String,
    category: u64,
    evidence: Vec<String>,
}

#[derive(Default)]
struct Tally {
    n: usize,
    turn: [f64; 3],
    session: [f64; 2],
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/data/locomo_dev.json".to_string());
    let Ok(raw) = std::fs::read(&path) else {
        println!("locomo: {path} not found; benchmark skipped");
        return;
    };
    let data: Value = serde_json::from_slice(&raw).expect("LoCoMo JSON");
    let store: Arc<dyn ObjectStore> = Arc::new(Store::memory());
    let objects = Objects::new(store.clone());
    let tree = NodeStore::new(store, 8192);
    let mut docs: HashMap<ObjectId, Doc> = HashMap::new();
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
            for (t, turn) in turns.iter().enumerate() {
                let mut content = if std::env::var("LOCOMO_NO_SPEAKER").is_ok() {
                    turn["text"].as_str().unwrap_or("").to_string()
                } else {
                    format!(
                        "{}: {}",
                        turn["speaker"].as_str().unwrap_or(""),
                        turn["text"].as_str().unwrap_or("")
                    )
                };
                if let Some(c) = turn.get("blip_caption").and_then(Value::as_str) {
                    content.push_str(&format!(" [shared an image: {c}]"));
                }
                let path = format!("s{s:02}.t{:03}", t + 1);
                let key = Key::new(&ns, &path).expect("valid key");
                let v = objects
                    .write(&Blob(format!("{ns}:{path}\n{content}").into_bytes()))
                    .expect("write");
                docs.insert(
                    v,
                    Doc {
                        namespace: ns.clone(),
                        path: path.clone(),
                        content,
                        timestamp: s as f64,
                    },
                );
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
    edits.sort_by(|a, b| a.key().cmp(b.key()));
    let root = tree.build_sorted(edits_to_pairs(edits)).expect("build");
    let t0 = Instant::now();
    let mut index = LexicalIndex::new();
    if let Ok(spec) = std::env::var("LOCOMO_PARAMS") {
        // Measuring only: "k1,b,key,prefix,fuzzy,neighbour,group".
        let v: Vec<f64> = spec
            .split(',')
            .map(|x| x.parse().expect("number"))
            .collect();
        index.params = memoir::recall::lexical::Params {
            k1: v[0],
            b: v[1],
            key_weight: v[2],
            prefix_weight: v[3],
            fuzzy_weight: v[4],
            neighbour_weight: v[5],
            group_weight: v[6],
        };
    }
    index
        .sync(&tree, &root, &mut |k, v| {
            docs.get(v).cloned().ok_or_else(|| RecallError::Load {
                key: split_key(k).1,
                reason: "missing".into(),
            })
        })
        .expect("index");
    let build = t0.elapsed();

    let session = |dia: &str| dia.split(':').next().unwrap_or("").to_string();
    let mut tallies: BTreeMap<u64, Tally> = BTreeMap::new();
    let mut latencies = Vec::new();
    for q in &questions {
        let t = Instant::now();
        let hits = index.search(&Query {
            text: &q.text,
            namespace: Some(&q.namespace),
            limit: 10,
            ..Default::default()
        });
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        let got: Vec<String> = hits
            .iter()
            .map(|h| dia_of[&(h.namespace.clone(), h.path.clone())].clone())
            .collect();
        let ev_sessions: Vec<String> = {
            let mut s: Vec<String> = q.evidence.iter().map(|e| session(e)).collect();
            s.sort();
            s.dedup();
            s
        };
        for tally in [tallies.entry(q.category).or_default()] {
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
                tally.session[i] += found as f64 / ev_sessions.len() as f64;
            }
        }
    }
    let mut all = Tally::default();
    println!("category      n  turn@1  turn@5 turn@10  sess@5 sess@10");
    for (c, t) in &tallies {
        print_row(&format!("{c}"), t);
        all.n += t.n;
        for i in 0..3 {
            all.turn[i] += t.turn[i];
        }
        for i in 0..2 {
            all.session[i] += t.session[i];
        }
    }
    print_row("all", &all);
    latencies.sort_by(f64::total_cmp);
    let med = latencies[latencies.len() / 2];
    let p95 = latencies[latencies.len() * 95 / 100];
    println!(
        "memories {}  questions {}  index build {:.1} ms  query median {:.3} ms  p95 {:.3} ms",
        index.len(),
        questions.len(),
        build.as_secs_f64() * 1e3,
        med,
        p95
    );
}

fn edits_to_pairs(edits: Vec<Edit>) -> Vec<(Vec<u8>, ObjectId)> {
    edits
        .into_iter()
        .filter_map(|e| match e {
            Edit::Put(k, v) => Some((k, v)),
            Edit::Delete(_) => None,
        })
        .collect()
}

fn print_row(label: &str, t: &Tally) {
    let pct = |x: f64| 100.0 * x / t.n.max(1) as f64;
    println!(
        "{label:<8} {:>6}  {:>6.1}  {:>6.1}  {:>6.1}  {:>6.1}  {:>6.1}",
        t.n,
        pct(t.turn[0]),
        pct(t.turn[1]),
        pct(t.turn[2]),
        pct(t.session[0]),
        pct(t.session[1])
    );
}
