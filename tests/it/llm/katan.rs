//! memoir against a real model server: llm-katan's echo backend (PyPI `llm-katan`), which
//! serves the OpenAI and Anthropic APIs and answers every request with the prompt repeated.
//! An echo is never the JSON object a prompt asks for, so every model step must count the
//! call as failed: recall falls back to lexical, the classifier stores nothing, `llm_merge`
//! appends and warns. The same server checks base URLs with and without `/v1` for both wire
//! formats, and the message when a server needs a key that was not given.
//!
//! llm-katan is run from the project's virtual environment, `.venv/bin/llm-katan` (made by
//! `.ci/run`, or `python3 -m venv .venv && .venv/bin/pip install -r
//! tests/python/requirements.txt`); without it these tests skip saying so (see
//! `crate::common::require`). Each test starts its own server on a free loopback port (about
//! half a second) and stops it when done.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{commit_count, memoir, memoir_full, record, store_with};
use crate::common::{start_server, venv_program, Server};

/// llm-katan of the project's virtual environment (see [`venv_program`]).
fn katan_program() -> Option<PathBuf> {
    venv_program("llm-katan")
}

/// A running llm-katan echo server, stopped when dropped.
struct Katan {
    _server: Server,
    /// `http://127.0.0.1:PORT`, without a path.
    url: String,
}

/// Whether the server on `port` answers its health check.
fn healthy(port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    s.write_all(req.as_bytes()).is_ok()
        && s.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}

impl Katan {
    /// Starts an echo server for the OpenAI and Anthropic APIs and waits until it answers;
    /// `None` when the test skips for want of llm-katan.
    fn start() -> Option<Katan> {
        let program = katan_program()?;
        let args = |port: u16, dir: &Path| -> Vec<String> {
            let mut a: Vec<String> = [
                "--model",
                "echo-model",
                "--backend",
                "echo",
                "--host",
                "127.0.0.1",
                "--providers",
                "openai,anthropic",
                "--disable-dashboard",
                "--log-level",
                "warning",
                "--port",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            a.push(port.to_string());
            a.push("--stats-file".into());
            a.push(dir.join("stats.json").display().to_string());
            a
        };
        let server = start_server(&program, &args, &healthy);
        Some(Katan {
            url: format!("http://127.0.0.1:{}", server.port),
            _server: server,
        })
    }

    /// The environment of an OpenAI-compatible model at this server (base URL `suffix`
    /// appended; llm-katan wants a key header, whatever its value).
    fn openai(&self, suffix: &str) -> Vec<(&'static str, String)> {
        vec![
            ("MEMOIR_LLM_BASE_URL", format!("{}{suffix}", self.url)),
            ("OPENAI_API_KEY", "test-key".to_string()),
        ]
    }
}

fn env_of<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A store with a dozen notes (more than an echo's ten first keys) and one database memory.
fn notes_store(dir: &Path) -> PathBuf {
    let notes: Vec<(String, String)> = (0..12)
        .map(|i| (format!("note number {i}"), format!("notes.n{i:02}")))
        .collect();
    let mut memories: Vec<(&str, &str)> = notes
        .iter()
        .map(|(c, p)| (c.as_str(), p.as_str()))
        .collect();
    memories.push(("PostgreSQL 16 is the main database", "infra.database"));
    store_with(dir, &memories)
}

/// Recall through `env` falls back to lexical because the model echoed: returns the output.
fn echoed_recall(store: &Path, env: &[(&str, &str)], mode: &str) -> Value {
    let (code, v) = memoir(store, env, &["recall", "which database?", "--mode", mode]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["metadata"]["mode"], "lexical", "{v}");
    assert_eq!(v["metadata"]["fellback_from"], mode);
    let reason = v["metadata"]["fallback_reason"].as_str().unwrap();
    assert!(reason.contains("not a JSON object"), "{reason}");
    let reply = v["metadata"]["llm_prompts"][0]["reply"].as_str().unwrap();
    assert!(reply.starts_with("[echo] model=echo-model"), "{reply}");
    assert_eq!(v["memories"][0]["path"], "infra.database", "{v}");
    for m in v["memories"].as_array().unwrap() {
        assert_eq!(m["metadata"]["mode"], "lexical");
    }
    v
}

#[test]
fn katan_echo_recall_falls_back_to_lexical() {
    let Some(k) = Katan::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = notes_store(dir.path());
    let env = k.openai("/v1");
    let v = echoed_recall(&store, &env_of(&env), "single");
    assert_eq!(
        v["count"], 1,
        "only the lexical hit, not the inventory: {v}"
    );
    echoed_recall(&store, &env_of(&env), "tiered");
    // The Anthropic API of the same server.
    let env = [
        ("ANTHROPIC_API_KEY", "test-key"),
        ("ANTHROPIC_BASE_URL", k.url.as_str()),
    ];
    let v = echoed_recall(&store, &env, "single");
    assert_eq!(v["metadata"]["model"], "anthropic:claude-haiku-4-5");
}

#[test]
fn katan_echo_classifier_stores_nothing() {
    let Some(k) = Katan::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = notes_store(dir.path());
    let before = commit_count(&store);
    let openai = k.openai("");
    let anthropic = vec![
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
        ("ANTHROPIC_BASE_URL", format!("{}/v1", k.url)),
    ];
    for env in [openai, anthropic] {
        let (code, v, err) = memoir_full(&store, &env_of(&env), &["remember", "Likes dark mode"]);
        assert_eq!(code, 1, "{v}");
        assert_eq!(
            (v["success"].as_bool(), v["code"].as_u64()),
            (Some(false), Some(1))
        );
        let e = v["error"].as_str().unwrap();
        assert!(
            e.contains("not a JSON object")
                && e.contains("[echo]")
                && e.contains("nothing was stored"),
            "{e}"
        );
        assert!(!err.contains("panic"), "{err}");
    }
    assert_eq!(commit_count(&store), before);
}

#[test]
fn katan_echo_llm_merge_appends_and_warns() {
    let Some(k) = Katan::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        dir.path(),
        &[("Deploy with make release", "workflow.deploy.steps")],
    );
    let env = k.openai("/v1/");
    let (code, v, err) = memoir_full(
        &store,
        &env_of(&env),
        &[
            "remember",
            "Run the smoke tests",
            "-p",
            "workflow.deploy.steps",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert!(v["commit_hash"].is_string());
    let why = v["reasoning"].as_str().unwrap();
    assert!(
        why.contains("appended") && why.contains("not a JSON object"),
        "{why}"
    );
    assert!(
        err.contains("llm_merge") && err.contains("appended"),
        "{err}"
    );
    let r = record(&store, "workflow.deploy.steps");
    assert_eq!(
        r["content"],
        "Deploy with make release\n\n[update] Run the smoke tests"
    );
    for e in r["entries"].as_array().unwrap() {
        assert_eq!(e["status"], "active");
        assert!(!e["content"].as_str().unwrap().contains("[echo]"));
    }
}

#[test]
fn katan_base_urls_and_keys() {
    let Some(k) = Katan::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = notes_store(dir.path());
    // Every form of base URL reaches the server (the reply is its echo, not a 404).
    let url = k.url.as_str();
    for base in [url.to_string(), format!("{url}/"), format!("{url}/v1")] {
        let env = [("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")];
        echoed_recall(&store, &env, "single");
        let env = [
            ("ANTHROPIC_BASE_URL", base.as_str()),
            ("ANTHROPIC_API_KEY", "k"),
        ];
        echoed_recall(&store, &env, "single");
    }
    // No key for a server that wants one: the failure names the missing key.
    let (code, v) = memoir(&store, &[("OPENAI_BASE_URL", url)], &["recall", "database"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["metadata"]["fellback_from"], "single");
    let reason = v["metadata"]["fallback_reason"].as_str().unwrap();
    assert!(
        reason.contains("401")
            && reason.contains("no API key was sent")
            && reason.contains("OPENAI_API_KEY"),
        "{reason}"
    );
    let env = [("ANTHROPIC_BASE_URL", url)];
    let (code, v) = memoir(&store, &env, &["remember", "Likes dark mode"]);
    assert_eq!(code, 1, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("401") && e.contains("ANTHROPIC_API_KEY"), "{e}");
}

#[test]
fn katan_echo_capture_stores_nothing() {
    let Some(k) = Katan::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = notes_store(dir.path());
    let before = commit_count(&store);
    let turn = "[Human] From now on use pytest.\n[Assistant] Noted: pytest for every test.";
    let anthropic = vec![
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
        ("ANTHROPIC_BASE_URL", k.url.clone()),
    ];
    for env in [k.openai("/v1"), anthropic] {
        for args in [&[][..], &["--dry-run"][..]] {
            let (code, v, err) = super::capture::capture(&store, &env_of(&env), args, turn);
            assert_eq!(code, 1, "{v}");
            let e = v["error"].as_str().unwrap();
            assert!(
                e.contains("not 'path<TAB>fact'")
                    && e.contains("[echo]")
                    && e.contains("nothing was stored"),
                "{e}"
            );
            assert!(!err.contains("panic"), "{err}");
        }
    }
    assert_eq!(commit_count(&store), before);
}
