//! The MCP server driven by the official Python SDK (`tests/python`, run with pytest from
//! the project's virtual environment, which `.ci/run` makes from
//! `tests/python/requirements.txt`).

use std::path::PathBuf;
use std::process::Command;

/// The virtual environment's Python, or `None` when `MEMOIR_SKIP_PYTHON_TESTS=1` says the
/// Python suites are not to run here. Without the environment (and without that opt-out)
/// the test fails and says how to make it.
pub fn venv_python() -> Option<PathBuf> {
    if std::env::var("MEMOIR_SKIP_PYTHON_TESTS").as_deref() == Ok("1") {
        return None;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: create it with `python3 -m venv .venv && .venv/bin/pip install -r \
         tests/python/requirements.txt` (or set MEMOIR_SKIP_PYTHON_TESTS=1 to skip)",
        python.display()
    );
    Some(python)
}

#[test]
fn official_python_sdk_drives_the_server() {
    let Some(python) = venv_python() else {
        return;
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let out = Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_mcp_sdk.py",
        ])
        .current_dir(&dir)
        .env("MEMOIR_BIN", env!("CARGO_BIN_EXE_memoir"))
        .output()
        .expect("run pytest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pytest failed:\n{text}");
    assert!(text.contains("5 passed"), "{text}");
}
