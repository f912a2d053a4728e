//! Shared by the whole-process benchmark examples.

use std::path::{Path, PathBuf};

/// The release `memoir` binary built next to the running example.
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("memoir");
    assert!(
        bin.exists(),
        "build the binary first: cargo build --release"
    );
    bin
}

/// Median and 95th percentile of `v`.
pub fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 95 / 100).min(v.len() - 1)])
}

/// The synthetic path of memory `i`: three levels, 37 × 23 groups.
pub fn path_of(i: usize) -> String {
    format!("topic{:02}.area{:02}.item{i:06}", i % 37, (i / 37) % 23)
}
