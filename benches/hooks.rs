//! Whole-process timings of `memoir hook` (release build), as an agent host sees them: a
//! git repository whose store (repo mode, HOME in a temporary directory) holds N memories,
//! and each hook run R times with the host's JSON on stdin. Prints the median and p95 wall
//! time of `session-start` and `user-prompt-submit` (target: median <= 20 ms at 10,000
//! memories), and of `stop` (which starts `capture` detached and returns; no model is
//! configured, so the capture only logs that).
//!
//! `cargo bench --bench hooks -- [N] [R]` (defaults 10000 31).

mod common;
use common::{args, binary, import_lines, run_memoir, stats};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs `memoir hook claude-code EVENT` with `input` on stdin; milliseconds.
fn hook(bin: &Path, home: &Path, repo: &Path, event: &str, input: &str) -> f64 {
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(["hook", "claude-code", event])
        .current_dir(repo)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run memoir hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write input");
    let out = child.wait_with_output().expect("wait");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(out.status.success());
    ms
}

fn measure(label: &str, target: &str, reps: usize, mut f: impl FnMut() -> f64) {
    let (med, p95) = stats((0..reps).map(|_| f()).collect());
    println!("{label:<44} median {med:>8.2} ms   p95 {p95:>8.2} ms   target {target}");
}

fn main() {
    let argv = args();
    let n: usize = argv.first().map_or(10_000, |a| a.parse().expect("N"));
    let reps: usize = argv.get(1).map_or(31, |a| a.parse().expect("R"));
    let bin = std::env::var_os("MEMOIR_BENCH_BIN").map_or_else(binary, Into::into);
    let dir = std::env::temp_dir().join(format!("memoir-hooks-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (home, repo) = (dir.join("home"), dir.join("app"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&repo).expect("repo");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "s",
        ],
    ] {
        let ok = Command::new("git").arg("-C").arg(&repo).args(args).status();
        assert!(ok.expect("git").success());
    }
    let cwd = repo.to_str().expect("utf-8");
    let start =
        serde_json::json!({"session_id": "b", "cwd": cwd, "hook_event_name": "SessionStart",
        "source": "startup", "transcript_path": ""})
        .to_string();
    let t = hook(&bin, &home, &repo, "session-start", &start);
    println!("(first session start, creating the store: {t:.1} ms)");
    let slug: String = cwd
        .chars()
        .map(|c| if c == '/' || c == '.' { '-' } else { c })
        .collect();
    let store = home.join(".memoir").join(slug);
    let file = dir.join("m.jsonl");
    std::fs::write(&file, import_lines(n)).expect("write jsonl");
    run_memoir(&bin, &store, &["import", file.to_str().expect("utf-8")]);
    println!("store of {n} memories at {}", store.display());

    let prompt = serde_json::json!({"session_id": "b", "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "What did the agent learn about topic07 area03 item000123 last week?"})
    .to_string();
    let t = hook(&bin, &home, &repo, "user-prompt-submit", &prompt);
    println!("(first prompt after the import, building the search index: {t:.1} ms)");
    measure("hook session-start", "<= 20 ms", reps, || {
        hook(&bin, &home, &repo, "session-start", &start)
    });
    measure("hook user-prompt-submit", "<= 20 ms", reps, || {
        hook(&bin, &home, &repo, "user-prompt-submit", &prompt)
    });
    let transcript = dir.join("t.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Use pytest\"}}\n\
         {\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":\"OK\"}}\n",
    )
    .expect("transcript");
    let stop = serde_json::json!({"session_id": "b", "cwd": cwd, "hook_event_name": "Stop",
        "stop_hook_active": false, "transcript_path": transcript})
    .to_string();
    measure("hook stop (starts capture detached)", "-", reps, || {
        hook(&bin, &home, &repo, "stop", &stop)
    });
    // The detached captures finish (failing: no model) before the directory goes.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let _ = std::fs::remove_dir_all(&dir);
}
