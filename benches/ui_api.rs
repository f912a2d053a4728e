//! Timings of `memoir ui`'s JSON API (release build) on a large store, as the views call it.
//!
//! Builds a store of N memories (3-level keys, 200-byte contents) with `memoir import`, adds
//! C single-memory commits through the library and a `side` branch, starts `memoir ui` on a
//! free loopback port, and times every API call the views make, R rounds of all of them in
//! turn, as HTTP round trips over one kept-alive loopback connection from this process (so
//! the figures include the server's HTTP handling, not only the operation; search and recall
//! also give the operation's own time). Then measures how long a
//! writer that opens the store waits for the LOCK right after the interface served a
//! request (what a CLI write from an agent waits), against the same open with the
//! interface idle.
//!
//! `cargo bench --bench ui_api -- [N] [C] [R]` (defaults 100000 10000 25).

mod common;
use common::{add_commits, args, binary, import_lines, path_of, run_memoir, stats};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memoir::key::Key;
use memoir::memory::{Entry, Record};
use memoir::prolly::Edit;
use memoir::repo::{Repo, Signature};
use memoir::store::{OpenOptions, Store};

/// One kept-alive HTTP/1.1 connection.
struct Http {
    stream: BufReader<TcpStream>,
    host: String,
    token: String,
}

impl Http {
    fn connect(host: &str) -> Http {
        let s = TcpStream::connect(host).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        Http {
            stream: BufReader::new(s),
            host: host.to_string(),
            token: String::new(),
        }
    }

    /// Sends a request and reads the answer: status and body.
    fn call(&mut self, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if method == "POST" {
            req.push_str(&format!(
                "Content-Type: application/json\r\nX-Memoir-Token: {}\r\n",
                self.token
            ));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream
            .get_mut()
            .write_all(req.as_bytes())
            .expect("send");
        let mut line = String::new();
        self.stream.read_line(&mut line).expect("status line");
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .expect("status");
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            self.stream.read_line(&mut h).expect("header");
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().expect("length");
                }
            }
        }
        let mut buf = vec![0; len];
        self.stream.read_exact(&mut buf).expect("body");
        (status, String::from_utf8(buf).expect("UTF-8"))
    }
}

fn main() {
    let args: Vec<usize> = args().iter().map(|a| a.parse().expect("number")).collect();
    let n = args.first().copied().unwrap_or(100_000);
    let commits = args.get(1).copied().unwrap_or(10_000);
    let reps = args.get(2).copied().unwrap_or(25);
    let bin = binary();
    let dir = std::env::temp_dir().join(format!("memoir-ui-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = dir.join("big");
    run_memoir(&bin, &store, &["new", store.to_str().expect("utf-8")]);
    let file = dir.join("big.jsonl");
    let text = import_lines(n);
    std::fs::write(&file, text).expect("write jsonl");
    run_memoir(&bin, &store, &["import", file.to_str().expect("utf-8")]);
    {
        let repo =
            Repo::open(Store::open(&store, &OpenOptions::default()).expect("open")).expect("repo");
        let t = Instant::now();
        // A side branch from 20 commits before the end.
        let fork = commits.saturating_sub(20) + 1;
        add_commits(&repo, n, 0..fork);
        repo.create_branch("side", &repo.head_commit().expect("head"))
            .expect("branch");
        add_commits(&repo, n, fork..commits);
        // The side branch changes a key main changed too: a conflict to preview.
        let i = ((commits - 1) * 7919) % n.max(1);
        let key = Key::new("default", &path_of(i)).expect("key");
        let rec = Record::new(&key, Entry::new("changed on side", 1.0, 0.0), vec![]);
        let v = repo
            .objects()
            .write(&rec.to_blob().expect("record"))
            .expect("write");
        let sig = Signature::new("bench", 1_767_300_000);
        repo.commit(
            "side",
            vec![Edit::Put(key.encode(), v)],
            &sig,
            "side change",
        )
        .expect("commit");
        println!(
            "(setup: {n} memories, {commits} commits in {:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }

    let mut child = Command::new(&bin)
        .args(["ui", "--addr", "127.0.0.1:0", "--store"])
        .arg(&store)
        .env("MEMOIR_AUTHOR", "bench <bench@example.org>")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start memoir ui");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let host = loop {
        let line = lines.next().expect("a listening line").expect("stderr");
        if let Some(url) = line.strip_prefix("memoir ui: listening on http://") {
            break url.trim_end_matches('/').to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let mut http = Http::connect(&host);
    let (_, page) = http.call("GET", "/", "");
    let marker = "<meta name=\"memoir-token\" content=\"";
    let at = page.find(marker).expect("token") + marker.len();
    http.token = page[at..at + 64].to_string();

    let hot = path_of(((commits - 1) * 7919) % n.max(1));
    let (_, log) = http.call("GET", "/api/log?limit=2", "");
    let log: serde_json::Value = serde_json::from_str(&log).expect("json");
    let head = log["commits"][0]["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let parent = log["commits"][1]["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let old = format!("HEAD~{}", commits / 2);
    // What the time slider sends: a commit id (a typed `HEAD~N` walks N parents first).
    let (_, past) = http.call("GET", &format!("/api/log?rev={old}&limit=1"), "");
    let past: serde_json::Value = serde_json::from_str(&past).expect("json");
    let past = past["commits"][0]["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    // The import commit (100,000 changes against the first commit) and its parent.
    let (_, import) = http.call("GET", &format!("/api/log?rev=HEAD~{commits}&limit=2"), "");
    let import: serde_json::Value = serde_json::from_str(&import).expect("json");
    let import_id = import["commits"][0]["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let first_id = import["commits"][1]["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let calls: Vec<(&str, &str, String, String)> = vec![
        (
            "tree: first level",
            "GET",
            "/api/tree".into(),
            String::new(),
        ),
        (
            "tree: branch picker",
            "GET",
            "/api/branches".into(),
            String::new(),
        ),
        (
            "tree: time slider log (300)",
            "GET",
            "/api/log?rev=HEAD&limit=300".into(),
            String::new(),
        ),
        (
            "tree: open topic01",
            "GET",
            "/api/tree?prefix=topic01".into(),
            String::new(),
        ),
        (
            "tree: open topic01.area02 (leaves)",
            "GET",
            "/api/tree?prefix=topic01.area02".into(),
            String::new(),
        ),
        (
            "tree: first level, previews",
            "GET",
            "/api/tree?previews=1".into(),
            String::new(),
        ),
        (
            "tree: topic01.area02, previews",
            "GET",
            "/api/tree?prefix=topic01.area02&previews=1".into(),
            String::new(),
        ),
        (
            "tree: topic01.area02 from offset 100",
            "GET",
            "/api/tree?prefix=topic01.area02&offset=100&limit=100&previews=1".into(),
            String::new(),
        ),
        (
            "tree: glob filter topic01.*",
            "GET",
            "/api/tree?keys=topic01.*".into(),
            String::new(),
        ),
        (
            "tree: at HEAD~half",
            "GET",
            format!("/api/tree?at={old}"),
            String::new(),
        ),
        (
            "tree: at a commit id half-way (slider)",
            "GET",
            format!("/api/tree?at={past}"),
            String::new(),
        ),
        (
            "memory: get",
            "GET",
            format!("/api/memory?key={hot}"),
            String::new(),
        ),
        (
            "memory: blame with lines",
            "GET",
            format!("/api/blame?key={hot}&lines=1"),
            String::new(),
        ),
        (
            "memory: get at HEAD~half",
            "GET",
            format!("/api/memory?key={hot}&at={old}"),
            String::new(),
        ),
        (
            "memory: get at a commit id half-way",
            "GET",
            format!("/api/memory?key={hot}&at={past}"),
            String::new(),
        ),
        (
            "memory: blame at a commit id half-way",
            "GET",
            format!("/api/blame?key={hot}&lines=1&at={past}"),
            String::new(),
        ),
        (
            "history: log 200",
            "GET",
            "/api/log?rev=HEAD&limit=200".into(),
            String::new(),
        ),
        (
            "history: log 200 --keys topic01.*",
            "GET",
            "/api/log?rev=HEAD&keys=topic01.*&limit=200".into(),
            String::new(),
        ),
        (
            "history: every branch (200)",
            "GET",
            "/api/history?all=1&limit=200".into(),
            String::new(),
        ),
        (
            "history: by an agent with no commits",
            "GET",
            "/api/history?all=1&actor=nobody&limit=200".into(),
            String::new(),
        ),
        (
            "history: since a date",
            "GET",
            "/api/history?all=1&since=2026-01-01T01:00:00&limit=200".into(),
            String::new(),
        ),
        ("agents", "GET", "/api/agents".into(), String::new()),
        (
            "commit: changes page (import, 100 of N)",
            "GET",
            format!("/api/changes?from={first_id}&to={import_id}&limit=100"),
            String::new(),
        ),
        (
            "commit: change counts (import)",
            "GET",
            format!("/api/change-counts?from={first_id}&to={import_id}"),
            String::new(),
        ),
        (
            "commit: changes page (head)",
            "GET",
            format!("/api/changes?from={parent}&to={head}&limit=100"),
            String::new(),
        ),
        (
            "commit: change counts (head)",
            "GET",
            format!("/api/change-counts?from={parent}&to={head}"),
            String::new(),
        ),
        (
            "commit: one patch on demand",
            "GET",
            format!("/api/change?from={parent}&to={head}&key={hot}"),
            String::new(),
        ),
        (
            "compare: side from the merge base",
            "GET",
            "/api/changes?from=main&to=side&base=1".into(),
            String::new(),
        ),
        (
            "compare: counts from the merge base",
            "GET",
            "/api/change-counts?from=main&to=side&base=1".into(),
            String::new(),
        ),
        (
            "search: 2 words by an agent",
            "GET",
            "/api/search?q=memory+4242&limit=50&actor=nobody".into(),
            String::new(),
        ),
        (
            "search: 2 words by an agent that wrote",
            "GET",
            "/api/search?q=memory+4242&limit=50&actor=agent-1".into(),
            String::new(),
        ),
        (
            "commit: log of one",
            "GET",
            format!("/api/log?rev={head}&limit=1"),
            String::new(),
        ),
        (
            "commit: diff with patch",
            "GET",
            format!("/api/diff?from={parent}&to={head}&stat=1&patch=1"),
            String::new(),
        ),
        (
            "compare: HEAD~10..HEAD with patch",
            "GET",
            "/api/diff?from=HEAD~10&to=HEAD&stat=1&patch=1".into(),
            String::new(),
        ),
        (
            "branches: merge preview",
            "GET",
            "/api/merge-preview?source=side".into(),
            String::new(),
        ),
        (
            "search: 2 words",
            "GET",
            "/api/search?q=memory+4242&limit=50".into(),
            String::new(),
        ),
        (
            "search: a selective word",
            "GET",
            "/api/search?q=item004242&limit=50".into(),
            String::new(),
        ),
        (
            "recall: lexical",
            "POST",
            "/api/recall".into(),
            r#"{"query":"memory 4242","mode":"lexical","limit":20}"#.into(),
        ),
        ("statistics", "GET", "/api/stats".into(), String::new()),
        (
            "actions: completion (topic01.)",
            "GET",
            "/api/tree?prefix=topic01&limit=200".into(),
            String::new(),
        ),
        (
            "actions: proof",
            "GET",
            format!("/api/proof?key={hot}"),
            String::new(),
        ),
        (
            "graph: a memory, depth 2",
            "GET",
            format!("/api/graph?key={hot}&depth=2&limit=400"),
            String::new(),
        ),
        (
            "graph: a prefix, depth 2",
            "GET",
            "/api/graph?key=topic01.area02&depth=2&limit=400".into(),
            String::new(),
        ),
        (
            "graph: a memory, depth 2, at HEAD~half",
            "GET",
            format!("/api/graph?key={hot}&depth=2&limit=400&at={past}"),
            String::new(),
        ),
        ("timeline", "GET", "/api/timeline".into(), String::new()),
        ("watch", "GET", "/api/watch".into(), String::new()),
    ];
    println!(
        "{:<40} {:>10} {:>10} {:>12}   (HTTP round trip over a kept-alive loopback connection; \
         operation: the outcome's timing_ms, where it has one)",
        "call", "median", "p95", "operation"
    );
    for (label, method, path, body) in &calls {
        let (code, text) = http.call(method, path, body);
        assert_eq!(code, 200, "{path}: {text}");
        let first: serde_json::Value = serde_json::from_str(&text).expect("json");
        if let Some(notes) = first["notes"].as_array().filter(|n| !n.is_empty()) {
            println!("  ({label}, first call: {notes:?})");
        }
        if let Some(ms) = first["timing_ms"].as_f64() {
            println!("  ({label}, first call: {ms} ms in the operation)");
        }
    }
    // Rounds of every call in turn, so that a slow spell of the machine spreads over all
    // calls rather than landing on the repetitions of one.
    let mut times = vec![Vec::new(); calls.len()];
    let mut operation = vec![Vec::new(); calls.len()];
    for _ in 0..reps {
        for (i, (_, method, path, body)) in calls.iter().enumerate() {
            let t = Instant::now();
            let (code, text) = http.call(method, path, body);
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(code, 200);
            let v: serde_json::Value = serde_json::from_str(&text).expect("json");
            if let Some(ms) = v["timing_ms"].as_f64() {
                operation[i].push(ms);
            }
        }
    }
    for (i, (label, ..)) in calls.iter().enumerate() {
        let (med, p95) = stats(times[i].clone());
        let op = if operation[i].is_empty() {
            String::new()
        } else {
            format!("{:>9.2} ms", stats(operation[i].clone()).0)
        };
        println!("{label:<40} {med:>7.2} ms {p95:>7.2} ms {op}");
    }
    let writes: Vec<f64> = (0..reps)
        .map(|r| {
            let body = format!(r#"{{"content":"from the page","paths":["bench.ui.r{r}"]}}"#);
            let t = Instant::now();
            let (code, text) = http.call("POST", "/api/remember", &body);
            assert_eq!(code, 200, "{text}");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let (med, p95) = stats(writes);
    println!(
        "{:<40} {med:>7.2} ms {p95:>7.2} ms",
        "actions: remember (durable)"
    );

    // A writer's wait for the LOCK: opening the store right after the interface served a
    // request (it holds the store then), against opening it with the interface idle.
    let open = || {
        let t = Instant::now();
        let s = Store::open(&store, &OpenOptions::default()).expect("open while the ui runs");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        drop(s);
        ms
    };
    let busy: Vec<f64> = (0..reps)
        .map(|_| {
            http.call("GET", "/api/tree", "");
            open()
        })
        .collect();
    let idle: Vec<f64> = (0..reps)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(150));
            open()
        })
        .collect();
    let (bm, bp) = stats(busy.clone());
    let (im, ip) = stats(idle);
    let worst = busy.iter().copied().fold(0.0, f64::max);
    println!(
        "{:<40} {bm:>7.2} ms {bp:>7.2} ms   (max {worst:.2} ms)",
        "store open right after a ui request"
    );
    println!(
        "{:<40} {im:>7.2} ms {ip:>7.2} ms",
        "store open with the ui idle"
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
