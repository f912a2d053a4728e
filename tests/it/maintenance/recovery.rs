//! Recovery through the real binary: a torn pack record followed by more writes, a lost
//! database, a killed repair and repeated repairs. Each ends with a store the next ordinary
//! command reads, every acknowledged memory back, and `fsck` clean.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{cli, memoir, new_store, on_path, require};

/// Runs `memoir -s STORE --json ARGS` and asserts success.
fn ok(store: &Path, args: &[&str]) -> Value {
    let (code, v) = cli(store, args);
    assert_eq!(code, 0, "{args:?}: {v}");
    v
}

/// The exit code and stderr of `memoir -s STORE ARGS`.
fn run(store: &Path, args: &[&str]) -> (i32, String) {
    let o = memoir().arg("-s").arg(store).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn remember(store: &Path, path: &str, text: &str) {
    ok(store, &["remember", text, "-p", path]);
}

/// The content stored under `path`.
fn content(store: &Path, path: &str) -> String {
    let v = ok(store, &["get", path]);
    v.to_string()
}

fn assert_clean(store: &Path) {
    let v = ok(store, &["fsck"]);
    assert_eq!(v["clean"], true, "{v}");
}

fn pack(store: &Path) -> PathBuf {
    store.join("packs").join("pack-00000001")
}

/// The reproduction: 16 bytes of a killed append, then a normal write, then a
/// repair. The tear is cut when the store next opens, so the write lands where it was, and
/// the repair finds everything.
#[test]
fn a_torn_record_then_a_write_then_a_repair_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "a.b.c", "first");
    let durable = fs::metadata(pack(&s)).unwrap().len();
    let mut bytes = fs::read(pack(&s)).unwrap();
    bytes.extend_from_slice(b"0123456789abcdef");
    fs::write(pack(&s), bytes).unwrap();
    remember(&s, "a.b.d", "second");
    let after = fs::read(pack(&s)).unwrap();
    assert!(
        !after.windows(16).any(|w| w == b"0123456789abcdef"),
        "the torn bytes were cut before the write"
    );
    assert!(after.len() as u64 > durable);
    assert_clean(&s);
    let v = ok(&s, &["fsck", "--repair"]);
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(v["repair"]["skipped"], serde_json::json!([]), "{v}");
    assert!(content(&s, "a.b.c").contains("first"));
    assert!(content(&s, "a.b.d").contains("second"));
    assert_clean(&s);
}

/// A pack a crash left with a torn record and whole records after it (as older builds
/// could): a repair steps over the tear and indexes every record after it.
#[test]
fn a_repair_indexes_the_records_after_a_tear() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "a.b.c", "first");
    remember(&s, "a.b.d", "second");
    // Every record after the magic, copied behind 16 torn bytes; the database is lost, so
    // the copies are what the repair finds last.
    let bytes = fs::read(pack(&s)).unwrap();
    let torn_at = bytes.len() as u64;
    let mut damaged = bytes.clone();
    damaged.extend_from_slice(b"0123456789abcdef");
    damaged.extend_from_slice(&bytes[8..]);
    fs::write(pack(&s), &damaged).unwrap();
    fs::remove_dir_all(s.join("db")).unwrap();
    let v = ok(&s, &["fsck", "--repair"]);
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(
        v["repair"]["skipped"],
        serde_json::json!([{"pack": "packs/pack-00000001", "offset": torn_at, "bytes": 16}]),
        "{v}"
    );
    assert!(content(&s, "a.b.c").contains("first"));
    assert!(content(&s, "a.b.d").contains("second"));
}

/// A database whose files are gone, or that is gone itself, is damage (exit 5, naming the
/// repair), never a store without history; `new` does not "finish" it; the repair brings
/// everything back.
#[test]
fn a_lost_database_is_damage_not_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "a.b.c", "first");
    for entry in fs::read_dir(s.join("db")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            fs::remove_dir_all(p).unwrap();
        } else {
            fs::remove_file(p).unwrap();
        }
    }
    for args in [&["get", "a.b.c"][..], &["status"], &["log"], &["fsck"]] {
        let (code, err) = run(&s, args);
        assert_eq!(code, 5, "{args:?}: {err}");
        assert!(err.contains("fsck --repair"), "{args:?}: {err}");
    }
    let o = memoir().arg("new").arg(&s).output().unwrap();
    assert!(!o.status.success(), "new refuses an existing store");
    assert_eq!(fs::read_dir(s.join("db")).unwrap().count(), 0, "untouched");
    fs::remove_dir_all(s.join("db")).unwrap();
    assert_eq!(run(&s, &["get", "a.b.c"]).0, 5);
    ok(&s, &["fsck", "--repair"]);
    assert!(content(&s, "a.b.c").contains("first"));
    assert_clean(&s);
}

/// A ref move that reached the database but not the log (a crash between the two) is kept by
/// a repair: the database, where it still reads, is the refs' home; the log only fills in.
#[test]
fn a_repair_keeps_a_move_the_log_missed() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "a.b.c", "first");
    let log = fs::read_to_string(s.join("reflog")).unwrap();
    remember(&s, "a.b.d", "second");
    fs::write(s.join("reflog"), log).unwrap();
    let v = ok(&s, &["fsck", "--repair"]);
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(
        v["repair"]["refs_rolled_back"],
        serde_json::json!([]),
        "{v}"
    );
    assert!(content(&s, "a.b.c").contains("first"));
    assert!(content(&s, "a.b.d").contains("second"));
    // With the database lost too, the log is all there is: the branch is where it says.
    fs::remove_dir_all(s.join("db")).unwrap();
    let v = ok(&s, &["fsck", "--repair"]);
    assert_eq!(v["clean"], true, "{v}");
    assert!(content(&s, "a.b.c").contains("first"));
    assert_eq!(run(&s, &["get", "a.b.d"]).0, 2);
}

/// Repairs keep only the most recent database they set aside.
#[test]
fn repairs_keep_one_set_aside_database() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "a.b.c", "first");
    fs::create_dir(s.join("db.damaged-1")).unwrap(); // left by an older build
    for _ in 0..3 {
        ok(&s, &["fsck", "--repair"]);
    }
    let mut aside: Vec<String> = fs::read_dir(&s)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("db."))
        .collect();
    aside.sort();
    assert_eq!(aside, ["db.damaged"]);
    assert!(content(&s, "a.b.c").contains("first"));
}

/// strace from `PATH`, or `None` (a skip, see `crate::common::require`) without it.
fn strace() -> Option<PathBuf> {
    require(
        on_path(&["strace"]),
        "no strace on PATH; this test kills a repair with it (apt-get install strace)",
    )
}

/// A repair killed at each of its renames, and at each of its syncs: the next command
/// either reads the store (the repair was finished) or reports the damage (exit 5), never
/// "no history"; a repair run again then succeeds, and every memory is there.
#[test]
fn a_killed_repair_is_finished_or_undone_by_the_next_command() {
    let Some(strace) = strace() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = new_store(dir.path());
    remember(&template, "a.b.c", "first");
    remember(&template, "a.b.d", "second");
    fs::remove_dir_all(template.join("db")).unwrap();
    for (class, calls) in [
        ("renames", "rename,renameat,renameat2"),
        ("syncs", "fsync,fdatasync"),
    ] {
        for n in 1.. {
            let s = dir.path().join(format!("{class}-{n}"));
            let copied = Command::new("cp")
                .arg("-a")
                .arg(&template)
                .arg(&s)
                .status()
                .unwrap();
            assert!(copied.success());
            let o = Command::new(&strace)
                .args(["-f", "-o", "/dev/null", "-e"])
                .arg(format!("trace={calls}"))
                .arg("-e")
                .arg(format!("inject={calls}:signal=KILL:when={n}"))
                .arg(env!("CARGO_BIN_EXE_memoir"))
                .env_clear()
                .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
                .arg("-s")
                .arg(&s)
                .args(["--json", "fsck", "--repair"])
                .output()
                .unwrap();
            let killed = o.status.code().is_none() || o.status.code() == Some(137);
            let (code, err) = run(&s, &["get", "a.b.c"]);
            assert!(code == 0 || code == 5, "{class} #{n}: exit {code}: {err}");
            if code == 5 {
                ok(&s, &["fsck", "--repair"]);
            }
            assert!(content(&s, "a.b.c").contains("first"), "{class} #{n}");
            assert!(content(&s, "a.b.d").contains("second"), "{class} #{n}");
            assert_clean(&s);
            fs::remove_dir_all(&s).unwrap();
            if !killed {
                // The repair makes several renames (the swap) and many syncs (the new
                // database, the mark, the directories): each was a crash point above.
                assert!(n > 3, "{class}: the repair made only {} such calls", n - 1);
                break;
            }
        }
    }
}
