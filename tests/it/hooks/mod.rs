//! `memoir hook`, in a real git repository with HOME set to a temporary directory (repo
//! mode): the hosts' documented hook JSON in, their JSON out; memory branches following code
//! branches, `sync-branch`, `branch-match`, and the reference plugin's calls.

mod claude_code;
mod codex;
mod memory_branches;
mod plugins;
mod reference_calls;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{run_with_stdin, AUTHOR};

/// A project: HOME, a git repository with one commit on `main`, a directory for scripted
/// programs, and the hook log.
pub struct Project {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub repo: PathBuf,
    pub bin: PathBuf,
    pub log: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, repo, bin) = (root.join("home"), root.join("app"), root.join("bin"));
        for d in [&home, &repo, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        let p = Project {
            log: home.join("hooks.log"),
            _dir: dir,
            home,
            repo,
            bin,
        };
        p.git(&["init", "-q", "-b", "main"]);
        p.git(&["commit", "-q", "--allow-empty", "-m", "start"]);
        p
    }

    /// Runs git in the repository (panics when it fails).
    pub fn git(&self, args: &[&str]) -> String {
        let o = Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.org"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The store repo mode gives this project: HOME/.memoir/<slug>.
    pub fn store(&self) -> PathBuf {
        let slug: String = self
            .repo
            .to_string_lossy()
            .chars()
            .map(|c| if c == '/' || c == '.' { '-' } else { c })
            .collect();
        self.home.join(".memoir").join(slug)
    }

    /// memoir run in the repository as a host runs it: a clean environment with HOME,
    /// PATH (the scripted programs first), the test clock and author, and the hook log.
    pub fn memoir(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.env_clear()
            .current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("MEMOIR_NOW", "1767225600")
            .env("MEMOIR_AUTHOR", AUTHOR)
            .env("MEMOIR_HOOK_LOG", &self.log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// `memoir hook HOST EVENT` with `input` on stdin.
    pub fn hook(&self, host: &str, event: &str, input: &Value) -> Output {
        self.hook_with(host, event, input, &[])
    }

    /// [`Project::hook`] with more environment.
    pub fn hook_with(
        &self,
        host: &str,
        event: &str,
        input: &Value,
        env: &[(&str, &str)],
    ) -> Output {
        let mut c = self.memoir();
        c.args(["hook", host, event]).envs(env.iter().copied());
        run_with_stdin(&mut c, input.to_string().as_bytes())
    }

    /// `memoir --json ARGS` in the repository (repo mode): exit code and JSON.
    pub fn cli(&self, args: &[&str]) -> (i32, Value) {
        let o = self.memoir().arg("--json").args(args).output().unwrap();
        let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: not JSON ({e}): {} / {}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        (o.status.code().unwrap_or(-1), v)
    }

    /// The hook log.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Writes a program `name` into the scripted programs' directory.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.bin.join(name);
        std::fs::write(&path, body).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path
    }

    /// The memory at `key` on `branch`, waiting up to 30 s for it to appear (a capture
    /// finishing in the background); panics with the hook log.
    pub fn wait_for(&self, key: &str, branch: &str) -> Value {
        let start = Instant::now();
        loop {
            let (_, v) = self.cli(&["get", key, "--branch", branch]);
            if v["items"][0]["found"] == true {
                return v["items"][0]["value"].clone();
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{key} never arrived on {branch}; hook log:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The hook's stdout as the host reads it: one JSON object (or nothing).
pub fn answer(o: &Output) -> Option<Value> {
    assert_eq!(
        o.status.code(),
        Some(0),
        "a hook exits 0: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    (!text.trim().is_empty())
        .then(|| serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}")))
}

/// The injected context of an answer (empty when there is none).
pub fn context(v: &Option<Value>) -> String {
    v.as_ref()
        .and_then(|v| v["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Writes a transcript of JSON Lines.
pub fn transcript(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}
