//! The MCP server driven by the official TypeScript SDK and the MCP Inspector's CLI mode
//! (`tests/typescript/check.mjs`, with the packages `npm ci` installs there from its lock
//! file; `.ci/run` does that). Skips without `node` or the installed packages.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{on_path, require};

#[test]
fn typescript_sdk_and_inspector_drive_the_server() {
    let Some(node) = require(on_path(&["node"]), "no node on PATH") else {
        return;
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/typescript");
    let installed = dir.join("node_modules/@modelcontextprotocol/sdk").is_dir()
        && dir.join("node_modules/.bin/mcp-inspector").is_file();
    let why = "no tests/typescript/node_modules; install the SDK and the Inspector: \
               (cd tests/typescript && npm ci)";
    if require(installed.then_some(()), why).is_none() {
        return;
    }
    let out = Command::new(node)
        .arg("check.mjs")
        .arg(env!("CARGO_BIN_EXE_memoir"))
        .current_dir(&dir)
        .output()
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "check.mjs failed:\n{text}");
    assert!(text.contains("ok 57 checks"), "{text}");
}
