//! Records the commit the binary is built from, for `memoir --version`: `git rev-parse` when
//! the source is a git checkout, else "unknown" (a source archive, a registry download).

use std::process::Command;

fn main() {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MEMOIR_COMMIT={commit}");
    // Run again when HEAD moves: HEAD itself (a checkout), the branches (a commit). Only
    // paths that exist are named: cargo reruns the script on every build for a missing one
    // (a repository whose refs were never packed has no `packed-refs`).
    for path in ["HEAD", "refs/heads", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
