//! Push and fetch against a real S3-compatible server on loopback (release build).
//!
//! Builds a store of N memories (3-level keys, 200-byte contents) with `memoir import`,
//! starts `moto_server` from the project's virtual environment (`.venv`, see
//! tests/python/requirements.txt) with a bucket, and times:
//! - the initial `push` of the whole store, and a `clone` of it;
//! - R rounds of: 10 single-key `remember` commits, then an incremental `push` (objects and
//!   bytes sent, wall time), then a `fetch` of it into the clone.
//!
//! `cargo bench --bench remote_push_fetch -- [N] [R]` (defaults 100000 9). The binary measured
//! is the one cargo built, or the one `MEMOIR_BENCH_BIN` names (to compare two builds).

mod common;
use common::{args, binary, path_of, stats};

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn content_of(i: usize) -> String {
    let mut s = format!("memory {i}: ");
    while s.len() < 200 {
        s.push_str("the agent learned something worth keeping. ");
    }
    s.truncate(200);
    s
}

/// Runs memoir with `env`; the JSON it printed and the wall time.
fn memoir(bin: &Path, env: &[(&str, String)], args: &[&str]) -> (serde_json::Value, Duration) {
    let t = Instant::now();
    let mut c = Command::new(bin);
    c.arg("--json")
        .args(args)
        .env("MEMOIR_AUTHOR", "bench <bench@example.org>")
        .env_remove("MEMOIR_STORE");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run memoir");
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "memoir {args:?} failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    (serde_json::from_slice(&out.stdout).expect("JSON"), took)
}

fn status(port: u16, method: &str, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut a = String::new();
    s.read_to_string(&mut a).ok()?;
    a.split(' ').nth(1)?.parse().ok()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<usize> = args().iter().map(|a| a.parse().expect("number")).collect();
    let n = args.first().copied().unwrap_or(100_000);
    let rounds = args.get(1).copied().unwrap_or(9);
    let bin = std::env::var_os("MEMOIR_BENCH_BIN").map_or_else(binary, std::path::PathBuf::from);
    let moto = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/moto_server");
    assert!(
        moto.exists(),
        "{} is missing: see tests/python/requirements.txt",
        moto.display()
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(&moto)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server");
    let started = Instant::now();
    while status(port, "GET", "/").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "moto_server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status(port, "PUT", "/bench"), Some(200));
    let env = [
        ("AWS_ACCESS_KEY_ID", "bench".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "bench-secret".to_string()),
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
    ];

    let dir = std::env::temp_dir().join(format!("memoir-remote-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let a = dir.join("a");
    let a_s = a.to_str().expect("utf-8");
    memoir(&bin, &[], &["new", a_s]);
    let file = dir.join("big.jsonl");
    let mut text = String::with_capacity(n * 300);
    for i in 0..n {
        text.push_str(
            &serde_json::json!({"key": path_of(i), "content": content_of(i),
                "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&file, text).expect("write jsonl");
    memoir(
        &bin,
        &[],
        &["-s", a_s, "import", file.to_str().expect("utf-8")],
    );
    memoir(
        &bin,
        &[],
        &["-s", a_s, "remote", "add", "origin", "s3://bench/memory"],
    );

    let (first, took) = memoir(&bin, &env, &["-s", a_s, "push"]);
    println!(
        "initial push of {n} memories: {:.0} ms, {} objects, {} bytes",
        ms(took),
        first["objects_sent"],
        first["bytes_sent"]
    );
    let b = dir.join("b");
    let (cloned, took) = memoir(
        &bin,
        &env,
        &["clone", "s3://bench/memory", b.to_str().unwrap()],
    );
    println!(
        "clone: {:.0} ms, {} objects, {} bytes",
        ms(took),
        cloned["fetch"]["objects_received"],
        cloned["fetch"]["bytes_received"]
    );
    let b_s = b.to_str().unwrap();
    let (mut push_ms, mut fetch_ms, mut sent, mut bytes) = (vec![], vec![], vec![], vec![]);
    for r in 0..rounds {
        for k in 0..10 {
            let key = path_of((r * 10 + k) * 7919 % n);
            memoir(
                &bin,
                &[],
                &["-s", a_s, "remember", "--replace", "-p", &key, "changed"],
            );
        }
        let (p, took) = memoir(&bin, &env, &["-s", a_s, "push"]);
        push_ms.push(ms(took));
        sent.push(p["objects_sent"].as_f64().unwrap());
        bytes.push(p["bytes_sent"].as_f64().unwrap());
        let (_, took) = memoir(&bin, &env, &["-s", b_s, "fetch"]);
        fetch_ms.push(ms(took));
    }
    let (pm, pp) = stats(push_ms);
    let (fm, fp) = stats(fetch_ms);
    println!(
        "incremental push after 10 single-key commits ({rounds} rounds): median {pm:.1} ms \
         (p95 {pp:.1}), {:.0} objects, {:.0} bytes (medians)",
        stats(sent).0,
        stats(bytes).0
    );
    println!("incremental fetch of it: median {fm:.1} ms (p95 {fp:.1})");
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
