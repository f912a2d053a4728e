//! `memoir mcp --http` run for real: the binary listens on a free loopback port and is spoken
//! to with rmcp's streamable HTTP client. Nothing here leaves 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value};

use crate::common::{cli, memoir, new_store, sorted, Session};

/// A running `memoir mcp --http` child, the URL it reported, and its stderr so far.
struct Listening {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Listening {
    /// Starts the server on `addr` and waits for its "listening on" line.
    fn start(store: &Path, addr: &str) -> Listening {
        let mut child = memoir()
            .arg("mcp")
            .arg("--store")
            .arg(store)
            .arg("--http")
            .arg(addr)
            .spawn()
            .expect("spawn memoir mcp --http");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().expect("stderr is piped");
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("memoir mcp: listening on ") {
                    let _ = tx.send(url.to_string());
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "no listening line on stderr: {}",
                    stderr.lock().unwrap().as_str()
                );
            }
        };
        Listening { child, url, stderr }
    }

    /// The `host:port` the server listens on.
    fn authority(&self) -> &str {
        let rest = self.url.strip_prefix("http://").expect("http URL");
        rest.strip_suffix("/mcp").expect("URL ends in /mcp")
    }

    /// Sends SIGTERM and waits for the exit (at most 10 s).
    fn terminate(&mut self) -> ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: `pid` is our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A server and an rmcp client connected to it over streamable HTTP.
struct Server {
    session: Session,
    process: Listening,
}

impl Server {
    fn start(store: &Path) -> Server {
        let process = Listening::start(store, "127.0.0.1:0");
        let url = process.url.clone();
        let session = Session::connect(async move {
            // Never through a proxy from the environment: the server is on this machine.
            let http = {
                // The crate's S3 client builds reqwest with rustls and no default provider.
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::builder().no_proxy().build().unwrap()
            };
            let transport = StreamableHttpClientTransport::with_client(
                http,
                StreamableHttpClientTransportConfig::with_uri(url),
            );
            ().serve(transport).await.expect("MCP handshake over HTTP")
        });
        Server { session, process }
    }

    /// Closes the client session, then stops the server with SIGTERM.
    fn stop(mut self) -> ExitStatus {
        self.session.close();
        self.process.terminate()
    }
}

impl std::ops::Deref for Server {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

/// A raw client's `initialize`.
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// A raw HTTP/1.1 POST of `body` to `path`, with `extra` header lines (each ending `\r\n`).
fn post_request(host: &str, path: &str, extra: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// One raw HTTP/1.1 request to the server; returns the status code and the whole response.
fn raw_request(authority: &str, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
    (code, text)
}

#[test]
fn http_tool_list_matches_the_stdio_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store);
    assert!(
        s.process.url.starts_with("http://127.0.0.1:") && s.process.url.ends_with("/mcp"),
        "{}",
        s.process.url
    );
    assert!(
        !s.process.url.starts_with("http://127.0.0.1:0/"),
        "the real port is reported"
    );
    let tools = s.rt.block_on(s.client().list_all_tools()).unwrap();
    let got = serde_json::to_string_pretty(&sorted(serde_json::to_value(&tools).unwrap())).unwrap()
        + "\n";
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mcp_tools.json");
    let want = std::fs::read_to_string(&golden).unwrap();
    assert!(
        got == want,
        "the tool list over HTTP differs from {}:\n{got}",
        golden.display()
    );
}

#[test]
fn http_round_trips_and_shares_the_store_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = Server::start(&store);

    let r = s.ok(
        "memoir_remember",
        json!({"content": "prefers pytest over unittest", "path": "preferences.coding.testing"}),
    );
    assert_eq!(r["full_key"], "default:preferences.coding.testing");
    assert!(r["commit_hash"].is_string());
    s.ok(
        "memoir_remember",
        json!({"content": "uses postgres 16", "path": "infra.database", "namespace": "work"}),
    );
    let g = s.ok(
        "memoir_get",
        json!({"keys": ["preferences.coding.testing", "work:infra.database", "nope.x"]}),
    );
    assert_eq!(g["found_count"], 2);
    assert_eq!(
        g["items"][0]["value"]["content"],
        "prefers pytest over unittest"
    );
    assert_eq!(g["items"][1]["value"]["content"], "uses postgres 16");
    assert_eq!(g["items"][2]["found"], false);
    let sm = s.ok("memoir_summarize", json!({"depth": 1}));
    assert_eq!(sm["total_memories"], 2);
    assert_eq!(sm["prefix_counts"]["work"]["infra"], 1);
    // A failing call carries the CLI's code, as over stdio.
    let e = s.err("memoir_get", json!({"keys": ["nope.x"]}));
    assert_eq!(e["code"], 2);

    // The server lets go of the store between requests: a CLI write gets through quickly,
    // and the server's next read sees it.
    let t = Instant::now();
    let (code, out) = cli(
        &store,
        &[
            "--lock-timeout",
            "5",
            "remember",
            "from the cli",
            "-p",
            "shared.note",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let g = s.ok("memoir_get", json!({"keys": ["shared.note"]}));
    assert_eq!(g["items"][0]["value"]["content"], "from the cli");
    let (code, out) = cli(&store, &["get", "preferences.coding.testing"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out["items"][0]["value"]["content"],
        "prefers pytest over unittest"
    );

    // SIGTERM stops the server cleanly and leaves the store free at once.
    let status = s.stop();
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM");
    let (code, out) = cli(&store, &["--lock-timeout", "0", "log"]);
    assert_eq!(code, 0, "{out}");
    // The store's first commit and the three writes.
    assert_eq!(out["commits"].as_array().unwrap().len(), 4);
}

#[test]
fn only_the_mcp_path_and_local_origins_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let mut server = Listening::start(&store, "127.0.0.1:0");
    let host = server.authority().to_string();
    let post = |path: &str, extra: &str| post_request(&host, path, extra, INIT);
    let (code, text) = raw_request(&host, &post("/elsewhere", ""));
    assert_eq!(code, 404, "{text}");
    let (code, text) = raw_request(&host, &post("/mcp", "Origin: https://evil.example\r\n"));
    assert_eq!(code, 403, "a foreign web page is refused: {text}");
    let (code, text) = raw_request(&host, &post("/mcp", "Origin: http://localhost:3000\r\n"));
    assert_eq!(code, 200, "a local page is served: {text}");
    assert!(text.contains("\"serverInfo\""), "{text}");
    // DNS rebinding: a name that is not a loopback host in the Host header is refused.
    let rebound = post("/mcp", "").replace(&format!("Host: {host}"), "Host: evil.example");
    let (code, text) = raw_request(&host, &rebound);
    assert_eq!(code, 403, "{text}");
    assert_eq!(server.terminate().code(), Some(0));
    assert!(
        !server.stderr.lock().unwrap().contains("error"),
        "{}",
        server.stderr.lock().unwrap()
    );
}

#[test]
fn localhost_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let mut server = Listening::start(&store, "localhost:0");
    let ip = server.authority().rsplit_once(':').unwrap().0;
    assert!(ip == "127.0.0.1" || ip == "[::1]", "{}", server.url);
    assert_eq!(server.terminate().code(), Some(0));
}

#[test]
fn non_loopback_addresses_are_refused_before_anything_listens() {
    let dir = tempfile::tempdir().unwrap();
    // A port that was free a moment ago: after the refusal nothing listens on it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let any = format!("0.0.0.0:{port}");
    for addr in [any.as_str(), "192.0.2.1:1", "[::]:0", "10.1.2.3:8765"] {
        let fresh = dir.path().join("fresh");
        let t = Instant::now();
        let o = memoir()
            .arg("mcp")
            .arg("--store")
            .arg(&fresh)
            .arg("--init")
            .arg("--http")
            .arg(addr)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{addr}: {stderr}");
        assert!(stderr.contains("loopback"), "{addr}: {stderr}");
        assert!(!stderr.contains("listening"), "{addr}: {stderr}");
        assert!(o.stdout.is_empty(), "{addr}");
        assert!(!fresh.exists(), "{addr}: the store was not created");
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{addr}: exits at once"
        );
    }
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens on {port}"
    );
    // Not an address at all: the same usage error.
    let o = memoir()
        .args(["mcp", "--http", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // In JSON mode the refusal is a JSON error on stdout, like any CLI error.
    let o = memoir()
        .args(["--json", "mcp", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["success"], false);
    assert_eq!(v["code"], 2);
    assert!(v["error"].as_str().unwrap().contains("loopback"), "{v}");
}

/// Sessions are bounded: each `initialize` opens one, and past the cap the oldest is ended
/// (its id is then unknown, 404) while the newest still answer.
#[test]
fn sessions_are_capped_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let mut server = Listening::start(&store, "127.0.0.1:0");
    let host = server.authority().to_string();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let post = |body: &str, session: Option<&str>| {
        let extra = session.map_or(String::new(), |id| {
            format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n")
        });
        post_request(&host, "/mcp", &extra, body)
    };
    let mut ids = Vec::new();
    for _ in 0..70 {
        let (code, text) = raw_request(&host, &post(INIT, None));
        assert_eq!(code, 200, "{text}");
        let id = text
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_string())
            })
            .expect("a session id");
        ids.push(id);
    }
    let notify = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    // The last 64 answer; the 6 before them were ended.
    for (i, id) in ids.iter().enumerate() {
        let (code, text) = raw_request(&host, &post(notify, Some(id)));
        if i < ids.len() - 64 {
            assert_eq!(code, 404, "session {i} was ended: {text}");
            continue;
        }
        assert!(code == 202 || code == 200, "session {i}: {text}");
        let (code, text) = raw_request(&host, &post(list, Some(id)));
        assert_eq!(code, 200, "session {i} answers: {text}");
    }
    assert_eq!(server.terminate().code(), Some(0));
}
