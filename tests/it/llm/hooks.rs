//! The host integration examples of `examples/hooks/`: the Claude Code Stop hook (Python)
//! and the generic shell hook hand the last turn to `memoir capture` in the background and
//! return at once; the facts arrive in the store a moment later. The Stop hook runs with
//! the project's virtual environment's Python (see `crate::common::venv_program`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{commit_count, openai, record, serve, store_with, user_prompt, Answer};
use crate::common::venv_program;

fn hook(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/hooks")
        .join(name)
}

/// A model answer that arrives after `delay`.
fn slow(text: &str, delay: Duration) -> Answer {
    Answer {
        delay,
        ..openai(text)
    }
}

/// The environment a host gives the hook: a clean one with the store, the model and memoir.
fn hook_command(program: &Path, store: &Path, model: &str, log: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("MEMOIR_BIN", env!("CARGO_BIN_EXE_memoir"))
        .env("MEMOIR_STORE", store)
        .env("MEMOIR_LLM_BASE_URL", model)
        .env("MEMOIR_NOW", "1700000000")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .env("MEMOIR_CAPTURE_LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits until the store has `want` commits (the background capture wrote); panics with the
/// capture log after 30 s.
fn wait_for_commits(store: &Path, want: u64, log: &Path) {
    let start = Instant::now();
    while commit_count(store) < want {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no capture commit; log: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn claude_code_stop_hook_captures_the_last_turn_in_the_background() {
    let Some(python) = venv_program("python3") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    let before = commit_count(&store);
    let s = serve(vec![slow(
        "preferences.testing.framework\tThe user wants pytest for every test.",
        Duration::from_millis(1500),
    )]);
    let transcript = dir.path().join("session.jsonl");
    let lines = [
        json!({"type": "summary", "summary": "earlier work"}),
        json!({"type": "user", "message": {"role": "user", "content": "Old question"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Old answer"}]}}),
        json!({"type": "user", "message": {"role": "user", "content": "Always use pytest here"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Will do: pytest from now on."}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    let log = dir.path().join("capture.log");
    let input = json!({"session_id": "s1", "transcript_path": transcript, "cwd": dir.path(),
                       "hook_event_name": "Stop", "stop_hook_active": false});

    let out = crate::common::run_with_stdin(
        hook_command(&python, &store, &format!("{}/v1", s.url), &log)
            .arg(hook("claude-code-stop.py")),
        input.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    // The model answers only after 1.5 s: a hook that waited for it would return with the
    // capture already committed.
    assert_eq!(
        commit_count(&store),
        before,
        "the hook waited for the model"
    );

    wait_for_commits(&store, before + 1, &log);
    let prompt = user_prompt(&s.requests()[0]);
    assert!(
        prompt.contains(
            "<<<\n[Human] Always use pytest here\n[Assistant] Will do: pytest from now on.\n>>>"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("Old question"), "{prompt}");
    let r = record(&store, "preferences.testing.framework");
    assert_eq!(r["entries"][0]["actor"], "claude-code");
    assert_eq!(r["entries"][0]["source"], "capture");

    // Input that is not a Stop hook's, or a transcript that is gone: exit 0, nothing done.
    for input in [
        "not json",
        "{\"transcript_path\": \"/nonexistent/t.jsonl\"}",
    ] {
        let out = crate::common::run_with_stdin(
            hook_command(&python, &store, "http://127.0.0.1:9", &log)
                .arg(hook("claude-code-stop.py")),
            input.as_bytes(),
        );
        assert!(out.status.success() && out.stdout.is_empty(), "{input}");
    }
}

#[test]
fn shell_hook_captures_a_turn_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    let before = commit_count(&store);
    let s = serve(vec![slow(
        "workflow.release.steps\tReleases are tagged on main and CI publishes them.",
        Duration::from_millis(1500),
    )]);
    let log = dir.path().join("capture.log");
    let out = hook_command(Path::new("sh"), &store, &format!("{}/v1", s.url), &log)
        .arg(hook("capture-turn.sh"))
        .arg("How do we release?")
        .arg("Tag on main; CI publishes.")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The model answers only after 1.5 s, so the capture cannot have committed yet.
    assert_eq!(
        commit_count(&store),
        before,
        "the hook waited for the model"
    );
    wait_for_commits(&store, before + 1, &log);
    let prompt = user_prompt(&s.requests()[0]);
    assert!(
        prompt.contains("[Human] How do we release?\n[Assistant] Tag on main; CI publishes."),
        "{prompt}"
    );
    assert_eq!(
        record(&store, "workflow.release.steps")["content"],
        "Releases are tagged on main and CI publishes them."
    );
}
