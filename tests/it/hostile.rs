//! Hostile input, table-driven, through the real binary: every bad key, glob, revision, branch
//! name and content gets a clear error with its documented exit code, and nothing is stored.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn memoir(store: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
    c.env_clear()
        .env("MEMOIR_NOW", "1767225600")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(bytes) = stdin {
        let mut i = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = i.write_all(&bytes);
        });
    }
    child.wait_with_output().unwrap()
}

fn new_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert!(memoir(&store, &["new", store.to_str().unwrap()], None)
        .status
        .success());
    assert!(
        memoir(&store, &["remember", "seed", "-p", "seed.key"], None)
            .status
            .success()
    );
    (dir, store)
}

fn commits(store: &Path) -> u64 {
    let o = memoir(store, &["status"], None);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["commit_count"].as_u64().unwrap()
}

/// Runs `args`, expects exit `code` with a JSON error naming the problem, and no new commit.
fn refused(store: &Path, args: &[&str], stdin: Option<&[u8]>, code: i32, mentions: &str) {
    let before = commits(store);
    let o = memoir(store, args, stdin);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "{args:?}: not JSON: {:?}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    assert_eq!(v["success"], false);
    assert_eq!(v["code"], code);
    let msg = v["error"].as_str().unwrap().to_lowercase();
    assert!(
        msg.contains(mentions),
        "{args:?}: error {msg:?} does not mention {mentions:?}"
    );
    assert_eq!(commits(store), before, "{args:?} committed something");
}

#[test]
fn bad_keys_are_refused() {
    let (_d, s) = new_store();
    let long_segment = "x".repeat(65);
    let long_path = vec!["abcdefghij"; 30].join(".");
    let cases: &[(&str, &str)] = &[
        ("", "empty"),
        ("a..b", "empty segment"),
        (".a", "empty segment"),
        ("a.", "empty segment"),
        ("a b", "not allowed"),
        ("a\tb", "not allowed"),
        ("a\u{1b}[31mb", "not allowed"),
        ("a\u{200b}b", "not allowed"),
        // Invisible by Unicode property: Hangul filler, Mongolian vowel separator, combining
        // grapheme joiner, braille blank, a tag character.
        ("a\u{3164}b", "invisible"),
        ("a\u{180e}b", "invisible"),
        ("a\u{34f}b", "invisible"),
        ("a\u{2800}b", "invisible"),
        ("a\u{e0041}b", "invisible"),
        ("a.*", "not allowed"),
        ("a.[b]", "not allowed"),
        ("a.b.c.d.e.f.g.h.i", "more than 8"),
        (&long_segment, "longer"),
        (&long_path, "longer"),
        ("ns:", "empty"),
        (":a", "empty"),
        ("bad ns:a", "namespace"),
    ];
    for (key, why) in cases {
        refused(&s, &["remember", "content", "-p", key], None, 1, why);
        refused(&s, &["get", key], None, 1, why);
    }
    // Keys that look odd but are valid are stored exactly and read back.
    for key in [
        "a/b",
        "codebase:onboard:setup.steps",
        "préférences.café",
        "pre\u{301}fe\u{301}rences.cafe\u{301}",
        "a-b_c.d",
    ] {
        let o = memoir(&s, &["remember", "ok", "-p", key], None);
        assert!(
            o.status.success(),
            "{key}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let g = memoir(&s, &["get", key], None);
        let v: Value = serde_json::from_slice(&g.stdout).unwrap();
        assert_eq!(v["items"][0]["found"], true, "{key}");
    }
}

#[test]
fn bad_globs_revisions_and_branch_names_are_refused() {
    let (_d, s) = new_store();
    let huge = "a".repeat(5000);
    refused(&s, &["summarize", "--keys", "a.[b"], None, 1, "glob");
    refused(&s, &["summarize", "--keys", &huge], None, 1, "glob");
    refused(&s, &["log", "--keys", "{a,b"], None, 1, "glob");
    refused(
        &s,
        &["get", "seed.key", "--at", "HEAD~99999999999999999999"],
        None,
        1,
        "too large",
    );
    refused(&s, &["get", "seed.key", "--at", ".."], None, 1, "revision");
    refused(
        &s,
        &["get", "seed.key", "--at", "HEAD^^^~~~@{"],
        None,
        1,
        "",
    );
    refused(&s, &["get", "seed.key", "--at", "nope"], None, 2, "nope");
    refused(
        &s,
        &["get", "seed.key", "--at", "HEAD~5"],
        None,
        2,
        "head~5",
    );
    refused(&s, &["diff", "main@{1999-01-01}"], None, 2, "1999");
    for name in [
        "..", "a..b", "-x", "a b", "a~1", "a^", "a:b", "@{x}", "a\u{7f}",
    ] {
        refused(&s, &["branch", "--", name], None, 1, "branch name");
        let flag = format!("--branch={name}");
        refused(
            &s,
            &["remember", "c", "-p", "k", &flag],
            None,
            1,
            "branch name",
        );
    }
    refused(
        &s,
        &["get", "seed.key", "--branch", "missing"],
        None,
        2,
        "missing",
    );
    refused(&s, &["checkout", "missing"], None, 2, "missing");
}

#[test]
fn contents_are_bounded_and_stored_exactly() {
    let (_d, s) = new_store();
    refused(&s, &["remember", "", "-p", "k"], None, 1, "empty");
    refused(&s, &["remember", "  \n\t ", "-p", "k"], None, 1, "empty");
    refused(
        &s,
        &["remember", "-", "-p", "k"],
        Some(b"\xff\xfe not utf-8"),
        1,
        "stdin",
    );
    let too_big = vec![b'x'; (16 << 20) + 1];
    refused(
        &s,
        &["remember", "-", "-p", "k"],
        Some(&too_big),
        1,
        "longer",
    );
    // 16 MiB exactly is stored and read back byte for byte.
    let big: String = "0123456789abcdef".repeat(1 << 20);
    let o = memoir(
        &s,
        &["remember", "-", "-p", "big.blob"],
        Some(big.as_bytes()),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let g = memoir(&s, &["get", "big.blob"], None);
    let v: Value = serde_json::from_slice(&g.stdout).unwrap();
    assert_eq!(
        v["items"][0]["value"]["content"].as_str().unwrap().len(),
        big.len()
    );
    assert!(v["items"][0]["value"]["content"].as_str().unwrap() == big);
    // Terminal escapes are stored exactly, and never reach a terminal raw.
    let evil = "title\u{1b}]0;pwned\u{7}\u{1b}[2J end";
    assert!(memoir(&s, &["remember", evil, "-p", "evil"], None)
        .status
        .success());
    let g = memoir(&s, &["get", "evil"], None);
    let v: Value = serde_json::from_slice(&g.stdout).unwrap();
    assert_eq!(v["items"][0]["value"]["content"], evil);
    let human = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .args(["-s", s.to_str().unwrap(), "get", "evil"])
        .output()
        .unwrap();
    assert!(
        !human.stdout.contains(&0x1b),
        "raw escape reached the terminal"
    );
    let fsck = memoir(&s, &["fsck"], None);
    assert!(fsck.status.success());
}
