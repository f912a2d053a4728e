//! What `memoir capture` costs besides the model call, as a host's hook sees it.
//!
//! Builds a store of N memories (3-level keys, realistic sentences) with `memoir import` and
//! `memoir taxonomy init`, serves a scripted OpenAI-compatible model on 127.0.0.1 that
//! answers at once with three new facts (different each time, so each run writes a commit
//! and none is skipped as a duplicate), then runs `memoir --json capture` R times and prints
//! the medians and 95th percentiles of: the whole process (start to exit), the model call as
//! memoir timed it, the process minus the model call, and memoir's own `overhead_ms` (all of
//! the command but the model call, inside the process); and, for scale, `memoir remember -p`
//! on the same store (the same store open and one commit, no model).
//!
//! `cargo bench --bench capture_overhead -- [N] [R]` (defaults 3000 15).

mod common;
use common::{args, binary, path_of, run_memoir, stats};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Instant;

const WORDS: [&str; 16] = [
    "build",
    "cache",
    "deploy",
    "postgres",
    "redis",
    "pytest",
    "lint",
    "release",
    "docker",
    "schema",
    "migration",
    "token",
    "queue",
    "worker",
    "index",
    "metrics",
];

fn sentence(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 5) % WORDS.len()];
    format!(
        "The {} step of service {i} uses {} with {} and {}; it was settled after the {} review.",
        w(0),
        w(1),
        w(2),
        w(3),
        w(4)
    )
}

/// Answers every chat request at once with three facts numbered by the request.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut len = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let l = line.trim_end().to_ascii_lowercase();
                if l.is_empty() {
                    break;
                }
                if let Some(v) = l.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let text = format!(
                "project.services.svc{n}\tService svc{n} listens on port {p} behind the gateway.\n\
                 workflow.deploy.svc{n}\tDeploying svc{n} needs migration {n} applied first.\n\
                 knowledge.limits.svc{n}\tThe queue of svc{n} holds at most {q} jobs at once.",
                p = 8000 + n,
                q = 100 + n
            );
            let body = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": text}}]})
                .to_string();
            let resp = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    url
}

fn main() {
    let args: Vec<usize> = args().iter().map(|a| a.parse().expect("number")).collect();
    let n = args.first().copied().unwrap_or(3000);
    let reps = args.get(1).copied().unwrap_or(15);
    let bin = binary();
    let dir = std::env::temp_dir().join(format!("memoir-capture-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = dir.join("store");
    run_memoir(&bin, &store, &["new", store.to_str().expect("utf-8")]);
    let file = dir.join("memories.jsonl");
    let mut text = String::new();
    for i in 0..n {
        text.push_str(
            &serde_json::json!({"key": path_of(i), "namespace": "default",
                "content": sentence(i), "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&file, text).expect("write jsonl");
    run_memoir(&bin, &store, &["import", file.to_str().expect("utf-8")]);
    run_memoir(&bin, &store, &["taxonomy", "init"]);
    // A search leaves the lexical index cached, as any earlier command of a session would.
    run_memoir(&bin, &store, &["search", "deploy"]);
    let url = serve();
    let turn =
        "[Human] Which port does the new service use, and what must happen before it deploys?\n\
                [Assistant] It listens behind the gateway; apply its migration before deploying.";

    let (mut wall, mut model, mut outside, mut overhead) = (vec![], vec![], vec![], vec![]);
    let (mut read, mut check, mut commit) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        let t = Instant::now();
        let mut child = Command::new(&bin)
            .arg("-s")
            .arg(&store)
            .args(["--json", "capture"])
            .env("MEMOIR_AUTHOR", "bench <bench@example.org>")
            .env("MEMOIR_LLM_BASE_URL", &url)
            .env_remove("MEMOIR_STORE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run memoir");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(turn.as_bytes())
            .expect("write turn");
        let out = child.wait_with_output().expect("wait");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["captured"].as_array().map(Vec::len), Some(3), "{v}");
        let m = v["timings"]["model_ms"].as_f64().expect("model_ms");
        wall.push(ms);
        model.push(m);
        outside.push(ms - m);
        overhead.push(v["timings"]["overhead_ms"].as_f64().expect("overhead_ms"));
        let t = |name: &str| v["timings"][name].as_f64().expect("timing");
        read.push(t("read_ms"));
        check.push(t("check_ms"));
        commit.push(t("commit_ms"));
    }
    // For scale: a write with no model at all, on the same store (open, one commit, close).
    let mut remember = vec![];
    for i in 0..reps {
        let t = Instant::now();
        run_memoir(
            &bin,
            &store,
            &[
                "remember",
                &format!("Bench fact {i} about the deploy queue."),
                "-p",
                &format!("project.bench.fact{i}"),
            ],
        );
        remember.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("capture on a store of {n} memories, {reps} runs (one commit of 3 facts each):");
    for (label, v, target) in [
        ("whole process", wall, ""),
        ("model call (scripted, local)", model, ""),
        (
            "whole process minus the model call",
            outside,
            "target <= 20 ms",
        ),
        ("overhead_ms (in process)", overhead, "target <= 20 ms"),
        ("  of which read_ms", read, ""),
        ("  of which check_ms (reply, duplicates)", check, ""),
        ("  of which commit_ms", commit, ""),
        (
            "remember -p, whole process (no model)",
            remember,
            "for scale",
        ),
    ] {
        let (med, p95) = stats(v);
        println!("  {label:<38} median {med:>7.2} ms   p95 {p95:>7.2} ms   {target}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
