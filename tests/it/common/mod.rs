//! Shared by the CLI and MCP tests: running the CLI and reading its output, making a store,
//! and an rmcp client session with the calls the tests make.

pub mod pdf;
mod skip;

pub use skip::{minilm_model, on_path, require, venv_program};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// The author every test process writes as.
pub const AUTHOR: &str = "Tester <t@example.org>";

/// A finished run of the binary: exit code, stdout, stderr.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Out {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8(o.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(o.stderr).expect("stderr is UTF-8"),
        }
    }
}

impl Out {
    /// Stdout parsed as JSON (panics with both streams when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?} / {:?}",
                self.stdout, self.stderr
            )
        })
    }
}

/// The memoir binary with a clean environment, the test author and piped output.
pub fn memoir() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_AUTHOR", AUTHOR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs the CLI with `--json` on `store` (after any `global` options): exit code and JSON
/// stdout.
pub fn cli_with(store: &Path, global: &[&str], args: &[&str]) -> (i32, Value) {
    let mut c = memoir();
    c.arg("-s").arg(store).args(global).arg("--json").args(args);
    json_run(&mut c, args)
}

/// Runs the CLI with `--json` on `store` at a fixed time `now` (unix seconds): exit code and
/// JSON stdout.
pub fn cli_at(store: &Path, now: i64, args: &[&str]) -> (i32, Value) {
    let mut c = memoir();
    c.env("MEMOIR_NOW", now.to_string())
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args);
    json_run(&mut c, args)
}

/// Runs `c`, whose arguments end with `args`: exit code and stdout parsed as JSON (panics
/// with both streams when it is not).
fn json_run(c: &mut Command, args: &[&str]) -> (i32, Value) {
    let o = c.output().expect("run memoir");
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of {args:?} is not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Runs the CLI with `--json`: exit code and JSON stdout.
pub fn cli(store: &Path, args: &[&str]) -> (i32, Value) {
    cli_with(store, &[], args)
}

/// A new store at `dir/store`.
/// Runs `command` with `input` on its stdin (piped), waiting for it to exit.
pub fn run_with_stdin(command: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("start the command");
    // A command may exit without reading all its input (a hook that fails early does): the
    // pipe then breaks, which is its choice, not the test's failure.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    child.wait_with_output().unwrap()
}

pub fn new_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let o = memoir().arg("new").arg(&store).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    store
}

/// An rmcp client session with its own runtime; closed when dropped.
pub struct Session {
    pub rt: tokio::runtime::Runtime,
    client: Option<RunningService<RoleClient, ()>>,
}

impl Session {
    /// A runtime for a session.
    pub fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    /// A session made by `connect` on a new runtime.
    pub fn connect<F>(connect: F) -> Session
    where
        F: std::future::Future<Output = RunningService<RoleClient, ()>>,
    {
        let rt = Session::runtime();
        let client = rt.block_on(connect);
        Session {
            rt,
            client: Some(client),
        }
    }

    /// `memoir <global> mcp --store STORE <extra>` on stdio, with `env` added.
    pub fn stdio(store: &Path, global: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Session {
        let mut args: Vec<&OsStr> = global.iter().map(OsStr::new).collect();
        args.extend([OsStr::new("mcp"), OsStr::new("--store"), store.as_os_str()]);
        args.extend(extra.iter().map(OsStr::new));
        Session::stdio_args(&args, env)
    }

    /// `memoir ARGS` (which start the MCP server on stdio) with `env` added, arguments
    /// given as a host's configuration would give them.
    pub fn stdio_args<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Session {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_memoir"));
        c.env_clear()
            .env("MEMOIR_AUTHOR", AUTHOR)
            .envs(env.iter().copied())
            .args(args);
        Session::connect(async move {
            let transport = TokioChildProcess::new(c).expect("spawn memoir mcp");
            ().serve(transport).await.expect("MCP handshake")
        })
    }

    /// The rmcp client.
    pub fn client(&self) -> &RunningService<RoleClient, ()> {
        self.client.as_ref().expect("open session")
    }

    /// Calls a tool.
    pub fn call(&self, name: &str, args: Value) -> CallToolResult {
        let args: Map<String, Value> = match args {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        self.rt
            .block_on(self.client().call_tool(params))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Calls a tool that must succeed, with a text rendering; returns its structured content.
    pub fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args);
        let v = r.structured_content.clone().expect("structured content");
        assert_eq!(r.is_error, Some(false), "{name}: {v}");
        assert!(!text_of(&r).is_empty(), "{name}: no text");
        v
    }

    /// Calls a tool that must fail; returns its structured content.
    pub fn err(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args);
        assert_eq!(r.is_error, Some(true), "{name} should fail: {r:?}");
        r.structured_content.expect("structured content")
    }

    /// The server's tools.
    pub fn tools(&self) -> Vec<Tool> {
        self.rt.block_on(self.client().list_all_tools()).unwrap()
    }

    /// Ends the session.
    pub fn close(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.cancel());
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
    }
}

/// The text content of a tool result.
pub fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `v` with every object's keys sorted (to compare with a golden file).
pub fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Every record of the pack file `path`, in order: object id, record offset, object
/// length (the pack layout of store-format.md, section 1).
pub fn pack_records(path: &Path) -> Vec<([u8; 32], u64, u32)> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"MEMPACK1");
    let mut out = Vec::new();
    let mut at = 8usize;
    while at + 36 <= bytes.len() {
        let id: [u8; 32] = bytes[at..at + 32].try_into().unwrap();
        let len = u32::from_be_bytes(bytes[at + 32..at + 36].try_into().unwrap());
        out.push((id, at as u64, len));
        at += 36 + len as usize;
    }
    out
}

/// sled's database at `path`, once the last handle on it (whose lock sled's background
/// thread lets go of shortly after the drop) has released it.
pub fn open_sled_when_free(path: &std::path::Path) -> sled::Db {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match sled::open(path) {
            Ok(db) => return db,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("{} stays locked: {e}", path.display()),
        }
    }
}

/// A helper server (a program of the project's virtual environment) on a free loopback
/// port, killed when dropped.
pub struct Server {
    child: std::process::Child,
    /// The port it listens on.
    pub port: u16,
    /// Its temporary home (logs, state), removed when dropped.
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `program` with `args(port, dir)` (`HOME` set to a temporary directory, output to a
/// log there) on a free loopback port, trying a few ports, and waits until `ready(port)`;
/// a server that does not come up within 30 s fails the test with its log.
pub fn start_server(
    program: &Path,
    args: &dyn Fn(u16, &Path) -> Vec<String>,
    ready: &dyn Fn(u16) -> bool,
) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let mut why = String::new();
    // A port found free may be taken before the server binds it: try a few.
    for _ in 0..3 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log_path = dir.path().join(format!("server-{port}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let mut child = Command::new(program)
            .args(args(port, dir.path()))
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let started = std::time::Instant::now();
        loop {
            if ready(port) {
                return Server {
                    child,
                    port,
                    _dir: dir,
                };
            }
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            if exited || started.elapsed() > std::time::Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                why = std::fs::read_to_string(&log_path).unwrap_or_default();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    panic!("{} did not start; its output:\n{why}", program.display());
}

/// Every file below `dir`.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// A signature of the test author at `t`.
pub fn sig(t: i64) -> memoir::repo::Signature {
    memoir::repo::Signature::new(AUTHOR, t)
}

/// The edit that stores `content` at `path` of the default namespace (its value written).
pub fn put(repo: &memoir::repo::Repo, path: &str, content: &str) -> memoir::prolly::Edit {
    let v = repo
        .objects()
        .write(&memoir::object::Blob(content.as_bytes().to_vec()))
        .unwrap();
    memoir::prolly::Edit::Put(memoir::key::Key::new("default", path).unwrap().encode(), v)
}

/// A small deterministic generator: randomized tests that can be replayed from their seed.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `n`.
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A command model (for `MEMOIR_LLM_COMMAND`) that touches `dir/asked` when it is asked, thinks
/// for 2 s, then picks `key`: the command and the path it touches.
pub fn slow_model(dir: &Path, key: &str) -> (String, PathBuf) {
    let asked = dir.join("asked");
    let script = dir.join("slow-model.sh");
    std::fs::write(
        &script,
        format!(
            "cat >/dev/null\ntouch '{}'\nsleep 2\necho '{{\"keys\": [\"{key}\"]}}'\n",
            asked.display()
        ),
    )
    .unwrap();
    (format!("sh {}", script.display()), asked)
}

/// Once `asked` exists (the model is thinking), remembers `text` at `path` in `store` through
/// the CLI, waiting at most 0.5 s for the LOCK: its exit code and JSON, and when it finished.
pub fn remember_once_asked(
    store: &Path,
    asked: PathBuf,
    text: &'static str,
    path: &'static str,
) -> std::thread::JoinHandle<((i32, Value), std::time::Instant)> {
    let store = store.to_path_buf();
    std::thread::spawn(move || {
        let t = std::time::Instant::now();
        while !asked.exists() {
            assert!(t.elapsed().as_secs() < 20, "the model was never asked");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let out = cli_with(
            &store,
            &["--lock-timeout", "0.5"],
            &["remember", text, "-p", path],
        );
        (out, std::time::Instant::now())
    })
}

/// The write of [`remember_once_asked`] succeeded, and finished before `recalled`: it did not
/// wait for the recall whose model was thinking.
pub fn wrote_before(
    writer: std::thread::JoinHandle<((i32, Value), std::time::Instant)>,
    recalled: std::time::Instant,
) {
    let ((code, out), written) = writer.join().unwrap();
    assert_eq!(code, 0, "the CLI write waited for the recall: {out}");
    assert!(
        written < recalled,
        "the write finished only after the recall"
    );
}
