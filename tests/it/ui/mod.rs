//! `memoir ui` run for real: the binary serves a seeded store on a free loopback port; the
//! tests speak HTTP to it (the API, its security checks) and drive it with a real browser.

mod api;
mod browser;
mod browser_views;
mod graph_views;
mod security;
mod supervise;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{cli_with, memoir};

/// A running `memoir ui`, its address and launch token, and its stderr so far.
pub struct Ui {
    child: Child,
    /// `host:port`.
    pub authority: String,
    /// `http://host:port`.
    pub base: String,
    /// The launch token, read from the served page.
    pub token: String,
    stderr: Arc<Mutex<String>>,
}

impl Ui {
    /// Starts `memoir ui` on `store` (a free port) with `env`, and reads its token.
    pub fn start(store: &Path, env: &[(&str, &str)]) -> Ui {
        let mut child = memoir()
            .envs(env.iter().copied())
            .args(["ui", "--addr", "127.0.0.1:0", "--store"])
            .arg(store)
            .spawn()
            .expect("spawn memoir ui");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().expect("stderr is piped");
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("memoir ui: listening on ") {
                    let _ = tx.send(url.to_string());
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no listening line: {}", stderr.lock().unwrap());
        };
        let authority = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix('/'))
            .expect("http://host:port/")
            .to_string();
        let mut ui = Ui {
            child,
            base: format!("http://{authority}"),
            authority,
            token: String::new(),
            stderr,
        };
        let (code, page) = ui.raw("GET", "/", &[], "");
        assert_eq!(code, 200, "{page}");
        let marker = "<meta name=\"memoir-token\" content=\"";
        let start = page.find(marker).expect("the page carries the token") + marker.len();
        ui.token = page[start..start + 64].to_string();
        ui
    }

    /// One request over a fresh connection: status and body. `headers` are added to `Host`
    /// (replaced when `headers` names one), `Content-Length` and `Connection: close`.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut req = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: {}\r\n", self.authority));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ));
        let mut s = TcpStream::connect(&self.authority).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        let text = String::from_utf8(out).expect("UTF-8 answer");
        let status: u16 = text
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line: {text}"));
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, body.to_string())
    }

    /// A GET of the API: status and JSON.
    pub fn get(&self, path: &str) -> (u16, Value) {
        let (code, body) = self.raw("GET", path, &[], "");
        (code, json(&body))
    }

    /// A POST of the API as the page makes it (token, the page's origin): status and JSON.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (code, text) = self.raw(
            "POST",
            path,
            &[
                ("Content-Type", "application/json"),
                ("Origin", &self.base),
                ("X-Memoir-Token", &self.token),
            ],
            &body.to_string(),
        );
        (code, json(&text))
    }

    /// What the server printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits for the exit code (at most 10 s).
    pub fn stop(&mut self) -> Option<i32> {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: `pid` is our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Parses JSON (panics with the text when it is not).
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

pub use crate::common::cli_at;

/// The first of the seeded store's times.
pub const T0: i64 = 1_767_225_600;

/// A store with a small history: preferences and projects written over six commits (one
/// key rewritten), a `side` branch whose change to `preferences.editor` conflicts with
/// main's, and a second namespace.
pub fn seeded(dir: &Path) -> std::path::PathBuf {
    let store = dir.join("store");
    let o = memoir()
        .env("MEMOIR_NOW", T0.to_string())
        .arg("new")
        .arg(&store)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let steps: [&[&str]; 8] = [
        &[
            "remember",
            "prefers pytest for tests",
            "-p",
            "preferences.coding.testing",
        ],
        &[
            "remember",
            "uses vim",
            "-p",
            "preferences.editor",
            "--replace",
        ],
        &[
            "remember",
            "memoir is a Rust project",
            "-p",
            "projects.memoir.language",
        ],
        &[
            "remember",
            "likes small commits",
            "-p",
            "preferences.coding.commits",
        ],
        &[
            "remember",
            "uses helix now\nwith the default keymap",
            "-p",
            "preferences.editor",
            "--replace",
        ],
        &["branch", "side", "--from", "HEAD~1"],
        &[
            "remember",
            "uses emacs",
            "-p",
            "preferences.editor",
            "--replace",
            "--branch",
            "side",
        ],
        &[
            "remember",
            "a note elsewhere",
            "-p",
            "notes.first",
            "-n",
            "work",
        ],
    ];
    for (i, args) in steps.iter().enumerate() {
        let (code, out) = cli_at(&store, T0 + 3600 * (i as i64 + 1), args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    store
}

/// Runs the CLI with `--json` and the given global options.
pub fn cli_global(store: &Path, global: &[&str], args: &[&str]) -> (i32, Value) {
    cli_with(store, global, args)
}
