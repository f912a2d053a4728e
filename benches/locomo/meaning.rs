//! Recall by meaning on LoCoMo (`--model DIR`): every turn embedded with the model (timed:
//! memories per second), then turn and session recall by meaning alone with the vectors as
//! float32, float16 and int8 (as kept), and hybrid (the fusion of `memoir::recall::hybrid`);
//! with `--tune`, hybrid for a grid of lexical weights and candidate counts.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use memoir::embed::{Embedder, LocalModel};
use memoir::prolly::KeyRange;
use memoir::recall::hybrid::{self, Fusion};
use memoir::recall::lexical::LexicalIndex;
use memoir::recall::{Hit, Query, VectorIndex};

use crate::{evaluate, median_p95, Question};

/// Hits by the cosine of float vectors (`vectors[p]`: the key at position `p` in key order).
fn by_float_cosine(
    ix: &LexicalIndex,
    vectors: &[Vec<f32>],
    query: &[f32],
    q: &Query<'_>,
) -> Vec<Hit> {
    let order = ix.key_order();
    let mut scored: Vec<(usize, f32)> = (0..order.len())
        .filter(|&p| ix.admits(order[p], q))
        .map(|p| (p, vectors[p].iter().zip(query).map(|(a, b)| a * b).sum()))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(q.limit);
    scored
        .into_iter()
        .filter_map(|(p, c)| ix.hit_of(order[p], c as f64))
        .collect()
}

pub fn run(
    index: &LexicalIndex,
    questions: &[Question],
    dia_of: &HashMap<(String, String), String>,
    model_dir: &Path,
    tune: bool,
) {
    let model = LocalModel::load(model_dir).expect("load the model");
    let docs = index.docs_in(&KeyRange::all());
    let texts: Vec<&str> = docs.iter().map(|d| d.content).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let vectors = model.embed(&texts).expect("embed the turns");
    let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "embedded {} memories in {secs:.1} s: {:.0} memories/s ({threads} threads); \
         {cpu:.1} s of CPU: {:.0} memories per CPU-second, load {}",
        texts.len(),
        texts.len() as f64 / secs,
        texts.len() as f64 / cpu,
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split(' ').next().unwrap_or("?").to_string())
            .unwrap_or_else(|_| "unknown".into())
    );
    let qtexts: Vec<&str> = questions.iter().map(|q| q.text.as_str()).collect();
    let qvectors = model.embed(&qtexts).expect("embed the questions");
    let query_of: HashMap<&str, &Vec<f32>> = qtexts.iter().copied().zip(&qvectors).collect();
    let by_text: HashMap<&str, &Vec<f32>> = texts.iter().copied().zip(&vectors).collect();
    let pairs: Vec<_> = docs.iter().map(|d| (d.value, d.content)).collect();
    let root = *index.root().expect("an index at a root");
    let (kept, _) = VectorIndex::default()
        .synced(&model.model_id(), &root, &pairs, &mut |t: &[&str]| {
            Ok::<_, ()>(t.iter().map(|x| by_text[x].clone()).collect())
        })
        .expect("vectors");
    let bytes = kept.bytes().len();
    println!(
        "vector cache: {bytes} bytes for {} memories ({:.0} bytes per memory)",
        kept.keys(),
        bytes as f64 / kept.keys() as f64
    );

    println!("semantic, float32 vectors:");
    evaluate(index, questions, dia_of, |ix, q| {
        by_float_cosine(ix, &vectors, query_of[q.text], q)
    });
    let halves: Vec<Vec<f32>> = vectors
        .iter()
        .map(|v| v.iter().map(|x| half::f16::from_f32(*x).to_f32()).collect())
        .collect();
    println!("semantic, float16 vectors:");
    evaluate(index, questions, dia_of, |ix, q| {
        by_float_cosine(ix, &halves, query_of[q.text], q)
    });
    println!("semantic, int8 vectors (as kept):");
    evaluate(index, questions, dia_of, |ix, q| {
        hybrid::semantic(ix, &kept, query_of[q.text], q)
    });
    let fusion = Fusion::default();
    println!(
        "hybrid (lexical weight {}, {} candidates each):",
        fusion.lexical_weight, fusion.candidates
    );
    evaluate(index, questions, dia_of, |ix, q| {
        hybrid::hybrid(ix, &kept, query_of[q.text], q, &fusion)
    });
    // A query as search runs it: embedded, then fused (top 10).
    let mut times = Vec::new();
    for q in questions.iter().take(300) {
        let t = Instant::now();
        let v = model.embed(&[q.text.as_str()]).expect("embed");
        let hits = hybrid::hybrid(
            index,
            &kept,
            &v[0],
            &Query {
                text: &q.text,
                namespace: Some(&q.namespace),
                limit: 10,
                ..Default::default()
            },
            &fusion,
        );
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(hits.len() <= 10);
    }
    let (med, p95) = median_p95(times);
    println!("hybrid query with its embedding: median {med:.2} ms  p95 {p95:.2} ms");
    if tune {
        for candidates in [50, 100, 200] {
            for w in [0.3, 0.4, 0.5, 0.6, 0.7] {
                let f = Fusion {
                    lexical_weight: w,
                    candidates,
                };
                println!("hybrid, lexical weight {w}, {candidates} candidates:");
                evaluate(index, questions, dia_of, |ix, q| {
                    hybrid::hybrid(ix, &kept, query_of[q.text], q, &f)
                });
            }
        }
    }
}

/// The CPU time this process has used, its threads' user and system time together: on a
/// machine shared with other work, what the embedding costs whatever the wall clock says.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
