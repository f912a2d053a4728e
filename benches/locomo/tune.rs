//! `locomo_recall --tune`: the signals' weights chosen on the data by grid search, on all of
//! it and leaving each conversation out, with paired-bootstrap 95% confidence intervals.

use std::collections::HashMap;

use memoir::recall::lexical::{score_terms, LexicalIndex, Params, QuerySignals};
use memoir::recall::Query;
use rand::{Rng, SeedableRng};

use super::Question;

/// Weights of (speaker, time, date, question) tried.
const SPEAKER: [f64; 6] = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5];
const TIME: [f64; 6] = [0.0, 0.1, 0.2, 0.3, 0.5, 0.75];
const DATE: [f64; 4] = [0.0, 0.2, 0.5, 1.0];
const QUESTION: [f64; 6] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];

/// Bootstrap resamples.
const RESAMPLES: usize = 2000;

/// One candidate of a question: its lexical score, key, dia id, and which signals apply.
struct Cand {
    score: f64,
    key: Vec<u8>,
    dia: String,
    flags: [bool; 4],
}

/// A question with its candidates (the best 200 by words), ready to rank again.
struct Scored {
    conv: usize,
    evidence: Vec<String>,
    cands: Vec<Cand>,
}

impl Scored {
    /// Turn recall@10 with weights `w` (speaker, time, date, question).
    fn recall10(&self, w: &[f64; 4]) -> f64 {
        let top = self.ranked(w);
        let top = &top[..top.len().min(10)];
        let found = self
            .evidence
            .iter()
            .filter(|e| top.contains(&e.as_str()))
            .count();
        found as f64 / self.evidence.len() as f64
    }

    /// Session recall@5 of the top 5 turns with weights `w`.
    fn session5(&self, w: &[f64; 4]) -> f64 {
        let session = |d: &str| d.split(':').next().unwrap_or("").to_string();
        let top: Vec<String> = self.ranked(w).iter().take(5).map(|d| session(d)).collect();
        let mut ev: Vec<String> = self.evidence.iter().map(|e| session(e)).collect();
        ev.sort();
        ev.dedup();
        ev.iter().filter(|s| top.contains(s)).count() as f64 / ev.len() as f64
    }

    /// The dia ids of the candidates ranked with weights `w`.
    fn ranked(&self, w: &[f64; 4]) -> Vec<&str> {
        let mut ranked: Vec<(f64, &Cand)> = self
            .cands
            .iter()
            .map(|c| {
                let mut s = c.score;
                for (i, on) in c.flags.iter().enumerate() {
                    if *on {
                        s *= if i == 3 { 1.0 - w[i] } else { 1.0 + w[i] };
                    }
                }
                (s, c)
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
        ranked.iter().map(|r| r.1.dia.as_str()).collect()
    }
}

/// Mean and paired-bootstrap 95% interval of `deltas` (percentage points).
fn ci(deltas: &[f64]) -> (f64, f64, f64) {
    let n = deltas.len();
    let mean = |v: &mut dyn Iterator<Item = f64>| 100.0 * v.sum::<f64>() / n as f64;
    let m = mean(&mut deltas.iter().copied());
    let mut rng = rand::rngs::StdRng::seed_from_u64(52);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| mean(&mut (0..n).map(|_| deltas[rng.gen_range(0..n)])))
        .collect();
    means.sort_by(f64::total_cmp);
    (
        m,
        means[RESAMPLES * 25 / 1000],
        means[RESAMPLES * 975 / 1000],
    )
}

/// Runs the grid search and prints what it chose and how it scores.
pub(super) fn run(
    index: &LexicalIndex,
    questions: &[Question],
    dia_of: &HashMap<(String, String), String>,
) {
    let ones = Params {
        speaker_boost: 1.0,
        time_boost: 1.0,
        date_boost: 1.0,
        question_penalty: 0.5,
        ..Params::default()
    };
    let mut convs: Vec<&str> = Vec::new();
    let scored: Vec<Scored> = questions
        .iter()
        .map(|q| {
            if !convs.contains(&q.namespace.as_str()) {
                convs.push(&q.namespace);
            }
            let qs = QuerySignals::new(&q.text);
            let hits = index.search_by_words(&Query {
                text: &q.text,
                namespace: Some(&q.namespace),
                limit: 200,
                ..Default::default()
            });
            let cands = hits
                .iter()
                .map(|h| {
                    let t = score_terms(h, &qs, &ones);
                    Cand {
                        score: h.score,
                        key: h.key.clone(),
                        dia: dia_of[&(h.namespace.clone(), h.path.clone())].clone(),
                        flags: [t.speaker, t.time, t.date, t.question].map(|f| f != 1.0),
                    }
                })
                .collect();
            Scored {
                conv: convs.iter().position(|c| *c == q.namespace).unwrap_or(0),
                evidence: q.evidence.clone(),
                cands,
            }
        })
        .collect();
    let mut grid = Vec::new();
    for s in SPEAKER {
        for t in TIME {
            for d in DATE {
                for q in QUESTION {
                    grid.push([s, t, d, q]);
                }
            }
        }
    }
    // Per weights, per conversation: the sum of turn recall@10.
    let sums: Vec<Vec<f64>> = grid
        .iter()
        .map(|w| {
            let mut by = vec![0.0; convs.len()];
            for q in &scored {
                by[q.conv] += q.recall10(w);
            }
            by
        })
        .collect();
    let best_without = |held: Option<usize>| -> usize {
        let total = |i: usize| -> f64 {
            sums[i]
                .iter()
                .enumerate()
                .filter(|(c, _)| Some(*c) != held)
                .map(|(_, v)| v)
                .sum()
        };
        (0..grid.len())
            .max_by(|&a, &b| total(a).total_cmp(&total(b)).then(b.cmp(&a)))
            .unwrap_or(0)
    };
    let none = [0.0; 4];
    let base: Vec<f64> = scored.iter().map(|q| q.recall10(&none)).collect();
    let n = scored.len() as f64;
    println!("tuning (turn recall@10; weights speaker, time, date, question):");
    let mut loco = vec![0.0; scored.len()];
    for (c, name) in convs.iter().enumerate() {
        let w = grid[best_without(Some(c))];
        let (mut b, mut t, mut k) = (0.0, 0.0, 0);
        for (i, q) in scored.iter().enumerate().filter(|(_, q)| q.conv == c) {
            loco[i] = q.recall10(&w);
            b += base[i];
            t += loco[i];
            k += 1;
        }
        let k = k.max(1) as f64;
        println!(
            "  left out {name:<8} n {:>4}  chose {w:?}  words {:.1} -> {:.1} ({:+.1})",
            k as usize,
            100.0 * b / k,
            100.0 * t / k,
            100.0 * (t - b) / k
        );
    }
    let deltas: Vec<f64> = loco.iter().zip(&base).map(|(a, b)| a - b).collect();
    let (m, lo, hi) = ci(&deltas);
    println!(
        "  leave-one-conversation-out: {:.1} (words alone {:.1}; {m:+.1}, 95% CI {lo:+.1}..{hi:+.1})",
        100.0 * loco.iter().sum::<f64>() / n,
        100.0 * base.iter().sum::<f64>() / n,
    );
    let w = grid[best_without(None)];
    let all: Vec<f64> = scored.iter().map(|q| q.recall10(&w)).collect();
    let deltas: Vec<f64> = all.iter().zip(&base).map(|(a, b)| a - b).collect();
    let (m, lo, hi) = ci(&deltas);
    let s5 = |w: &[f64; 4]| 100.0 * scored.iter().map(|q| q.session5(w)).sum::<f64>() / n;
    println!(
        "  chosen on all: {w:?}  {:.1} ({m:+.1}, 95% CI {lo:+.1}..{hi:+.1}); session@5 of the top 5 turns {:.1} (words alone {:.1})",
        100.0 * all.iter().sum::<f64>() / n,
        s5(&w),
        s5(&none)
    );
    let p = Params::default();
    let d = [
        p.speaker_boost,
        p.time_boost,
        p.date_boost,
        p.question_penalty,
    ];
    let def: Vec<f64> = scored.iter().map(|q| q.recall10(&d)).collect();
    let deltas: Vec<f64> = def.iter().zip(&base).map(|(a, b)| a - b).collect();
    let (m, lo, hi) = ci(&deltas);
    println!(
        "  the defaults {d:?}: {:.1} ({m:+.1}, 95% CI {lo:+.1}..{hi:+.1})",
        100.0 * def.iter().sum::<f64>() / n
    );
    // Each signal alone, at the defaults' weight.
    for (i, name) in ["speaker", "time", "date", "question"].iter().enumerate() {
        let mut one = [0.0; 4];
        one[i] = d[i];
        let r: Vec<f64> = scored.iter().map(|q| q.recall10(&one)).collect();
        let deltas: Vec<f64> = r.iter().zip(&base).map(|(a, b)| a - b).collect();
        let (m, lo, hi) = ci(&deltas);
        println!("  {name} alone: {m:+.1} (95% CI {lo:+.1}..{hi:+.1})");
    }
}
