//! The OpenAI-compatible provider (`MEMOIR_EMBED_MODEL=openai:NAME`) against a small
//! `/v1/embeddings` server run here on a loopback port (llm-katan serves no embeddings). Its
//! model counts the letters a to z of each text, so a query of many `z`s is nearest to the
//! memory with the most; the server also counts the texts it was sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{hit_keys, run};
use crate::common::new_store;

/// A running server, stopped when dropped.
struct Server {
    url: String,
    texts: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The letter counts of `text`.
fn letters(text: &str) -> Vec<f32> {
    let mut v = vec![0.0; 26];
    for c in text
        .to_ascii_lowercase()
        .bytes()
        .filter(u8::is_ascii_lowercase)
    {
        v[(c - b'a') as usize] += 1.0;
    }
    v
}

/// Answers one request.
fn answer(stream: TcpStream, texts: &AtomicUsize) {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    let mut line = String::new();
    let mut first = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        if first.is_empty() {
            first = line.clone();
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        line.clear();
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, reply) = match serde_json::from_slice::<Value>(&body) {
        Ok(req) if first.starts_with("POST /v1/embeddings ") && req["model"] == "letters" => {
            let input = req["input"].as_array().cloned().unwrap_or_default();
            texts.fetch_add(input.len(), Ordering::SeqCst);
            let data: Vec<Value> = input
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"index": i, "embedding": letters(t.as_str().unwrap_or(""))}))
                .collect();
            ("200 OK", json!({"object": "list", "data": data}))
        }
        _ => ("404 Not Found", json!({"error": "no such model or path"})),
    };
    let text = reply.to_string();
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let texts = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (Arc::clone(&texts), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            // At most a few hundred requests: the test makes a handful.
            for stream in listener.incoming().take(500) {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    answer(stream, &t);
                }
            }
        });
        Server {
            url,
            texts,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn an_openai_compatible_endpoint_embeds_memories_once() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    for (k, c) in [
        ("a", "buzz fizz jazz"),
        ("b", "hello world"),
        ("c", "apple banana"),
    ] {
        let o = run(&store, None, &[], &["remember", c, "-p", k]);
        assert_eq!(o.code, 0, "{}", o.stderr);
    }
    let env = [("MEMOIR_EMBED_BASE_URL", server.url.as_str())];
    let o = run(
        &store,
        Some("openai:letters"),
        &env,
        &["search", "zzz", "--mode", "semantic"],
    );
    assert_eq!(o.code, 0, "{} / {}", o.stdout, o.stderr);
    assert_eq!(hit_keys(&o)[0], "a");
    // Three memories and the query.
    assert_eq!(server.texts.load(Ordering::SeqCst), 4);
    let o = run(
        &store,
        Some("openai:letters"),
        &env,
        &["search", "zzz", "--mode", "hybrid"],
    );
    assert_eq!(o.json()["mode"], "hybrid");
    assert_eq!(
        server.texts.load(Ordering::SeqCst),
        5,
        "only the query is embedded again"
    );
    // With /v1 in the base URL too; a model the server does not have is an error naming it.
    let v1 = format!("{}/v1", server.url);
    let env = [("MEMOIR_EMBED_BASE_URL", v1.as_str())];
    let o = run(&store, Some("openai:letters"), &env, &["search", "zzz"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(&store, Some("openai:other"), &env, &["search", "zzz"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    let e = o.json()["error"].as_str().unwrap().to_string();
    assert!(e.contains("/v1/embeddings") && e.contains("404"), "{e}");
}
