//! The LLM picker's own cost: `memoir recall --mode single|tiered` on a store of N memories
//! (default 5,000), with a scripted model on 127.0.0.1 that answers at once, so what is left
//! is memoir's work around the calls (opening the store, the inventory, content samples,
//! prompts, parsing, reading the picked records).
//!
//! For each mode it prints the median and p95 of the picker's own work in process (the key
//! inventory, the lexical ordering of candidates in single mode, prompts, content samples,
//! reply parsing; model calls answered at once by an in-process model and their time taken
//! out), which is the overhead the target bounds (<= 5 ms at 5,000 keys), with the thread's
//! CPU time beside it (less sensitive to other load on the machine); then, with the real
//! binary, the command's own `timing_ms` minus its model calls (this adds opening the
//! store and reading the picked records) and the whole process as an agent sees it.
//!
//! `cargo bench --bench recall_picker -- [N] [R]` (defaults 5000 25).

mod common;
use common::{args, binary, path_of, stats};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use memoir::llm::{Llm, LlmError};
use memoir::object::ObjectId;
use memoir::recall::picker::{self, Inventory, Mode};
use memoir::recall::{synced_index, TreeInventory};
use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};
use serde_json::{json, Value};

/// The scripted model's answer to a prompt: the JSON object it asks for, naming the first two
/// entries the prompt lists (`- name: ...`), as topics or as keys.
fn answer(prompt: &str) -> String {
    let field = if prompt.contains("Topics in memory") {
        "topics"
    } else {
        "keys"
    };
    let names: Vec<&str> = prompt
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split_once(": ").map(|(name, _)| name))
        .take(2)
        .collect();
    json!({ field: names }).to_string()
}

/// A model in this process that answers at once.
struct Instant0;

impl Llm for Instant0 {
    fn complete(&self, _system: &str, prompt: &str) -> Result<String, LlmError> {
        Ok(answer(prompt))
    }
    fn describe(&self) -> String {
        "in-process".into()
    }
}

/// CPU time of the calling thread, in milliseconds.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// One in-process pick as `memoir recall` makes it; returns milliseconds outside model calls
/// and the thread's CPU milliseconds for the whole pick (the in-process model costs nothing).
fn pick_in_process(repo: &Repo, store: &Path, root: &ObjectId, mode: Mode, q: &str) -> (f64, f64) {
    let cpu = thread_cpu_ms();
    let t = Instant::now();
    let (index, _, _) = synced_index(store, repo.tree(), repo.objects(), root).expect("index");
    let inv = match mode {
        Mode::Single => TreeInventory::for_single(&index, None, q),
        Mode::Tiered => TreeInventory::from_index(&index, None),
    };
    let p = picker::pick(&Instant0, mode, q, &inv, 10).expect("pick");
    for k in &p.keys {
        inv.sample(k).expect("a candidate");
    }
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let cpu = thread_cpu_ms() - cpu;
    (ms - p.step_timings.values().sum::<f64>(), cpu)
}

/// Serves OpenAI-style chat completions on 127.0.0.1, each answered at once with the first
/// names its prompt lists ([`answer`]).
fn serve_model() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let prompt = request["messages"][1]["content"].as_str().unwrap_or("");
            let answer = json!({
                "choices": [{"message": {"role": "assistant", "content": answer(prompt)},
                             "finish_reason": "stop"}]
            })
            .to_string();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

fn main() {
    let args: Vec<usize> = args().iter().filter_map(|a| a.parse().ok()).collect();
    let n = args.first().copied().unwrap_or(5_000);
    let reps = args.get(1).copied().unwrap_or(25).max(1);
    let bin = binary();
    let dir = std::env::temp_dir().join(format!("memoir-picker-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = dir.join("store");
    let memoir = |extra: &[(&str, &str)], args: &[&str]| {
        let mut c = Command::new(&bin);
        c.arg("-s")
            .arg(&store)
            .args(args)
            .env("MEMOIR_AUTHOR", "bench <bench@example.org>")
            .env_remove("MEMOIR_STORE")
            .env_remove("MEMOIR_LLM_COMMAND")
            .env_remove("ANTHROPIC_API_KEY");
        for (k, v) in extra {
            c.env(k, v);
        }
        let t = Instant::now();
        let out = c.output().expect("run memoir");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(
            out.status.success(),
            "memoir {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (ms, out.stdout)
    };
    memoir(&[], &["new", store.to_str().expect("utf-8")]);
    let file = dir.join("memories.jsonl");
    let mut text = String::new();
    for i in 0..n {
        let content =
            format!("memory {i}: the agent learned something worth keeping about item {i}");
        text.push_str(
            &json!({"key": path_of(i), "namespace": "default", "content": content,
                    "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&file, text).expect("write jsonl");
    memoir(&[], &["import", file.to_str().expect("utf-8")]);

    let query = "what about item 38";
    println!("store of {n} memories, {reps} runs per mode");
    {
        let repo = Repo::open(Store::open(&store, &OpenOptions::default()).expect("open store"))
            .expect("open repo");
        let root = repo
            .root_of(&repo.head_commit().expect("head"))
            .expect("root");
        for (name, mode) in [("single", Mode::Single), ("tiered", Mode::Tiered)] {
            let (runs, cpu): (Vec<f64>, Vec<f64>) = (0..reps)
                .map(|_| pick_in_process(&repo, &store, &root, mode, query))
                .unzip();
            let (m, p) = stats(runs);
            let (cm, cp) = stats(cpu);
            println!(
                "in process  {name:<7} picker overhead median {m:>6.2} ms  p95 {p:>6.2} ms   \
                 target <= 5 ms | thread CPU median {cm:>6.2} ms  p95 {cp:>6.2} ms"
            );
        }
    }
    let base = serve_model();
    let env = [
        ("MEMOIR_LLM_PROVIDER", "openai"),
        ("MEMOIR_LLM_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "bench"),
        ("MEMOIR_LLM_MODEL", "scripted"),
    ];
    for mode in ["single", "tiered"] {
        let mut overhead = Vec::new();
        let mut whole = Vec::new();
        let mut calls = 0;
        for _ in 0..reps {
            let (ms, out) = memoir(&env, &["--json", "recall", query, "--mode", mode]);
            let v: Value = serde_json::from_slice(&out).expect("recall JSON");
            let meta = &v["metadata"];
            assert_eq!(meta["mode"], mode, "recall ran {} instead", meta["mode"]);
            let total = v["timing_ms"].as_f64().expect("timing_ms");
            let steps = meta["step_timings"].as_object().expect("step_timings");
            let llm: f64 = steps.values().filter_map(Value::as_f64).sum();
            calls = steps.len();
            overhead.push(total - llm);
            whole.push(ms);
        }
        let (om, op) = stats(overhead);
        let (wm, wp) = stats(whole);
        println!(
            "binary      {mode:<7} ({calls} model steps)  timing_ms - model median {om:>6.2} ms  p95 {op:>6.2} ms   \
             target <= 5 ms | whole process median {wm:>6.2} ms  p95 {wp:>6.2} ms"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
