//! `memoir mcp` run for real: the binary is started as a child process and spoken to with
//! rmcp's client over stdio, on temporary stores.

use std::path::Path;
use std::time::Instant;

use rmcp::model::CallToolRequestParams;
use serde_json::{json, Map, Value};

use crate::common::{
    cli, memoir, new_store, remember_once_asked, slow_model, sorted, text_of, wrote_before,
    Session as Server,
};

impl Server {
    /// `memoir -q mcp --store STORE <extra>` on stdio.
    fn start(store: &Path, extra: &[&str]) -> Server {
        Server::stdio(store, &["-q"], extra, &[])
    }

    /// Starts the server with extra environment variables.
    fn start_env(store: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::stdio(store, &["-q"], extra, env)
    }
}

#[test]
fn tool_list_matches_the_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store, &[]);
    let tools = s.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "memoir_summarize",
            "memoir_get",
            "memoir_recall",
            "memoir_search",
            "memoir_log",
            "memoir_blame",
            "memoir_diff",
            "memoir_status",
            "memoir_branches",
            "memoir_remember",
            "memoir_forget",
            "memoir_checkout",
            "memoir_merge",
            "memoir_capture",
            "memoir_taxonomy",
            "memoir_sync_branch",
            "memoir_memory",
            "search",
            "fetch",
        ]
    );
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        let read_only = !matches!(
            t.name.as_ref(),
            "memoir_remember"
                | "memoir_forget"
                | "memoir_checkout"
                | "memoir_merge"
                | "memoir_capture"
                | "memoir_sync_branch"
                | "memoir_memory"
        );
        assert_eq!(a.read_only_hint, Some(read_only), "{}", t.name);
        assert_eq!(
            a.destructive_hint,
            Some(matches!(
                t.name.as_ref(),
                "memoir_forget" | "memoir_sync_branch" | "memoir_memory"
            )),
            "{}",
            t.name
        );
        assert_eq!(t.input_schema.get("type"), Some(&json!("object")));
    }
    let got = serde_json::to_string_pretty(&sorted(serde_json::to_value(&tools).unwrap())).unwrap()
        + "\n";
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mcp_tools.json");
    if std::env::var_os("MEMOIR_UPDATE_GOLDEN").is_some() || !golden.exists() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert!(
        got == want,
        "tool list differs from {} (set MEMOIR_UPDATE_GOLDEN=1 to rewrite it):\n{got}",
        golden.display()
    );
}

#[test]
fn every_tool_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store, &[]);

    let r = s.ok(
        "memoir_remember",
        json!({"content": "prefers pytest over unittest", "path": "preferences.coding.testing"}),
    );
    assert_eq!(r["full_key"], "default:preferences.coding.testing");
    assert!(r["commit_hash"].is_string());
    let r = s.ok(
        "memoir_remember",
        json!({"content": "uses postgres 16", "paths": ["infra.database", "infra.db"], "namespace": "work"}),
    );
    assert_eq!(r["keys"], json!(["infra.database", "infra.db"]));

    let g = s.ok(
        "memoir_get",
        json!({"keys": ["preferences.coding.testing", "work:infra.database", "nope.x"]}),
    );
    assert_eq!(g["count"], 3);
    assert_eq!(g["found_count"], 2);
    assert_eq!(
        g["items"][0]["value"]["content"],
        "prefers pytest over unittest"
    );
    assert_eq!(g["items"][2]["found"], false);

    let sm = s.ok("memoir_summarize", json!({"depth": 1}));
    assert_eq!(sm["total_memories"], 3);
    assert_eq!(sm["prefix_counts"]["work"]["infra"], 2);
    let sm = s.ok(
        "memoir_summarize",
        json!({"keys": ["infra.*"], "namespace": "work"}),
    );
    assert_eq!(
        sm["matching_keys"]["work"],
        json!(["infra.database", "infra.db"])
    );

    let rc = s.ok(
        "memoir_recall",
        json!({"query": "which database", "mode": "lexical", "limit": 2}),
    );
    assert_eq!(rc["memories"][0]["namespace"], "work");
    let se = s.ok("memoir_search", json!({"query": "pytest"}));
    assert_eq!(se["hits"][0]["key"], "preferences.coding.testing");

    let log = s.ok("memoir_log", json!({"limit": 10}));
    assert_eq!(log["commits"].as_array().unwrap().len(), 3);
    let bl = s.ok("memoir_blame", json!({"key": "preferences.coding.testing"}));
    assert_eq!(bl["entries"].as_array().unwrap().len(), 1);
    let df = s.ok("memoir_diff", json!({}));
    assert_eq!(df["changes"].as_array().unwrap().len(), 2);
    let st = s.ok("memoir_status", json!({}));
    assert_eq!(st["memory_count"], 3);
    assert_eq!(st["branch"], "main");

    // Per-call branch: written there without moving HEAD.
    let r = s.ok(
        "memoir_remember",
        json!({"content": "try ruff", "path": "tools.lint", "branch": "exp"}),
    );
    assert!(r["commit_hash"].is_string());
    let br = s.ok("memoir_branches", json!({}));
    assert_eq!(br["current"], "main");
    assert!(br["branches"].to_string().contains("exp"));
    let g = s.ok(
        "memoir_get",
        json!({"keys": ["tools.lint"], "branch": "exp"}),
    );
    assert_eq!(g["found_count"], 1);
    let g = s.err("memoir_get", json!({"keys": ["tools.lint"]}));
    assert_eq!(g["code"], 2);
    // Past reads.
    let g = s.ok(
        "memoir_get",
        json!({"keys": ["preferences.coding.testing"], "at": "HEAD~1"}),
    );
    assert_eq!(g["found_count"], 1);

    let m = s.ok("memoir_merge", json!({"source": "exp"}));
    assert_eq!(m["target_branch"], "main");
    let g = s.ok("memoir_get", json!({"keys": ["tools.lint"]}));
    assert_eq!(g["found_count"], 1);

    let co = s.ok("memoir_checkout", json!({"target": "side", "create": true}));
    assert_eq!(co["branch"], "side");
    let co = s.ok("memoir_checkout", json!({"target": "main"}));
    assert_eq!(co["branch"], "main");

    let f = s.ok("memoir_forget", json!({"key": "tools.lint"}));
    assert!(f["commit_hash"].is_string());
    let g = s.err("memoir_get", json!({"keys": ["tools.lint"]}));
    assert_eq!(g["code"], 2);
}

#[test]
fn errors_carry_the_cli_messages_and_codes() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (code, _) = cli(&store, &["remember", "x", "-p", "a.b"]);
    assert_eq!(code, 0);
    let s = Server::start(&store, &[]);

    // (tool, arguments, CLI arguments of the same request)
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "memoir_get",
            json!({"keys": ["no.such"]}),
            vec!["get", "no.such"],
        ),
        (
            "memoir_summarize",
            json!({"namespace": "nowhere"}),
            vec!["summarize", "-n", "nowhere"],
        ),
        (
            "memoir_forget",
            json!({"key": "no.such"}),
            vec!["forget", "no.such"],
        ),
        (
            "memoir_get",
            json!({"keys": ["a.b"], "branch": "ghost"}),
            vec!["get", "a.b", "--branch", "ghost"],
        ),
        (
            "memoir_log",
            json!({"rev": "nowhere~3"}),
            vec!["log", "nowhere~3"],
        ),
        (
            "memoir_get",
            json!({"keys": ["bad key"]}),
            vec!["get", "bad key"],
        ),
        (
            "memoir_remember",
            json!({"content": "y", "path": "a.b", "merge_policy": "reject"}),
            vec!["remember", "y", "-p", "a.b", "--merge-policy", "reject"],
        ),
        (
            "memoir_checkout",
            json!({"target": "ghost"}),
            vec!["checkout", "ghost"],
        ),
        // No path and no LLM configured: the CLI's error.
        (
            "memoir_remember",
            json!({"content": "y"}),
            vec!["remember", "y"],
        ),
    ];
    for (tool, args, cli_args) in cases {
        let got = s.err(tool, args.clone());
        let (code, want) = cli(&store, &cli_args);
        assert_ne!(code, 0, "{cli_args:?}");
        assert_eq!(got["code"], json!(code), "{tool} {args}: {got}");
        if let Some(e) = want.get("error").filter(|e| e.is_string()) {
            assert_eq!(&got["error"], e, "{tool} {args}");
        }
        assert_eq!(got["success"], json!(false), "{tool}");
    }

    // Arguments the schema does not allow are tool errors too (usage, code 2).
    let e = s.err("memoir_get", json!({"keys": ["a.b"], "colour": "red"}));
    assert_eq!(e["code"], 2);
    assert!(e["error"].as_str().unwrap().contains("colour"), "{e}");
    let e = s.err("memoir_summarize", json!({"depth": 0}));
    assert_eq!(e["code"], 2);
    let e = s.err("memoir_nothing", json!({}));
    assert_eq!(e["code"], 2);
}

#[test]
fn credentials_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store, &[]);
    let key = format!("sk-proj-{}", "Ab3dEf6h".repeat(4));
    for content in [
        format!("the openai key is {key}"),
        "deploy with AKIAIOSFODNN7EXAMPLE".to_string(),
        "db password=hunter2hunter2".to_string(),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----"
            .to_string(),
    ] {
        let r = s.call(
            "memoir_remember",
            json!({"content": content, "path": "secrets.x"}),
        );
        assert_eq!(r.is_error, Some(true));
        let v = r.structured_content.clone().unwrap();
        assert_eq!(v["code"], 1);
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains("credential"), "{msg}");
        assert!(
            !msg.contains(&key),
            "the message must not repeat the secret"
        );
        assert!(text_of(&r).contains("credential"));
    }
    let st = s.ok("memoir_status", json!({}));
    assert_eq!(st["memory_count"], 0, "nothing was stored");
}

#[test]
fn a_cli_write_during_serving_is_seen_by_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store, &[]);
    let g = s.err("memoir_get", json!({"keys": ["shared.note"]}));
    assert_eq!(g["code"], 2);
    // The server lets go of the store when idle: a CLI write waits a moment at most.
    let t = Instant::now();
    let (code, out) = cli(
        &store,
        &[
            "--lock-timeout",
            "3",
            "remember",
            "from the cli",
            "-p",
            "shared.note",
        ],
    );
    assert_eq!(code, 0, "{out}");
    println!("CLI write while serving took {:?}", t.elapsed());
    assert!(t.elapsed().as_secs() < 3);
    let g = s.ok("memoir_get", json!({"keys": ["shared.note"]}));
    assert_eq!(g["items"][0]["value"]["content"], "from the cli");
    // And the other way round.
    s.ok(
        "memoir_remember",
        json!({"content": "from the server", "path": "shared.other"}),
    );
    let (code, out) = cli(&store, &["get", "shared.other"]);
    assert_eq!(code, 0);
    assert_eq!(out["items"][0]["value"]["content"], "from the server");
}

#[test]
fn concurrent_calls_are_safe() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store, &[]);
    let peer = s.client().peer().clone();
    let results = s.rt.block_on(async move {
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let peer = peer.clone();
                let mut args = Map::new();
                args.insert("content".into(), json!(format!("note {i}")));
                args.insert("path".into(), json!(format!("notes.n{i}")));
                tokio::spawn(async move {
                    peer.call_tool(
                        CallToolRequestParams::new("memoir_remember").with_arguments(args),
                    )
                    .await
                })
            })
            .collect();
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    });
    for r in results {
        let r = r.unwrap();
        assert_eq!(r.is_error, Some(false), "{:?}", r.structured_content);
    }
    let st = s.ok("memoir_status", json!({}));
    assert_eq!(st["memory_count"], 16);
}

#[test]
fn the_store_must_exist_unless_init_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("fresh");
    let o = memoir()
        .arg("mcp")
        .arg("--store")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(o.stdout.is_empty(), "stdout is the protocol's");
    assert!(!missing.exists());
    let s = Server::start(&missing, &["--init"]);
    let st = s.ok("memoir_status", json!({}));
    assert_eq!(st["initialized"], true);
}

/// Median of `n` timed calls, in milliseconds, and the median of the command's own
/// `timing_ms` when it reports one.
fn median_ms(s: &Server, n: usize, tool: &str, args: &Value) -> (f64, Option<f64>) {
    let mut wall = Vec::with_capacity(n);
    let mut inner = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let r = s.call(tool, args.clone());
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r.is_error, Some(false));
        if let Some(ms) = r
            .structured_content
            .as_ref()
            .and_then(|v| v.get("timing_ms"))
            .and_then(Value::as_f64)
        {
            inner.push(ms);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let inner = (!inner.is_empty()).then(|| med(&mut inner));
    (med(&mut wall), inner)
}

/// Figures, not assertions: `cargo test --release --test it -- --nocapture mcp::timings`.
#[test]
fn timings_on_a_5000_memory_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let file = dir.path().join("mem.jsonl");
    let mut lines = String::new();
    let topics = [
        "preferences",
        "infra",
        "workflow",
        "tools",
        "people",
        "projects",
    ];
    for i in 0..5000 {
        let key = format!(
            "{}.area{}.topic{}.item{i}",
            topics[i % topics.len()],
            i % 9,
            i % 13
        );
        lines.push_str(
            &json!({"key": key, "namespace": "default", "content": format!("memory number {i} about {key}"), "confidence": 0.9, "timestamp": 1_767_225_600.0 + i as f64})
                .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let (code, out) = cli(&store, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let s = Server::start(&store, &[]);
    let keys: Vec<String> = (0..5)
        .map(|j| {
            let i = j * 997;
            format!(
                "{}.area{}.topic{}.item{i}",
                topics[i % topics.len()],
                i % 9,
                i % 13
            )
        })
        .collect();
    let get = json!({ "keys": keys });
    let g = s.ok("memoir_get", get.clone());
    assert_eq!(g["found_count"], 5);
    let sum = json!({"depth": 3});
    let sm = s.ok("memoir_summarize", sum.clone());
    assert_eq!(sm["total_memories"], 5000);
    let n = 200;
    let (get_wall, get_inner) = median_ms(&s, n, "memoir_get", &get);
    let (sum_wall, _) = median_ms(&s, n, "memoir_summarize", &sum);
    println!(
        "timings (5,000 memories, {n} calls each, median): memoir_get of 5 keys {get_wall:.3} ms \
         round trip ({:.3} ms inside the command); memoir_summarize depth 3 {sum_wall:.3} ms round trip",
        get_inner.unwrap_or(f64::NAN)
    );
}

/// Answers one HTTP request on 127.0.0.1 with an OpenAI-style completion of `text`; the
/// request body comes back through the handle.
fn one_completion(text: &str) -> (String, std::thread::JoinHandle<Value>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let body =
        json!({"choices": [{"message": {"role": "assistant", "content": text}}]}).to_string();
    let h = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap();
                }
            }
        }
        let mut req = vec![0; len];
        reader.read_exact(&mut req).unwrap();
        let resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(resp.as_bytes()).unwrap();
        serde_json::from_slice(&req).unwrap()
    });
    (url, h)
}

#[test]
fn remember_without_a_path_uses_the_configured_llm() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (code, _) = cli(&store, &["remember", "x", "-p", "preferences.ui.theme"]);
    assert_eq!(code, 0);
    let (url, request) = one_completion(
        r#"{"paths": ["preferences.ui.font"], "confidence": 0.8, "reasoning": "a UI preference"}"#,
    );
    let s = Server::start_env(&store, &[], &[("MEMOIR_LLM_BASE_URL", url.as_str())]);
    let r = s.ok("memoir_remember", json!({"content": "Likes large fonts"}));
    assert_eq!(r["keys"], json!(["preferences.ui.font"]));
    assert_eq!(r["confidence"], 0.8);
    let body = request.join().unwrap();
    let prompt = body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("- preferences.ui.theme: 1"), "{prompt}");
    let g = s.ok("memoir_get", json!({"keys": ["preferences.ui.font"]}));
    assert_eq!(g["items"][0]["value"]["confidence"], 0.8);
}

/// What form-building clients send (numbers as text, one key as a string, booleans as
/// text, `null` for an unset argument) is read as meant; a value of the wrong kind is
/// refused with the argument named.
#[test]
fn loosely_filled_arguments_are_read_as_meant() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    for (i, path) in ["a.b", "a.c", "a.d"].iter().enumerate() {
        let (code, _) = cli(&store, &["remember", &format!("note {i}"), "-p", path]);
        assert_eq!(code, 0);
    }
    let s = Server::start(&store, &[]);

    let g = s.ok("memoir_get", json!({"keys": "a.c", "at": null}));
    assert_eq!(g["items"][0]["full_key"], "default:a.c");
    assert_eq!(g["count"], 1);

    let l = s.ok("memoir_log", json!({"limit": "2"}));
    assert_eq!(l["commits"].as_array().unwrap().len(), 2);

    let sm = s.ok("memoir_summarize", json!({"depth": "1", "keys": "a.*"}));
    assert_eq!(sm["prefix_counts"]["default"]["a"], 3);

    let b = s.ok(
        "memoir_blame",
        json!({"key": "a.b", "lines": "true", "limit": 5}),
    );
    assert!(b["lines"].is_array(), "{b}");

    let e = s.err("memoir_log", json!({"limit": "two"}));
    assert_eq!(e["code"], 2);
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains("memoir_log") && msg.contains("non-negative integer"),
        "{msg}"
    );
}

/// `memoir mcp` over stdio, driven line by line, initialized at a protocol version.
struct StdioPeer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl StdioPeer {
    fn start(store: &Path, version: &str) -> StdioPeer {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"))
            .args(["mcp", "--store", store.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut peer = StdioPeer {
            stdin: child.stdin.take(),
            out: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
        };
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        peer.send(&init.to_string());
        assert!(peer.line().contains(r#""id":1"#));
        peer.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        peer
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    /// The next line the server wrote, without its line feed.
    fn line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    }

    /// The next line, as JSON.
    fn reply(&mut self) -> Value {
        let line = self.line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:.200}"))
    }

    /// Closes the server's input and checks that it exits cleanly.
    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

/// Over stdio every request line gets an answer: a memory over the content limit gets the
/// application's error (with the request's id), a line too long to hold gets an error with
/// `"id": null` instead of silence, and the server keeps serving.
#[test]
fn oversized_messages_are_answered_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut peer = StdioPeer::start(&new_store(dir.path()), "2025-06-18");

    // Content over 16 MiB: the application refuses it, answering request 2.
    let big = "x".repeat((16 << 20) + 10);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "memoir_remember", "arguments": {"content": big, "path": "a.b"}}});
    peer.send(&call.to_string());
    let r = peer.reply();
    assert_eq!(r["id"], 2);
    assert_eq!(r["result"]["isError"], true, "{r:.300}");
    assert_eq!(r["result"]["structuredContent"]["code"], 1);

    // A line longer than the server holds: an error with a null id.
    let huge = "y".repeat(100 << 20);
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"pad":"{huge}"}}}}"#
    ));
    let r = peer.reply();
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["code"], -32600);

    peer.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(peer.reply()["id"], 4);
    peer.finish();
}

/// A revision of thousands of suffixes is refused as a revision error, through the command
/// line and over MCP, and the server keeps serving (it used to overflow the stack).
#[test]
fn deep_revisions_are_refused_not_walked() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (code, _) = cli(&store, &["remember", "x", "-p", "a.b"]);
    assert_eq!(code, 0);
    let deep = format!("HEAD{}", "~".repeat(20_000));
    let (code, v) = cli(&store, &["get", "a.b", "--at", &deep]);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("too many suffixes"),
        "{v}"
    );
    let (code, _) = cli(&store, &["log", &format!("{deep}..HEAD")]);
    assert_eq!(code, 1);

    let s = Server::start(&store, &[]);
    let e = s.err(
        "memoir_get",
        json!({"keys": ["a.b"], "at": format!("HEAD{}", "~".repeat(6_000))}),
    );
    assert_eq!(e["code"], 1);
    let e = s.err(
        "memoir_diff",
        json!({"from": format!("HEAD{}", "^".repeat(6_000))}),
    );
    assert_eq!(e["code"], 1);
    let g = s.ok("memoir_get", json!({"keys": ["a.b"]}));
    assert_eq!(g["items"][0]["found"], true);
}

/// A recall does not hold the store's LOCK while the model thinks: a CLI write made while a
/// (slow) command model answers a `memoir_recall` goes through at once.
#[test]
fn a_cli_write_proceeds_while_the_model_of_a_recall_thinks() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (code, out) = cli(
        &store,
        &["remember", "PostgreSQL 16", "-p", "infra.database"],
    );
    assert_eq!(code, 0, "{out}");
    let (command, asked) = slow_model(dir.path(), "default:infra.database");
    let s = Server::start_env(&store, &[], &[("MEMOIR_LLM_COMMAND", command.as_str())]);
    let writer = remember_once_asked(&store, asked, "written while the model thinks", "cli.note");
    let r = s.ok("memoir_recall", json!({"query": "which database?"}));
    let recalled = Instant::now();
    wrote_before(writer, recalled);
    assert_eq!(r["metadata"]["mode"], "single", "{r}");
    assert_eq!(r["memories"][0]["path"], "infra.database");
    let g = s.ok("memoir_get", json!({"keys": ["cli.note"]}));
    assert_eq!(
        g["items"][0]["value"]["content"],
        "written while the model thinks"
    );
}

/// Over stdio, every id JSON-RPC 2.0 allows comes back as the host sent it: a fraction, a
/// number past 64 bits, or `1.0` inside a batch (which then completes as one array).
#[test]
fn every_number_the_protocol_allows_is_an_id() {
    let dir = tempfile::tempdir().unwrap();
    // 2025-03-26 is the version whose transports carry batches.
    let mut peer = StdioPeer::start(&new_store(dir.path()), "2025-03-26");
    for id in [
        "1.5",
        "18446744073709551616",
        "9223372036854775808",
        "-0.25",
    ] {
        peer.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let line = peer.line();
        assert!(line.contains(&format!(r#""id":{id}"#)), "{id}: {line}");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["result"], json!({}), "{id}: {line}");
    }

    peer.send(
        r#"[{"jsonrpc":"2.0","id":1.0,"method":"ping"},{"jsonrpc":"2.0","id":"x","method":"ping"}]"#,
    );
    let line = peer.line();
    let batch: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(batch.as_array().map(Vec::len), Some(2), "{line}");
    assert!(
        line.contains(r#""id":1.0"#) && line.contains(r#""id":"x""#),
        "{line}"
    );

    peer.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert!(peer.line().contains(r#""id":4"#));
    peer.finish();
}
