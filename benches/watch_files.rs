//! Times `watch add` of a 1 MB Markdown file and of a 50-page PDF, a scan of the unchanged
//! files (which must commit nothing) and a scan after an edit in the middle, each on a new
//! store, and prints the median of several runs.
//!
//! `cargo bench --bench watch_files -- [RUNS]` (default 5 runs).

mod common;
#[path = "../tests/it/common/pdf.rs"]
mod pdf;

use std::path::Path;
use std::time::Instant;

use memoir::app::{Options, WatchAddRequest, WatchScanRequest, WriteAs};
use memoir::Memoir;

const WORDS: [&str; 24] = [
    "river", "granite", "lantern", "orchard", "compass", "harbor", "meadow", "signal", "copper",
    "willow", "summit", "thread", "deploy", "rollback", "latency", "cluster", "schema", "index",
    "replica", "backup", "token", "cache", "queue", "worker",
];

/// A deterministic word stream.
struct Words(u64);

impl Words {
    fn next(&mut self) -> &'static str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        WORDS[(self.0 >> 33) as usize % WORDS.len()]
    }

    fn sentence(&mut self, n: usize) -> String {
        (0..n).map(|_| self.next()).collect::<Vec<_>>().join(" ")
    }
}

/// About `bytes` of Markdown: a heading every 12 paragraphs of about 300 bytes.
fn markdown(bytes: usize) -> String {
    let mut w = Words(7);
    let mut out = String::new();
    let mut p = 0;
    while out.len() < bytes {
        if p % 12 == 0 {
            out.push_str(&format!("## Part {} {}\n\n", p / 12, w.sentence(3)));
        }
        out.push_str(&format!("Paragraph {p}: {}.\n\n", w.sentence(40)));
        p += 1;
    }
    out
}

/// `pages` pages of 45 lines of about 80 characters.
fn pdf_pages(pages: usize) -> Vec<u8> {
    let mut w = Words(11);
    let pages: Vec<Vec<String>> = (0..pages)
        .map(|p| {
            (0..45)
                .map(|l| format!("{p}.{l} {}", w.sentence(11)))
                .collect()
        })
        .collect();
    pdf::pdf(&pages)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// One run on a new store: add, unchanged scan, edited scan; milliseconds each.
fn run(dir: &Path, file: &Path, edit: Option<&dyn Fn(&Path)>) -> (f64, f64, f64, usize) {
    let me = WriteAs::author("bench <bench@example.org>");
    let store = dir.join(format!("store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&store);
    let (m, _) = Memoir::create(&store, Options::default(), &me).expect("create");
    let add = WatchAddRequest {
        file: file.to_path_buf(),
        ..WatchAddRequest::default()
    };
    let t = Instant::now();
    let out = m.watch_add(&add, &me).expect("add");
    let t_add = ms(t);
    let chunks = out.files[0].chunks;
    let scan = WatchScanRequest::default();
    let t = Instant::now();
    let again = m.watch_scan(&scan, &me).expect("scan");
    let t_scan = ms(t);
    assert!(again.commit.is_none(), "an unchanged scan committed");
    let mut t_edit = 0.0;
    if let Some(edit) = edit {
        edit(file);
        let t = Instant::now();
        let changed = m.watch_scan(&scan, &me).expect("scan");
        t_edit = ms(t);
        assert!(
            changed.commit.is_some() && changed.added <= 3,
            "{changed:?}"
        );
    }
    drop(m);
    std::fs::remove_dir_all(&store).expect("clean up");
    (t_add, t_scan, t_edit, chunks)
}

fn main() {
    let runs: usize = common::args()
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("temporary directory");
    let md_text = markdown(1 << 20);
    let md = dir.path().join("big.md");
    let doc = dir.path().join("fifty.pdf");
    let pdf_bytes = pdf_pages(50);
    std::fs::write(&doc, &pdf_bytes).expect("write pdf");
    let edit = |p: &Path| {
        let text = std::fs::read_to_string(p).expect("read");
        let mid = text.len() / 2;
        let at = mid + text[mid..].find(".\n").expect("a paragraph end");
        std::fs::write(p, format!("{} inserted words{}", &text[..at], &text[at..])).expect("edit");
    };
    for (name, file, bytes) in [
        ("markdown", &md, md_text.len()),
        ("pdf", &doc, pdf_bytes.len()),
    ] {
        let (mut adds, mut scans, mut edits) = (Vec::new(), Vec::new(), Vec::new());
        let mut chunks = 0;
        for _ in 0..runs {
            if name == "markdown" {
                std::fs::write(&md, &md_text).expect("write markdown");
            }
            let e: Option<&dyn Fn(&Path)> = (name == "markdown").then_some(&edit as &dyn Fn(&Path));
            let (a, s, ed, c) = run(dir.path(), file, e);
            adds.push(a);
            scans.push(s);
            edits.push(ed);
            chunks = c;
        }
        println!(
            "{name}: {bytes} bytes, {chunks} chunks; median of {runs}: add {:.1} ms, unchanged scan {:.1} ms (no commit){}",
            median(adds),
            median(scans),
            if name == "markdown" {
                format!(", scan after an edit in the middle {:.1} ms", median(edits))
            } else {
                String::new()
            }
        );
    }
}
