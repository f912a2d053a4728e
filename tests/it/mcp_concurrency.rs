//! A running `memoir mcp` server beside CLI writers in other processes: the server keeps the
//! store open while its calls keep coming and must still let the CLI through (no busy error
//! within a generous `--lock-timeout`), and nobody's write may be lost.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{new_store, Session, AUTHOR};

/// How long every process may wait for the store's lock.
const LOCK_TIMEOUT: &str = "30";
/// CLI writer processes running at once.
const WRITERS: usize = 4;
/// `memoir remember` calls of each writer.
const WRITES_EACH: usize = 4;
/// Fewest memoir_remember calls of the server; it goes on calling (back to back, never idle)
/// until every CLI writer is done, so the CLI writes all land while the server is busy.
const SERVER_WRITES: usize = 40;
/// How long the server's stream may wait for the CLI writers.
const STREAM_LIMIT: Duration = Duration::from_secs(25);

fn memoir(store: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_AUTHOR", AUTHOR)
        .arg("-s")
        .arg(store)
        .arg("--lock-timeout")
        .arg(LOCK_TIMEOUT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn json_of(args: &[&str], o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of {args:?} is not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Runs the CLI with `--json` and requires success.
fn cli_ok(store: &Path, args: &[&str]) -> Value {
    let o = memoir(store).arg("--json").args(args).output().unwrap();
    let v = json_of(args, &o);
    assert!(o.status.success(), "memoir {args:?}: {v}");
    v
}

fn commit_count(store: &Path) -> usize {
    cli_ok(store, &["log", "-n", "100000"])["commits"]
        .as_array()
        .expect("commits")
        .len()
}

/// A `memoir mcp` child on stdio and an rmcp client.
fn start_server(store: &Path) -> Session {
    Session::stdio(store, &["-q", "--lock-timeout", LOCK_TIMEOUT], &[], &[])
}

fn cli_content(writer: usize, n: usize) -> String {
    format!("note {n} of writer {writer}")
}

fn server_content(n: usize) -> String {
    format!("server note {n}")
}

#[test]
fn server_and_cli_writers_share_the_store_without_losing_anything() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let before = commit_count(&store);
    let server = start_server(&store);

    // All writers start together with the server's stream of calls.
    let barrier = Arc::new(Barrier::new(WRITERS + 1));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut slowest = Duration::ZERO;
                let mut done = Vec::new();
                for n in 0..WRITES_EACH {
                    let key = format!("cli{w}.n{n}");
                    let content = cli_content(w, n);
                    let args = ["remember", content.as_str(), "-p", key.as_str()];
                    let t = Instant::now();
                    let o = memoir(&store).arg("--json").args(args).output().unwrap();
                    slowest = slowest.max(t.elapsed());
                    let v = json_of(&args, &o);
                    assert_eq!(
                        o.status.code(),
                        Some(0),
                        "writer {w}, write {n} failed (after {:?}): {v}",
                        t.elapsed()
                    );
                    assert_eq!(v["full_key"], format!("default:{key}"));
                    done.push(Instant::now());
                }
                (slowest, done)
            })
        })
        .collect();

    barrier.wait();
    let stream_start = Instant::now();
    let mut server_writes = 0;
    let mut calls = 0usize;
    while server_writes < SERVER_WRITES || !writers.iter().all(|w| w.is_finished()) {
        assert!(
            stream_start.elapsed() < STREAM_LIMIT,
            "the CLI writers were not done after {STREAM_LIMIT:?} beside a busy server"
        );
        calls += 1;
        // Mostly reads, as an agent does: one write in every five calls.
        if calls % 5 == 1 {
            let n = server_writes;
            let key = format!("srv.n{n}");
            let r = server.ok(
                "memoir_remember",
                json!({"content": server_content(n), "path": key}),
            );
            assert_eq!(r["full_key"], format!("default:{key}"));
            server_writes += 1;
        } else if calls.is_multiple_of(10) {
            let s = server.ok("memoir_summarize", json!({"depth": 1}));
            assert_eq!(
                s["prefix_counts"]["default"]["srv"].as_u64(),
                Some(server_writes as u64),
                "the server's own writes are all counted: {s}"
            );
        } else {
            let n = server_writes - 1;
            let g = server.ok("memoir_get", json!({"keys": [format!("srv.n{n}")]}));
            assert_eq!(g["items"][0]["value"]["content"], server_content(n));
        }
    }
    let stream_end = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut during = 0;
    for w in writers {
        let (slow, done) = w.join().expect("a CLI writer failed");
        slowest = slowest.max(slow);
        during += done
            .iter()
            .filter(|t| **t > stream_start && **t < stream_end)
            .count();
    }
    println!(
        "{} CLI writes ({during} while the server's stream ran, {:?}) beside {calls} \
         server calls ({server_writes} writes); slowest CLI write {slowest:?}",
        WRITERS * WRITES_EACH,
        stream_end - stream_start
    );
    // The CLI got through while the server was busy, not only after it.
    assert_eq!(
        during,
        WRITERS * WRITES_EACH,
        "every CLI write landed while the server was busy"
    );

    // Every write is one commit, none lost, none doubled.
    let writes = WRITERS * WRITES_EACH + server_writes;
    assert_eq!(commit_count(&store) - before, writes);

    // Every key reads back with its exact content, from the CLI and from the server.
    let mut keys = Vec::new();
    let mut want = Vec::new();
    for w in 0..WRITERS {
        for n in 0..WRITES_EACH {
            keys.push(format!("cli{w}.n{n}"));
            want.push(cli_content(w, n));
        }
    }
    for n in 0..server_writes {
        keys.push(format!("srv.n{n}"));
        want.push(server_content(n));
    }
    let mut args = vec!["get"];
    args.extend(keys.iter().map(String::as_str));
    let from_cli = cli_ok(&store, &args);
    let from_server = server.ok("memoir_get", json!({ "keys": keys }));
    for got in [&from_cli, &from_server] {
        assert_eq!(got["found_count"], writes, "{got}");
        for (i, content) in want.iter().enumerate() {
            assert_eq!(got["items"][i]["value"]["content"], *content, "{}", keys[i]);
        }
    }
    let s = server.ok("memoir_summarize", json!({"depth": 1}));
    assert_eq!(s["total_memories"], writes);

    let fsck = cli_ok(&store, &["fsck"]);
    assert_eq!(fsck["clean"], true, "{fsck}");

    // A CLI write while the server is idle gets through at once and the server's next read
    // sees it.
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    cli_ok(
        &store,
        &["remember", "written while idle", "-p", "late.note"],
    );
    let idle_write = t.elapsed();
    assert!(
        idle_write < Duration::from_secs(5),
        "an idle server still held the store: {idle_write:?}"
    );
    let g = server.ok("memoir_get", json!({"keys": ["late.note"]}));
    assert_eq!(g["items"][0]["value"]["content"], "written while idle");
    println!("whole test took {:?}", started.elapsed());
}
