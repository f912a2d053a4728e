//! Revision text: parsing (`parse_rev`, `parse_range`) and resolution against a small history
//! with two branches and a merge. Any text gives a revision or a typed error, never a panic,
//! a hang or a deep recursion; whatever resolves names a commit of that history.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memoir::key::Key;
use memoir::object::{Blob, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::revision::{parse_range, parse_rev};
use memoir::repo::{Repo, Signature};
use memoir::store::Store;

const T0: i64 = 1_700_000_000;

struct History {
    repo: Repo,
    commits: Vec<ObjectId>,
}

fn history() -> &'static History {
    static H: OnceLock<History> = OnceLock::new();
    H.get_or_init(|| {
        let sig = |t| Signature::new("Fuzz <fuzz@example.org>", t);
        let repo = Repo::init(Store::memory(), &sig(T0), "Initialize store").unwrap();
        let put = |repo: &Repo, path: &str, text: &str| {
            let k = Key::new("default", path).unwrap();
            let v = repo
                .objects()
                .write(&Blob(text.as_bytes().to_vec()))
                .unwrap();
            Edit::Put(k.encode(), v)
        };
        let mut commits = vec![repo.head_commit().unwrap()];
        let c1 = repo
            .commit("main", vec![put(&repo, "a.b", "1")], &sig(T0 + 100), "one")
            .unwrap();
        repo.create_branch("side", &c1).unwrap();
        let s1 = repo
            .commit("side", vec![put(&repo, "x.y", "s")], &sig(T0 + 200), "side")
            .unwrap();
        let c2 = repo
            .commit("main", vec![put(&repo, "a.b", "2")], &sig(T0 + 300), "two")
            .unwrap();
        let root = repo.root_of(&s1).unwrap();
        let m = repo
            .commit_tree("main", &c2, root, vec![c2, s1], &sig(T0 + 400), "merge")
            .unwrap();
        commits.extend([c1, s1, c2, m]);
        History { repo, commits }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let now = T0 + 86_400;
    let _ = parse_rev(text, now);
    let _ = parse_range(text, now);
    let h = history();
    if let Ok(id) = h.repo.resolve(text, now) {
        assert!(
            h.commits.contains(&id),
            "{text:?} resolved to {id}, not a commit"
        );
    }
    if let Ok((from, to)) = h.repo.resolve_range(text, now) {
        assert!(h.commits.contains(&to));
        assert!(from.is_none_or(|f| h.commits.contains(&f)));
    }
});
