//! One set of input rules for every way in, through the real binary (and the MCP server):
//! every read of a file or a stream is bounded (an endless `/dev/zero` ends quickly with
//! exit 1, under a memory limit), `import` refuses what `remember` refuses (blank or oversized
//! content, invisible keys, repeated JSON fields, credentials in contents and keys), floats
//! survive export -> import -> export exactly and re-importing an export commits nothing, and
//! keys are NFC with invisible characters refused.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{cli, memoir, new_store, Out, Session};

/// `memoir -s STORE --json ARGS` with `stdin` as its standard input, at a fixed time.
fn run_with(store: &Path, args: &[&str], stdin: Stdio) -> Command {
    let mut c = memoir();
    c.env("MEMOIR_NOW", "1767225600")
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .stdin(stdin);
    c
}

/// Runs `args` with `text` on stdin.
fn run(store: &Path, args: &[&str], text: &str) -> Out {
    let mut child = run_with(store, args, Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = text.to_string();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().unwrap().into();
    writer.join().unwrap();
    out
}

fn commits(store: &Path) -> u64 {
    let (code, v) = cli(store, &["status"]);
    assert_eq!(code, 0, "{v}");
    v["commit_count"].as_u64().unwrap()
}

/// Expects a JSON failure with exit `code` whose message mentions every one of `words`.
fn failed(o: &Out, code: i32, words: &[&str]) -> String {
    assert_eq!(o.code, code, "{} / {}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(v["success"], false);
    let msg = v["error"].as_str().unwrap().to_string();
    for w in words {
        assert!(msg.contains(w), "{msg:?} does not mention {w:?}");
    }
    msg
}

/// Most address space a run against /dev/zero may use: a read without a bound fails to
/// allocate (and aborts) under it instead of ending with a clear error.
#[cfg(target_os = "linux")]
const MEMORY_LIMIT_KIB: u32 = 384 << 10;

/// Runs the binary with /dev/zero as stdin under [`MEMORY_LIMIT_KIB`] of address space;
/// returns its output and how long it ran.
#[cfg(target_os = "linux")]
fn against_dev_zero(store: &Path, args: &[&str]) -> (Out, Duration) {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let limited = format!("ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\"");
    let mut c = Command::new("sh");
    c.env_clear()
        .env("MEMOIR_NOW", "1767225600")
        .args(["-c", &limited, env!("CARGO_BIN_EXE_memoir"), "-s"])
        .arg(store)
        .arg("--json")
        .args(args)
        .stdin(Stdio::from(zero))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = c.output().unwrap().into();
    (out, start.elapsed())
}

#[cfg(target_os = "linux")]
#[test]
fn endless_inputs_end_quickly_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let cases: &[(&[&str], &[&str])] = &[
        (&["import", "/dev/zero"], &["/dev/zero", "line 1", "64 MiB"]),
        (&["import", "-"], &["stdin", "line 1", "64 MiB"]),
        (
            &["verify", "a.b", "-p", "@/dev/zero"],
            &["proof file /dev/zero", "4 MiB"],
        ),
        (&["remember", "-", "-p", "a.b"], &["stdin", "16 MiB"]),
    ];
    for (args, words) in cases {
        let (o, took) = against_dev_zero(&store, args);
        failed(&o, 1, words);
        assert!(took < Duration::from_secs(30), "{args:?} took {took:?}");
    }
    assert_eq!(commits(&store), 1);
    // A proof given inline is bounded too (here below the argument limit, over 4 MiB of
    // text is refused the same way by the library for every face).
    let (code, v) = cli(&store, &["verify", "a.b", "-p", &"a".repeat(100)]);
    assert_eq!(code, 1, "{v}");
}

#[test]
fn import_refuses_what_remember_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let before = commits(&store);
    let fine = r#"{"key": "notes.fine", "content": "prefers pytest"}"#;
    let token = format!("ghp_{}", "x9".repeat(18));
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            r#"{"key": "a.b", "content": ""}"#.into(),
            vec!["line 2", "entry 1", "empty"],
        ),
        (
            r#"{"key": "a.b", "content": " \n\t "}"#.into(),
            vec!["line 2", "empty"],
        ),
        (
            r#"{"key": "a.b", "entries": [{"content": "x"}, {"content": ""}]}"#.into(),
            vec!["line 2", "entry 2", "empty"],
        ),
        (
            r#"{"key": "a.b", "content": "x", "content": "y"}"#.into(),
            vec!["line 2", "duplicate field \"content\""],
        ),
        (
            r#"{"key": "a.b", "content": "x", "key": "c.d"}"#.into(),
            vec!["line 2", "duplicate field \"key\""],
        ),
        (
            r#"{"key": "a.b", "entries": [{"content": "x", "timestamp": 1, "timestamp": 2}]}"#
                .into(),
            vec!["line 2", "duplicate field \"timestamp\""],
        ),
        (
            r#"{"key": "a\u3164b", "content": "x"}"#.into(),
            vec!["line 2", "U+3164", "invisible"],
        ),
        (
            r#"{"key": "a.b", "namespace": "n\u2800s", "content": "x"}"#.into(),
            vec!["line 2", "U+2800"],
        ),
        (
            r#"{"key": "a.b", "content": "x", "related_keys": ["c\u200dd"]}"#.into(),
            vec!["line 2", "related key"],
        ),
        (
            format!(r#"{{"key": "tokens.{token}", "content": "x"}}"#),
            vec!["line 2", "key looks like", "github_token"],
        ),
        (
            format!(r#"{{"key": "a.b", "content": "x", "related_keys": ["t.{token}"]}}"#),
            vec!["line 2", "key looks like", "github_token"],
        ),
        (
            r#"{"key": "a.b", "content": "x"}{"key": "c"}"#.into(),
            vec!["line 2", "invalid JSON"],
        ),
    ];
    for (line, words) in &cases {
        let o = run(&store, &["import", "-"], &format!("{fine}\n{line}\n"));
        let msg = failed(&o, 1, words);
        assert!(!msg.contains(&token), "{msg}");
    }
    // Content over 16 MiB, from a file: refused as remember refuses it.
    let big = dir.path().join("big.jsonl");
    let content = "x".repeat((16 << 20) + 1);
    std::fs::write(&big, json!({"key": "big", "content": content}).to_string()).unwrap();
    let (code, v) = cli(&store, &["import", big.to_str().unwrap()]);
    assert_eq!(code, 1, "{v}");
    assert!(v["error"].as_str().unwrap().contains("longer than 16 MiB"));
    let o = run(&store, &["remember", "-", "-p", "big"], &content);
    failed(&o, 1, &["longer than 16 MiB"]);
    assert_eq!(commits(&store), before, "a refused import committed");
}

#[test]
fn mcp_writes_follow_the_same_key_rules() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let mut s = Session::stdio(&store, &[], &[], &[]);
    let token = format!("ghp_{}", "x9".repeat(18));
    for (path, why) in [
        ("a\u{3164}b".to_string(), "invisible"),
        ("a\u{e0041}b".to_string(), "invisible"),
        (format!("tokens.{token}"), "github_token"),
    ] {
        let e = s.err("memoir_remember", json!({"content": "x", "path": path}));
        let msg = e["error"].as_str().unwrap();
        assert!(msg.contains(why), "{msg}");
        assert!(!msg.contains(&token), "{msg}");
    }
    let r = s.ok(
        "memoir_remember",
        json!({"content": "x", "path": "re\u{301}sume\u{301}"}),
    );
    assert_eq!(r["key"], "r\u{e9}sum\u{e9}");
    s.close();
    assert_eq!(commits(&store), 2);
}

/// Records whose floats are any finite values, as JSON Lines.
fn records() -> impl Strategy<Value = Vec<Value>> {
    let float = prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (1.0e9f64..2.0e9),
        Just(0.1 + 0.2),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
    ];
    let entry = (float.clone(), 0.0f64..=1.0, any::<bool>()).prop_map(|(t, c, active)| {
        json!({"content": "memory", "timestamp": t, "confidence": c,
               "status": if active { "active" } else { "superseded" }})
    });
    proptest::collection::vec(proptest::collection::vec(entry, 1..4), 1..25).prop_map(|recs| {
        recs.into_iter()
            .enumerate()
            .map(|(i, entries)| json!({"key": format!("k.n{i:03}"), "entries": entries}))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Export -> import -> export gives the same bytes, and importing an export into the
    /// store it came from (or a copy) commits nothing.
    #[test]
    fn floats_survive_export_and_import_exactly(recs in records()) {
        let dir = tempfile::tempdir().unwrap();
        let a = new_store(&dir.path().join("a"));
        let lines: String = recs.iter().map(|r| format!("{r}\n")).collect();
        let o = run(&a, &["import", "-"], &lines);
        prop_assert_eq!(o.code, 0, "{}", o.stdout);
        let first = memoir().arg("-s").arg(&a).arg("export").output().unwrap();
        let first = String::from_utf8(first.stdout).unwrap();
        for (line, rec) in first.lines().zip(recs.iter()) {
            let got: Value = serde_json::from_str(line).unwrap();
            for (g, w) in got["entries"].as_array().unwrap().iter().zip(rec["entries"].as_array().unwrap()) {
                prop_assert_eq!(g["timestamp"].as_f64().unwrap().to_bits(), w["timestamp"].as_f64().unwrap().to_bits());
                prop_assert_eq!(g["confidence"].as_f64().unwrap().to_bits(), w["confidence"].as_f64().unwrap().to_bits());
            }
        }
        // Into the same store: nothing changed, nothing committed.
        let n = commits(&a);
        let o = run(&a, &["import", "-"], &first);
        prop_assert_eq!(o.code, 0, "{}", o.stderr);
        let v = o.json();
        prop_assert_eq!(&v["changed"], &json!(0));
        prop_assert_eq!(&v["message"], &json!("Nothing changed"));
        prop_assert!(v["commit_hash"].is_null());
        prop_assert_eq!(commits(&a), n);
        // Into another store: the same export, byte for byte.
        let b = new_store(&dir.path().join("b"));
        let o = run(&b, &["import", "-"], &first);
        prop_assert_eq!(o.code, 0, "{}", o.stderr);
        let second = memoir().arg("-s").arg(&b).arg("export").output().unwrap();
        prop_assert_eq!(String::from_utf8(second.stdout).unwrap(), first);
    }
}

#[test]
fn reimport_reports_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    for (c, p) in [("one", "a.one"), ("two", "a.two"), ("three", "a.three")] {
        assert_eq!(cli(&store, &["remember", c, "-p", p]).0, 0);
    }
    let dump = memoir()
        .arg("-s")
        .arg(&store)
        .arg("export")
        .output()
        .unwrap();
    let dump = String::from_utf8(dump.stdout).unwrap();
    let n = commits(&store);
    let v = run(&store, &["import", "-"], &dump).json();
    assert_eq!(
        (v["imported"].clone(), v["changed"].clone()),
        (json!(3), json!(0))
    );
    assert_eq!(commits(&store), n);
    let human = memoir()
        .arg("-s")
        .arg(&store)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(dump.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(human.status.success());
    assert!(
        String::from_utf8_lossy(&human.stderr).contains("Nothing changed")
            || String::from_utf8_lossy(&human.stdout).contains("Nothing changed")
    );
    // One record edited: one key changes, one commit.
    let edited = dump.replacen("\"two\"", "\"deux\"", 2);
    let v = run(&store, &["import", "-"], &edited).json();
    assert_eq!(
        (v["imported"].clone(), v["changed"].clone()),
        (json!(3), json!(1))
    );
    assert_eq!(v["message"], "Import 1 memories");
    assert_eq!(commits(&store), n + 1);
    let (_, d) = cli(&store, &["diff"]);
    assert_eq!(d["changes"].as_array().unwrap().len(), 1, "{d}");
}

/// Lines without timestamps, imported again later, change nothing when the store already
/// holds them; a line whose content changed is written, at the new import's time.
#[test]
fn reimporting_lines_without_times_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let file = dir.path().join("facts.jsonl");
    let import_at = |now: &str, text: &str| -> Value {
        std::fs::write(&file, text).unwrap();
        let o = memoir()
            .env("MEMOIR_NOW", now)
            .arg("-s")
            .arg(&store)
            .args(["--json", "import"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let lines = "{\"key\":\"a.b\",\"content\":\"one\"}\n{\"key\":\"a.c\",\"content\":\"two\"}\n";
    assert_eq!(import_at("1767225600", lines)["changed"], json!(2));
    let n = commits(&store);
    let again = import_at("1767229200", lines);
    assert_eq!(
        (&again["changed"], &again["message"]),
        (&json!(0), &json!("Nothing changed"))
    );
    assert_eq!(commits(&store), n);
    let edited = lines.replace("\"one\"", "\"uno\"");
    let v = import_at("1767232800", &edited);
    assert_eq!(v["changed"], json!(1), "{v}");
    let (_, g) = cli(&store, &["get", "a.b"]);
    assert_eq!(g["items"][0]["value"]["content"], json!("uno"), "{g}");
    assert_eq!(
        g["items"][0]["value"]["timestamp"],
        json!(1767232800.0),
        "{g}"
    );
}

#[test]
fn keys_are_nfc_and_invisible_characters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (nfd, nfc) = ("cafe\u{301}.cre\u{300}me", "caf\u{e9}.cr\u{e8}me");
    assert_eq!(cli(&store, &["remember", "one", "-p", nfd]).0, 0);
    let (code, v) = cli(&store, &["remember", "two", "-p", nfc, "--replace"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["key"], nfc);
    let (_, s) = cli(&store, &["summarize", "--keys", "*"]);
    assert_eq!(s["matching_keys"]["default"], json!([nfc]), "{s}");
    for spelling in [nfd, nfc] {
        let (code, g) = cli(&store, &["get", spelling]);
        assert_eq!(code, 0, "{g}");
        assert_eq!(g["items"][0]["value"]["content"], "two");
        assert_eq!(g["items"][0]["key"], nfc);
    }
    // Invisible characters, judged by Unicode property, in paths and namespaces.
    for ch in [
        '\u{3164}',
        '\u{180E}',
        '\u{034F}',
        '\u{2800}',
        '\u{E0041}',
        '\u{FE0F}',
        '\u{115F}',
        '\u{FFA0}',
        '\u{2064}',
        '\u{1D173}',
    ] {
        let path = format!("a{ch}b");
        let (code, v) = cli(&store, &["remember", "x", "-p", &path]);
        assert_eq!(code, 1, "{ch:?}: {v}");
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains("invisible"), "{msg}");
        assert!(msg.contains(&format!("U+{:04X}", ch as u32)), "{msg}");
        let ns = format!("n{ch}s");
        assert_eq!(cli(&store, &["remember", "x", "-p", "a", "-n", &ns]).0, 1);
        assert_eq!(cli(&store, &["get", &path]).0, 1);
    }
    assert_eq!(commits(&store), 3);
}

/// A key an earlier version stored decomposed, or with a character now refused, is still
/// read, listed, found by its exact spelling, forgotten and checked by fsck.
#[test]
fn keys_stored_by_earlier_versions_still_read() {
    use memoir::key::Key;
    use memoir::memory::{Entry, Record};
    use memoir::object::Blob;
    use memoir::prolly::Edit;
    use memoir::repo::{Repo, Signature};
    use memoir::store::{OpenOptions, Store};

    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let old = [("default", "cafe\u{301}"), ("default", "a\u{3164}b")];
    {
        let repo = Repo::open(Store::open(&store, &OpenOptions::default()).unwrap()).unwrap();
        let mut edits = Vec::new();
        for (ns, path) in old {
            let key = Key::existing(ns, path).unwrap();
            let rec = Record::new(&key, Entry::new("old", 1.0, 1.0), vec![]);
            let id = repo.objects().write(&Blob(rec.encode().unwrap())).unwrap();
            edits.push(Edit::Put(key.encode(), id));
        }
        let sig = Signature::new("Old <o@example.org>", 1_700_000_000);
        repo.commit("main", edits, &sig, "written by an earlier version")
            .unwrap();
    }
    let (code, f) = cli(&store, &["fsck"]);
    assert_eq!(code, 0, "{f}");
    let dump = memoir()
        .arg("-s")
        .arg(&store)
        .arg("export")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(dump.stdout).unwrap().lines().count(), 2);
    for (_, path) in old {
        let (code, g) = cli(&store, &["get", path]);
        assert_eq!(code, 0, "{path:?}: {g}");
        assert_eq!(g["items"][0]["key"], path);
    }
    // The NFC spelling is another key (not stored).
    assert_eq!(cli(&store, &["get", "caf\u{e9}"]).0, 2);
    for (_, path) in old {
        let (code, v) = cli(&store, &["forget", path]);
        assert_eq!(code, 0, "{path:?}: {v}");
    }
    let (_, s) = cli(&store, &["status"]);
    assert_eq!(s["memory_count"], 0, "{s}");
}
