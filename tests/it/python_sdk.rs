//! The MCP server driven by the official Python SDK (`tests/python`, run with pytest from
//! the project's virtual environment, which `.ci/run` makes from
//! `tests/python/requirements.txt`).

use std::path::PathBuf;
use std::process::Command;

use crate::common::venv_program;

#[test]
fn official_python_sdk_drives_the_server() {
    let Some(python) = venv_program("python") else {
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
    assert!(text.contains("7 passed"), "{text}");
}
