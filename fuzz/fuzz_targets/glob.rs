//! Key globs: any set of patterns (one per line) compiles or is refused with a typed error;
//! a compiled set matches any path without panicking, and the match-all set matches
//! everything.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memoir::glob::KeyGlobs;

const PATHS: [&str; 6] = [
    "a",
    "a.b",
    "a.b.c",
    "preferences.coding.testing",
    "ünï.cödé",
    "x.y.z.w",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let patterns: Vec<&str> = text.split('\n').collect();
    if let Ok(g) = KeyGlobs::new(&patterns) {
        assert_eq!(g.patterns().len(), patterns.len());
        for p in PATHS.iter().copied().chain(patterns.iter().copied()) {
            let m = g.matches(p);
            if g.is_all() {
                assert!(m, "the match-all set refused {p:?}");
            }
        }
    }
});
