//! `memoir watch`: documents kept as chunked memories, through the binary on real stores.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{assert_error, Fixture};
use crate::common::pdf::pdf;

#[path = "watch_hostile.rs"]
mod hostile;

const WORDS: [&str; 12] = [
    "river", "granite", "lantern", "orchard", "compass", "harbor", "meadow", "signal", "copper",
    "willow", "summit", "thread",
];

/// A sentence of about 20 words, different for each `n`.
fn filler(n: usize) -> String {
    (0..20)
        .map(|i| WORDS[(n * 7 + i * 5) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Markdown document of 8 sections of 5 paragraphs; paragraph `p` of section `s` names
/// `item{s}x{p}`.
fn markdown() -> String {
    let mut s = String::from("# Field guide\n\n");
    for sec in 0..8 {
        s.push_str(&format!("## Section {sec} on topic{sec}\n\n"));
        for p in 0..5 {
            s.push_str(&format!(
                "Paragraph {p} of section {sec} is about item{sec}x{p}. {}.\n\n",
                filler(sec * 10 + p)
            ));
        }
    }
    s
}

impl Fixture {
    /// A file of the fixture's directory, written with `bytes`.
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.store.parent().unwrap().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn p(path: &Path) -> &str {
        path.to_str().unwrap()
    }

    /// The keys (`ns:path`) of the tree at HEAD under `ns:prefix`.
    fn keys_under(&self, at: &str, ns: &str, prefix: &str) -> BTreeSet<String> {
        let out = self.run(false, &["export", "-n", ns, "--at", at]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| r["key"].as_str().unwrap().to_string())
            .filter(|k| k.starts_with(prefix))
            .map(|k| format!("{ns}:{k}"))
            .collect()
    }

    fn search_keys(&self, query: &str) -> Vec<String> {
        let v = self.ok(&["search", query, "-k", "50"]);
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                format!(
                    "{}:{}",
                    h["namespace"].as_str().unwrap(),
                    h["key"].as_str().unwrap()
                )
            })
            .collect()
    }
}

#[test]
fn markdown_round_trip_commits_only_what_changed() {
    let fx = Fixture::new();
    let doc = fx.file("Doc.md", markdown().as_bytes());
    let add = fx.ok(&["watch", "add", Fixture::p(&doc)]);
    let file = &add["files"][0];
    assert_eq!(file["state"], "added", "{add}");
    assert_eq!(file["format"], "markdown");
    assert_eq!(file["slug"], "doc-md");
    assert_eq!(file["prefix"], "watch:raw.doc-md");
    let n = file["chunks"].as_u64().unwrap() as usize;
    assert!(n >= 8, "{add}");
    assert_eq!(add["added"], n);
    assert!(add["commit_hash"].is_string());
    assert_eq!(fx.commit_count(), 2);
    let keys = fx.keys_under("HEAD", "watch", "raw.doc-md.");
    assert_eq!(keys.len(), n);
    // A chunk per heading at least: section headings start chunks.
    assert!(
        keys.iter().any(|k| k.contains(".section-3-on-topic3-")),
        "{keys:?}"
    );

    // Searchable at once.
    let hits = fx.search_keys("item5x3");
    assert!(hits[0].starts_with("watch:raw.doc-md."), "{hits:?}");

    // Listed, with the list in the store as a record.
    let list = fx.ok(&["watch", "list"]);
    assert_eq!(list["count"], 1);
    assert_eq!(
        list["files"][0]["path"],
        Fixture::p(&doc.canonicalize().unwrap())
    );
    assert_eq!(list["files"][0]["chunks"], n);
    let rec = fx.ok(&["get", "memoir:watch:file.doc-md"]);
    assert_eq!(rec["items"][0]["found"], true);

    // An unchanged scan (and adding again) commits nothing and says so.
    for args in [
        vec!["watch", "scan"],
        vec!["watch", "add", Fixture::p(&doc)],
    ] {
        let scan = fx.ok(&args);
        assert_eq!(scan["commit_hash"], Value::Null, "{scan}");
        assert_eq!(scan["message"], "Nothing changed");
        assert_eq!(scan["files"][0]["state"], "unchanged");
        assert_eq!(fx.commit_count(), 2);
    }
    let human = fx.run(false, &["watch", "scan"]);
    assert!(human.stdout.contains("Nothing changed"), "{}", human.stdout);
    assert_eq!(
        fx.ok(&["watch", "status"])["files"][0]["state"],
        "unchanged"
    );

    // An edit in the middle: only the chunk holding it changes.
    let edited = markdown().replace("item4x2.", "item4x2 quokkaword.");
    std::fs::write(&doc, edited).unwrap();
    assert_eq!(fx.ok(&["watch", "status"])["files"][0]["state"], "changed");
    let scan = fx.ok(&["watch", "scan", Fixture::p(&doc)]);
    let f = &scan["files"][0];
    assert_eq!(f["state"], "changed", "{scan}");
    let (added, removed) = (f["added"].as_u64().unwrap(), f["removed"].as_u64().unwrap());
    assert!(
        (1..=2).contains(&added) && (1..=2).contains(&removed),
        "{scan}"
    );
    assert_eq!(fx.commit_count(), 3);
    let diff = fx.ok(&["diff"]);
    let changes = diff["changes"].as_array().unwrap();
    let count = |op: &str| changes.iter().filter(|c| c["operation"] == op).count() as u64;
    assert_eq!(count("added"), added, "{diff}");
    assert_eq!(count("removed"), removed, "{diff}");
    // The only modified key is the watch list record.
    assert_eq!(count("modified"), 1, "{diff}");
    for c in changes {
        let key = c["key"].as_str().unwrap();
        let ours = (c["namespace"] == "watch" && key.starts_with("raw.doc-md."))
            || (c["namespace"] == "memoir:watch" && key == "file.doc-md");
        assert!(ours, "{c}");
    }
    let log = fx.ok(&["log", "-n", "1"]);
    assert!(
        log["commits"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Scan doc-md"),
        "{log}"
    );
    assert!(fx.search_keys("quokkaword")[0].starts_with("watch:raw.doc-md."));
    let after = fx.keys_under("HEAD", "watch", "raw.doc-md.");
    assert_eq!(keys.intersection(&after).count(), n - removed as usize);

    // Remove deletes every key of the file in a new commit; history keeps them.
    let rm = fx.ok(&["watch", "remove", Fixture::p(&doc)]);
    assert_eq!(rm["removed"], after.len(), "{rm}");
    assert!(fx.keys_under("HEAD", "watch", "raw.").is_empty());
    assert_eq!(fx.ok(&["watch", "list"])["count"], 0);
    let gone = fx.run(true, &["get", "memoir:watch:file.doc-md"]);
    assert_eq!(gone.code, 2);
    assert_eq!(
        fx.keys_under("HEAD~1", "watch", "raw.doc-md.").len(),
        after.len()
    );
    assert!(fx.search_keys("quokkaword").is_empty());
    let o = fx.run(true, &["watch", "remove", Fixture::p(&doc)]);
    assert!(assert_error(&o, 2).contains("not watched"));
}

#[test]
fn text_html_and_pdf_are_searchable() {
    let fx = Fixture::new();
    let txt = fx.file(
        "notes.txt",
        b"First line about wombatword.\n\nSecond paragraph.\n",
    );
    let html = fx.file(
        "page.html",
        b"<html><head><title>Page</title><script>var hiddenscriptword = 1;</script></head>\
          <body><h1>Heading</h1><p>Visible &amp; kangarooword text</p></body></html>",
    );
    let pages: Vec<Vec<String>> = (0..3)
        .map(|p| {
            let mut lines: Vec<String> = (0..10).map(|l| filler(p * 10 + l)).collect();
            lines.push(format!("Page {p} names platypusword{p} (in parentheses)."));
            lines
        })
        .collect();
    let doc = fx.file("paper.pdf", &pdf(&pages));
    for (path, format) in [(&txt, "text"), (&html, "html"), (&doc, "pdf")] {
        let v = fx.ok(&["watch", "add", Fixture::p(path), "-n", "docs"]);
        assert_eq!(v["files"][0]["format"], format, "{v}");
        assert_eq!(v["files"][0]["namespace"], "docs");
    }
    assert!(fx.search_keys("wombatword")[0].starts_with("docs:raw.notes-txt."));
    assert!(fx.search_keys("kangarooword")[0].starts_with("docs:raw.page-html."));
    assert!(fx.search_keys("hiddenscriptword").is_empty());
    let hit = fx.ok(&["search", "platypusword1", "-k", "1"]);
    assert!(
        hit["hits"][0]["key"]
            .as_str()
            .unwrap()
            .starts_with("raw.paper-pdf."),
        "{hit}"
    );
    assert!(hit["hits"][0]["content"]
        .as_str()
        .unwrap()
        .contains("platypusword1 (in parentheses)"));
    let list = fx.ok(&["watch", "list"]);
    let slugs: Vec<&str> = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["notes-txt", "page-html", "paper-pdf"]);
    assert_eq!(fx.commit_count(), 4);

    // The same name elsewhere gets its own slug; a file cannot move namespace by add.
    let sub = fx.store.parent().unwrap().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let other = sub.join("notes.txt");
    std::fs::write(&other, "other notes").unwrap();
    let v = fx.ok(&["watch", "add", Fixture::p(&other)]);
    assert_eq!(v["files"][0]["slug"], "notes-txt-2");
    let o = fx.run(true, &["watch", "add", Fixture::p(&txt), "-n", "elsewhere"]);
    assert!(assert_error(&o, 1).contains("already watched in namespace 'docs'"));
    let again = fx.ok(&["watch", "add", Fixture::p(&txt)]);
    assert_eq!(again["files"][0]["namespace"], "docs");
    assert_eq!(again["files"][0]["state"], "unchanged");

    // A file gone from disk: scan keeps its keys and says so; status too.
    std::fs::remove_file(&txt).unwrap();
    let scan = fx.ok(&["watch", "scan"]);
    let states: Vec<&str> = scan["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["missing", "unchanged", "unchanged", "unchanged"],
        "{scan}"
    );
    assert_eq!(scan["commit_hash"], Value::Null);
    assert_eq!(fx.ok(&["watch", "status"])["missing"], 1);
    let o = fx.run(true, &["watch", "scan", Fixture::p(&txt)]);
    assert!(assert_error(&o, 2).contains("no longer exists"));
    let o = fx.run(true, &["watch", "scan", "nothing-here.md"]);
    assert!(assert_error(&o, 2).contains("not watched"));

    let formats = fx.ok(&["watch", "formats"]);
    let names: Vec<&str> = formats["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["markdown", "text", "html", "pdf"]);
}

#[test]
fn remove_purge_erases_every_version_from_history() {
    let fx = Fixture::new();
    fx.ok(&["remember", "unrelated fact", "-p", "a.b"]);
    let doc = fx.file(
        "secret-plan.md",
        markdown().replace("item2x1", "zqxoldword").as_bytes(),
    );
    fx.ok(&["watch", "add", Fixture::p(&doc)]);
    std::fs::write(&doc, markdown().replace("item6x1", "zqxnewword")).unwrap();
    let scan = fx.ok(&["watch", "scan"]);
    assert!(scan["added"].as_u64().unwrap() >= 2, "{scan}");
    assert!(!fx.ok(&["search", "zqxoldword", "--at", "HEAD~1"])["hits"]
        .as_array()
        .unwrap()
        .is_empty());

    let rm = fx.ok(&["watch", "remove", "secret-plan-md", "--purge"]);
    assert!(
        rm["purged"]["commits_with_key"].as_u64().unwrap() >= 2,
        "{rm}"
    );
    assert!(rm["purged"]["objects_removed"].as_u64().unwrap() > 0);
    let log = fx.ok(&["log"]);
    for c in log["commits"].as_array().unwrap() {
        let at = c["hash"].as_str().unwrap();
        assert!(fx.keys_under(at, "watch", "raw.").is_empty(), "{at}");
        assert!(fx.keys_under(at, "memoir:watch", "").is_empty(), "{at}");
    }
    assert!(files_holding(&fx.store, b"zqxoldword").is_empty());
    assert!(files_holding(&fx.store, b"zqxnewword").is_empty());
    assert_eq!(fx.ok(&["get", "a.b"])["items"][0]["found"], true);
    assert_eq!(fx.ok(&["fsck"])["clean"], true);
}

#[test]
fn bad_inputs_store_nothing() {
    let fx = Fixture::new();
    let dir = fx.store.parent().unwrap().to_path_buf();
    let missing = dir.join("missing.md");
    let binary = fx.file("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let nul = fx.file("notes.txt", b"text\0more");
    let latin1 = fx.file("old.md", b"caf\xe9");
    let empty = fx.file("empty.md", b"\n\n  \n");
    let fake_pdf = fx.file("fake.pdf", b"not a pdf at all");
    let broken_pdf = fx.file(
        "broken.pdf",
        b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n",
    );
    let huge = dir.join("huge.txt");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let cases: [(&Path, i32, &str); 8] = [
        (&missing, 2, "no file"),
        (&binary, 1, "not a supported document"),
        (&nul, 1, "NUL"),
        (&latin1, 1, "not UTF-8"),
        (&empty, 1, "no text"),
        (&fake_pdf, 1, "%PDF-"),
        (&broken_pdf, 1, "cannot read the PDF"),
        (&huge, 1, "longer than 64 MiB"),
    ];
    for (path, code, why) in cases {
        let o = fx.run(true, &["watch", "add", Fixture::p(path)]);
        let msg = assert_error(&o, code);
        assert!(msg.contains(why), "{path:?}: {msg}");
        let human = fx.run(false, &["watch", "add", Fixture::p(path)]);
        assert_eq!(human.code, code);
        assert!(human.stderr.contains(why), "{}", human.stderr);
    }
    let o = fx.run(true, &["watch", "add", Fixture::p(&dir)]);
    assert!(assert_error(&o, 1).contains("directory"));
    let o = fx.run(
        true,
        &["watch", "add", Fixture::p(&empty), "-n", "memoir:watch"],
    );
    assert!(assert_error(&o, 1).contains("watch list"));
    assert_eq!(fx.commit_count(), 1);
    assert_eq!(fx.ok(&["watch", "list"])["count"], 0);
    assert_eq!(fx.ok(&["status"])["memory_count"], 0);
}

#[test]
fn chunks_that_look_like_credentials_are_skipped() {
    let fx = Fixture::new();
    let text = "# Ops\n\nThe deploy key is AKIAIOSFODNN7EXAMPLE, rotate it.\n\n# Other\n\nNothing secret in this wallabyword paragraph.\n";
    let doc = fx.file("ops.md", text.as_bytes());
    let v = fx.ok(&["watch", "add", Fixture::p(&doc)]);
    let f = &v["files"][0];
    assert_eq!(f["chunks"], 1, "{v}");
    assert_eq!(
        f["skipped"],
        serde_json::json!([{"chunk": 1, "rule": "aws_access_key"}])
    );
    assert!(!v.to_string().contains("AKIAIOSFODNN7EXAMPLE"));
    let human = fx.run(false, &["watch", "remove", "ops-md"]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let o = fx.run(false, &["watch", "add", Fixture::p(&doc)]);
    assert!(
        o.stderr.contains("skipped chunk 1 (aws_access_key)"),
        "{}",
        o.stderr
    );
    assert!(files_holding(&fx.store, b"AKIAIOSFODNN7EXAMPLE").is_empty());
    assert!(!fx.search_keys("wallabyword").is_empty());
    fx.ok(&["watch", "remove", "ops-md"]);
    let v = fx.ok(&["watch", "add", Fixture::p(&doc), "--allow-secrets"]);
    assert_eq!(v["files"][0]["chunks"], 2, "{v}");
    assert_eq!(v["files"][0]["skipped"], serde_json::json!([]));
}

/// The files under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
            {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn watch_works_on_a_branch_and_in_the_past() {
    let fx = Fixture::new();
    let doc = fx.file("notes.md", b"# Notes\n\nA note on echidnaword.\n");
    let v = fx.ok(&["watch", "add", Fixture::p(&doc), "--branch", "docs"]);
    assert_eq!(v["files"][0]["state"], "added", "{v}");
    assert_eq!(fx.ok(&["watch", "list"])["count"], 0);
    assert_eq!(fx.ok(&["watch", "list", "--branch", "docs"])["count"], 1);
    let hits = fx.ok(&["search", "echidnaword", "--branch", "docs"]);
    assert_eq!(hits["count"], 1, "{hits}");
    std::fs::write(&doc, "# Notes\n\nA note on numbatword.\n").unwrap();
    let scan = fx.ok(&["watch", "scan", "--branch", "docs"]);
    assert_eq!(
        (&scan["added"], &scan["removed"]),
        (&1.into(), &1.into()),
        "{scan}"
    );
    let old = fx.ok(&["watch", "list", "--at", "docs~1"]);
    let new = fx.ok(&["watch", "list", "--at", "docs"]);
    assert_ne!(old["files"][0]["hash"], new["files"][0]["hash"]);
    assert_eq!(
        fx.ok(&["watch", "status", "--branch", "docs"])["changed"],
        0
    );
    fx.ok(&["merge", "docs"]);
    assert_eq!(fx.ok(&["watch", "list"])["count"], 1);
    assert_eq!(fx.ok(&["search", "numbatword"])["count"], 1);
}
