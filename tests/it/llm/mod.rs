//! LLM providers and the picker against a scripted model behind a real HTTP server on
//! 127.0.0.1 (OpenAI and Anthropic wire formats), the command provider, the provider
//! configuration of the environment, and a real model server (llm-katan's echo backend).

mod capture;
mod classify;
mod config;
mod hooks;
mod katan;
mod merge;
mod pick;
mod providers;
mod recall;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use memoir::llm::{ProviderConfig, ProviderKind};
use serde_json::{json, Value};

/// One scripted answer: status, body, delay before answering.
#[derive(Clone)]
struct Answer {
    status: u16,
    body: String,
    delay: Duration,
}

fn openai(text: &str) -> Answer {
    Answer {
        status: 200,
        body: json!({"choices": [{"message": {"role": "assistant", "content": text}}]}).to_string(),
        delay: Duration::ZERO,
    }
}

fn anthropic(text: &str) -> Answer {
    Answer {
        status: 200,
        body: json!({"content": [{"type": "text", "text": text}]}).to_string(),
        delay: Duration::ZERO,
    }
}

fn raw(status: u16, body: &str) -> Answer {
    Answer {
        status,
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

#[derive(Debug, Clone)]
struct Request {
    line: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    _thread: JoinHandle<()>,
}

impl Server {
    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Serves the answers in order, one per request, then 500 for anything unscripted.
fn serve(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    let thread = std::thread::spawn(move || {
        let mut script = answers.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let mut headers = BTreeMap::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            let len: usize = headers
                .get("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            log.lock().unwrap().push(Request {
                line: line.trim_end().to_string(),
                headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let a = script.next().unwrap_or_else(|| raw(500, "unscripted"));
            std::thread::sleep(a.delay);
            let resp = format!(
                "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                a.status,
                a.body.len(),
                a.body
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    Server {
        url,
        requests,
        _thread: thread,
    }
}

fn cfg(kind: ProviderKind, url: &str, timeout_ms: u64) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url: url.to_string(),
        api_key: Some("test-key".into()),
        model: "scripted".into(),
        timeout: Duration::from_millis(timeout_ms),
        max_tokens: 64,
        origin: String::new(),
    }
}

fn memoir(store: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (i32, Value) {
    let (code, v, _) = memoir_full(store, env, args);
    (code, v)
}

/// Runs the binary with a clean LLM environment: exit code, JSON stdout, stderr.
fn memoir_full(
    store: &std::path::Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (i32, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"));
    for (k, _) in std::env::vars() {
        if k.starts_with("MEMOIR_") || k.ends_with("_API_KEY") || k.ends_with("_BASE_URL") {
            cmd.env_remove(k);
        }
    }
    cmd.env("MEMOIR_NOW", "1700000000")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A new store holding `memories` (content, path) written with -p.
fn store_with(dir: &std::path::Path, memories: &[(&str, &str)]) -> std::path::PathBuf {
    let store = dir.join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    for (c, p) in memories {
        let (code, v) = memoir(&store, &[], &["remember", c, "-p", p]);
        assert_eq!(code, 0, "{v}");
    }
    store
}

fn commit_count(store: &std::path::Path) -> u64 {
    let (code, v) = memoir(store, &[], &["status"]);
    assert_eq!(code, 0, "{v}");
    v["commit_count"].as_u64().unwrap()
}

fn record(store: &std::path::Path, key: &str) -> Value {
    let (code, v) = memoir(store, &[], &["get", key]);
    assert_eq!(code, 0, "{v}");
    v["items"][0]["value"].clone()
}

/// The user prompt of a recorded request, in either wire format.
fn user_prompt(r: &Request) -> String {
    let m = &r.body["messages"];
    let last = m.as_array().map(|a| a.len()).unwrap_or(1) - 1;
    m[last]["content"].as_str().unwrap_or_default().to_string()
}
