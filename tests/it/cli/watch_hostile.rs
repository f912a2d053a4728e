//! `memoir watch` against hostile files: FIFOs and sockets, links swapped in, a purge after a
//! remove, and paths holding control characters. Every command runs under a deadline, so a
//! read that waits on a FIFO fails the test instead of hanging it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::super::{assert_error, Fixture, NOW};
use super::files_holding;
use crate::common::{Out, AUTHOR};

/// `memoir -s STORE [--json] args...`, killed (and the test failed) after 30 s.
fn bounded(fx: &Fixture, json: bool, args: &[&str]) -> Out {
    let mut all = vec!["-s", fx.s()];
    if json {
        all.push("--json");
    }
    all.extend_from_slice(args);
    let mut child = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .env("MEMOIR_NOW", NOW)
        .env("MEMOIR_AUTHOR", AUTHOR)
        .args(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run memoir");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("memoir {args:?} still runs after 30 s (waiting on a FIFO?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Out::from(child.wait_with_output().unwrap())
}

fn bounded_ok(fx: &Fixture, args: &[&str]) -> Value {
    let o = bounded(fx, true, args);
    assert_eq!(o.code, 0, "{args:?}: {} {}", o.stdout, o.stderr);
    o.json()
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(Fixture::p(path)).unwrap();
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

/// The one file report of a scan of one file, which failed with exit 1.
fn failed_scan(fx: &Fixture) -> Value {
    let o = bounded(fx, true, &["watch", "scan"]);
    assert_eq!(o.code, 1, "{} {}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(v["commit_hash"], Value::Null, "{v}");
    v["files"][0].clone()
}

/// Only regular files are read: a FIFO (or socket) given to `watch add` is refused with
/// exit 1 at once, and a watched file replaced by one is reported by `scan` (exit 1) and
/// `status` as not a regular file, without opening it for a read that would wait.
#[test]
fn fifos_and_sockets_are_refused_and_never_waited_on() {
    let fx = Fixture::new();
    let dir = fx.store.parent().unwrap().to_path_buf();
    let fifo = dir.join("pipe.md");
    mkfifo(&fifo);
    let o = bounded(&fx, true, &["watch", "add", Fixture::p(&fifo)]);
    assert!(assert_error(&o, 1).contains("is a FIFO, not a regular file"));
    let link = dir.join("to-pipe.md");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let o = bounded(&fx, true, &["watch", "add", Fixture::p(&link)]);
    assert!(assert_error(&o, 1).contains("is a FIFO"));
    let sock = dir.join("sock.md");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let o = bounded(&fx, true, &["watch", "add", Fixture::p(&sock)]);
    assert!(assert_error(&o, 1).contains("is a socket, not a regular file"));
    let human = bounded(&fx, false, &["watch", "add", Fixture::p(&fifo)]);
    assert_eq!(human.code, 1);
    assert!(human.stderr.contains("is a FIFO"), "{}", human.stderr);
    assert_eq!(fx.commit_count(), 1);

    let doc = fx.file("doc.md", b"# Doc\n\nA paragraph on quollword.\n");
    bounded_ok(&fx, &["watch", "add", Fixture::p(&doc)]);
    std::fs::remove_file(&doc).unwrap();
    mkfifo(&doc);
    let f = failed_scan(&fx);
    assert_eq!(f["state"], "error", "{f}");
    assert!(f["error"].as_str().unwrap().contains("is a FIFO"), "{f}");
    let o = bounded(&fx, true, &["watch", "scan", "doc-md"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let st = bounded_ok(&fx, &["watch", "status"]);
    assert_eq!(st["files"][0]["state"], "unreadable", "{st}");
    assert!(st["files"][0]["error"]
        .as_str()
        .unwrap()
        .contains("is a FIFO"));
    // Its keys are kept, as for any file that cannot be read.
    assert_eq!(bounded_ok(&fx, &["search", "quollword"])["count"], 1);
}

/// The link policy: `watch add` resolves a symbolic link once and records its target, and
/// that is the path read from then on. A read never follows a link: a recorded path that
/// changed to a link, or whose directory did, is reported ("changed to a link; not read",
/// exit 1 from `scan`, `unreadable` in `status`) and its target's text stored nowhere. A
/// file that cannot be read (permission) is refused by `add` with exit 1.
#[test]
fn a_link_is_resolved_once_at_add_and_never_followed_after() {
    let fx = Fixture::new();
    let dir = fx.store.parent().unwrap().to_path_buf();
    let secret = fx.file("shadow.txt", b"root:zqxshadowword:19000:0:99999:7:::\n");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let doc = fx.file("doc.md", b"# Doc\n\nA paragraph on bilbyword.\n");
    let link = dir.join("link.md");
    std::os::unix::fs::symlink(&doc, &link).unwrap();

    // Added through a link: the target is recorded, and the human output says so.
    let human = bounded(&fx, false, &["watch", "add", Fixture::p(&link)]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    assert!(
        human.stderr.contains("is a link: watching"),
        "{}",
        human.stderr
    );
    let list = bounded_ok(&fx, &["watch", "list"]);
    let recorded = Fixture::p(&doc.canonicalize().unwrap()).to_string();
    assert_eq!(list["files"][0]["path"], recorded.as_str(), "{list}");
    assert_eq!(list["files"][0]["slug"], "doc-md");

    // The watched file swapped for a link to a private file: reported, not read.
    std::fs::remove_file(&doc).unwrap();
    std::os::unix::fs::symlink(&secret, &doc).unwrap();
    let f = failed_scan(&fx);
    assert_eq!(f["state"], "error", "{f}");
    assert!(
        f["error"]
            .as_str()
            .unwrap()
            .contains("changed to a link; not read"),
        "{f}"
    );
    let st = bounded_ok(&fx, &["watch", "status"]);
    assert_eq!(st["files"][0]["state"], "unreadable", "{st}");
    assert!(st["files"][0]["error"]
        .as_str()
        .unwrap()
        .contains("changed to a link"));
    assert_eq!(bounded_ok(&fx, &["search", "bilbyword"])["count"], 1);

    // A directory on the recorded path swapped for a link: the path leads elsewhere.
    let sub = dir.join("sub");
    let other = dir.join("other");
    std::fs::create_dir(&sub).unwrap();
    std::fs::create_dir(&other).unwrap();
    let inner = sub.join("notes.md");
    std::fs::write(&inner, "# Notes\n\nA note on dibblerword.\n").unwrap();
    std::fs::write(other.join("notes.md"), "root:zqxshadowword:1:2:3\n").unwrap();
    bounded_ok(&fx, &["watch", "add", Fixture::p(&inner)]);
    std::fs::rename(&sub, dir.join("sub.old")).unwrap();
    std::os::unix::fs::symlink(&other, &sub).unwrap();
    let o = bounded(&fx, true, &["watch", "scan", "notes-md"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    let v = o.json();
    assert!(
        v["files"][0]["error"]
            .as_str()
            .unwrap()
            .contains("a directory on its path changed to a link"),
        "{v}"
    );

    assert!(files_holding(&fx.store, b"zqxshadowword").is_empty());
    assert_eq!(bounded_ok(&fx, &["search", "zqxshadowword"])["count"], 0);

    // A link to nothing is a missing file; a file this user cannot read is refused.
    let dangling = dir.join("dangling.md");
    std::os::unix::fs::symlink(dir.join("nowhere.md"), &dangling).unwrap();
    let o = bounded(&fx, true, &["watch", "add", Fixture::p(&dangling)]);
    assert!(assert_error(&o, 2).contains("no file"));
    if unsafe { libc::geteuid() } != 0 {
        let o = bounded(&fx, true, &["watch", "add", Fixture::p(&secret)]);
        assert!(assert_error(&o, 1).contains("cannot read"));
    }
}

/// `watch remove FILE` then `watch remove SLUG --purge` (or `FILE --purge`) erases the
/// file's text from every commit and every file of the store, as `forget --purge` does
/// after `forget`: the purge finds the file's records in history, in every namespace it
/// was watched in.
#[test]
fn purge_works_after_remove() {
    let fx = Fixture::new();
    fx.ok(&["remember", "unrelated fact", "-p", "a.b"]);
    let doc = fx.file("plan.md", b"# Plan\n\nThe zqxfirstword paragraph.\n");
    fx.ok(&["watch", "add", Fixture::p(&doc)]);
    std::fs::write(&doc, "# Plan\n\nThe zqxsecondword paragraph.\n").unwrap();
    fx.ok(&["watch", "scan"]);
    fx.ok(&["watch", "remove", Fixture::p(&doc)]);
    assert!(!files_holding(&fx.store, b"zqxsecondword").is_empty());
    let rm = fx.ok(&["watch", "remove", "plan-md", "--purge"]);
    assert_eq!(rm["slug"], "plan-md", "{rm}");
    assert!(
        rm["purged"]["commits_with_key"].as_u64().unwrap() >= 2,
        "{rm}"
    );
    for word in [&b"zqxfirstword"[..], b"zqxsecondword"] {
        assert!(files_holding(&fx.store, word).is_empty());
    }
    let o = fx.run(true, &["watch", "remove", "plan-md", "--purge"]);
    assert!(assert_error(&o, 2).contains("not watched"));

    // By path, for a file watched in two namespaces one after the other.
    let notes = fx.file("notes.md", b"# Notes\n\nThe zqxthirdword note.\n");
    fx.ok(&["watch", "add", Fixture::p(&notes), "-n", "one"]);
    fx.ok(&["watch", "remove", Fixture::p(&notes)]);
    std::fs::write(&notes, "# Notes\n\nThe zqxfourthword note.\n").unwrap();
    fx.ok(&["watch", "add", Fixture::p(&notes), "-n", "two"]);
    fx.ok(&["watch", "remove", "notes-md"]);
    let rm = fx.ok(&["watch", "remove", Fixture::p(&notes), "--purge"]);
    assert!(rm["purged"].is_object(), "{rm}");
    for word in [&b"zqxthirdword"[..], b"zqxfourthword"] {
        assert!(files_holding(&fx.store, word).is_empty());
    }
    assert_eq!(fx.ok(&["get", "a.b"])["items"][0]["found"], true);
    assert_eq!(fx.ok(&["fsck"])["clean"], true);
}

/// A watched file's path is shown on one line in every human watch output, its control
/// characters escaped as author names are (`\n`, `\u{1b}`): a file name cannot forge a
/// listing line or send a terminal sequence.
#[test]
fn control_characters_in_paths_are_escaped() {
    let fx = Fixture::new();
    let name = "evil\nwatch:raw.forged  x.md (markdown, 9 chunks)\x1b[2J.md";
    let doc = fx.file(name, b"# Evil\n\nA paragraph on numbatword.\n");
    let p = Fixture::p(&doc);
    let check = |o: &Out| {
        for text in [&o.stdout, &o.stderr] {
            assert!(!text.contains('\x1b'), "{text:?}");
            assert!(
                !text.lines().any(|l| l.starts_with("watch:raw.forged")),
                "{text:?}"
            );
        }
        assert!(
            format!("{}{}", o.stdout, o.stderr).contains("evil\\nwatch:raw.forged"),
            "{:?} {:?}",
            o.stdout,
            o.stderr
        );
    };
    let add = bounded(&fx, false, &["watch", "add", p]);
    assert_eq!(add.code, 0, "{}", add.stderr);
    check(&add);
    std::fs::write(&doc, "# Evil\n\nAnother paragraph.\n").unwrap();
    for args in [
        &["watch", "list"][..],
        &["watch", "status"],
        &["watch", "scan"],
    ] {
        let o = bounded(&fx, false, args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        check(&o);
    }
    std::fs::remove_file(&doc).unwrap();
    mkfifo(&doc);
    for args in [&["watch", "scan"][..], &["watch", "status"]] {
        check(&bounded(&fx, false, args));
    }
    let o = bounded(&fx, false, &["watch", "add", p]);
    assert_eq!(o.code, 1);
    check(&o);
    let slug = fx.ok(&["watch", "list"])["files"][0]["slug"]
        .as_str()
        .unwrap()
        .to_string();
    check(&bounded(&fx, false, &["watch", "remove", &slug]));
    check(&bounded(&fx, false, &["watch", "remove", &slug, "--purge"]));
}
