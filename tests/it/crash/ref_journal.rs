//! The ref log's lost line: a process killed after the flush that made its ref move durable,
//! before it appended the move to the ref log, leaves the line in the ref journal; the next
//! open appends it, so the log (and a database rebuilt from it) holds every move.

use std::path::Path;
use std::process::Command;

use super::strace::strace;
use crate::common::{cli, memoir};

/// The ref log's entries.
fn log_lines(store: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(store.join("reflog"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_move_killed_before_its_log_line_is_logged_by_the_next_open() {
    let Some(strace) = strace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert_eq!(
        memoir().arg("new").arg(&store).status().unwrap().code(),
        Some(0)
    );
    assert_eq!(cli(&store, &["remember", "first", "-p", "a.b.c"]).0, 0);
    let before = log_lines(&store);

    // SIGKILL at the first write to the ref log: after the flush, before the log's line.
    let reflog = store.join("reflog");
    let run = Command::new(strace)
        .args(["-f", "-o", "/dev/null", "-e", "trace=write", "-e"])
        .arg("inject=write:signal=KILL:when=1")
        .arg("-P")
        .arg(&reflog)
        .arg(env!("CARGO_BIN_EXE_memoir"))
        .arg("-s")
        .arg(&store)
        .args(["remember", "second", "-p", "a.b.d"])
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), None, "killed: {run:?}");
    assert_eq!(
        log_lines(&store),
        before,
        "the kill came before the log's line"
    );

    // The move is durable; the next command that opens the store logs it.
    let (code, status) = cli(&store, &["status"]);
    assert_eq!(code, 0, "{status}");
    let after = log_lines(&store);
    assert_eq!(after.len(), before.len() + 1, "{after:?}");
    let last = &after[after.len() - 1];
    assert_eq!(last["ref"], "refs/heads/main");
    assert_eq!(last["message"], "commit: Store a.b.d in default");
    assert_eq!(last["old"], before[before.len() - 1]["new"]);

    // A second open appends nothing more.
    assert_eq!(cli(&store, &["status"]).0, 0);
    assert_eq!(log_lines(&store).len(), after.len());

    // The database rebuilt from the ref log and the packs alone has the move.
    std::fs::remove_dir_all(store.join("db")).unwrap();
    let (code, repaired) = cli(&store, &["fsck", "--repair"]);
    assert_eq!(code, 0, "{repaired}");
    let (code, got) = cli(&store, &["get", "a.b.d"]);
    assert_eq!(code, 0, "{got}");
    assert_eq!(got["items"][0]["value"]["content"], "second");
}
