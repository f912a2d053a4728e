//! `fsck`, `gc`, `purge`, `proof` and `verify`.

use memoir::key::Key;

use super::{assert_error, cmd, Fixture};

#[test]
fn fsck_gc_and_purge() {
    let f = Fixture::new();
    f.ok(&[
        "remember",
        "the launch code is 0000-SECRET",
        "-p",
        "secrets.launch",
    ]);
    f.ok(&["remember", "keep me", "-p", "notes.keep"]);
    f.ok(&[
        "remember",
        "on a branch",
        "-p",
        "notes.branch",
        "--branch",
        "b",
    ]);
    let v = f.ok(&["fsck"]);
    assert_eq!(v["clean"], true);
    assert_eq!(v["findings"], serde_json::json!([]));
    let g = f.ok(&["gc"]);
    assert_eq!(g["objects_removed"], 0);
    // The search index caches contents; searching fills it with the secret.
    assert_eq!(f.ok(&["search", "launch code"])["count"], 1);
    let cached = |store: &std::path::Path| -> bool {
        std::fs::read_dir(store.join("cache")).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read(e.path()).is_ok_and(|b| b.windows(6).any(|w| w == b"SECRET"))
            })
        })
    };
    assert!(cached(&f.store));
    // Purge: the secret's content is stored nowhere afterwards; everything else reads as before.
    let p = f.ok(&["forget", "secrets.launch", "--purge"]);
    assert!(p["purged"]["commits_rewritten"].as_u64().unwrap() >= 2);
    {
        let repo = f.repo();
        use memoir::store::ObjectStore;
        let mut ids = Vec::new();
        repo.store()
            .for_each_id(&mut |id| {
                ids.push(id);
                true
            })
            .unwrap();
        for id in ids {
            let bytes = repo.store().get(&id).unwrap().unwrap();
            assert!(
                !bytes.windows(6).any(|w| w == b"SECRET"),
                "secret still stored"
            );
        }
    }
    assert!(!cached(&f.store), "secret still cached");
    // Nor is it in any file of the store: gc rewrote the packs that held it.
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.path().is_dir() {
                files(&e.path(), out);
            } else {
                out.push(e.path());
            }
        }
    }
    let mut all = Vec::new();
    files(&f.store, &mut all);
    assert!(all.iter().any(|p| p.starts_with(f.store.join("packs"))));
    for p in &all {
        let bytes = std::fs::read(p).unwrap();
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET"),
            "secret still on disk in {}",
            p.display()
        );
    }
    assert_eq!(f.ok(&["search", "launch code"])["count"], 0);
    assert!(!cached(&f.store), "secret cached again");
    assert_eq!(f.ok(&["fsck"])["clean"], true);
    assert_eq!(f.ok(&["get", "notes.keep"])["items"][0]["found"], true);
    assert_eq!(
        f.ok(&["get", "notes.branch", "--branch", "b"])["items"][0]["found"],
        true
    );
    assert_eq!(
        f.ok(&["blame", "secrets.launch"])["entries"],
        serde_json::json!([])
    );
    // Damage a stored value: fsck names it and exits 5.
    let id = {
        let repo = f.repo();
        let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
        let id = repo
            .tree()
            .get(&root, &Key::new("default", "notes.keep").unwrap().encode())
            .unwrap()
            .unwrap();
        repo.store()
            .overwrite_raw(id.as_bytes(), b"\x82\x02\x41\x01")
            .unwrap();
        id
    };
    let o = f.run(true, &["fsck"]);
    assert_eq!(o.code, 5);
    let v = o.json();
    assert_eq!(v["clean"], false);
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["subject"].as_str().unwrap().contains(&id.to_hex())));
}

/// `gc` and `fsck` leave a record of their last run in `<store>/maintenance`, which the
/// statistics read back; a damaged record reads as "never run" and is replaced by the next.
#[test]
fn gc_and_fsck_are_recorded() {
    use memoir::app::{LastRuns, Memoir, Options, ReadPoint, MAINTENANCE_FILE};
    let f = Fixture::new();
    f.ok(&["remember", "kept", "-p", "notes.keep"]);
    let record = f.store.join(MAINTENANCE_FILE);
    assert!(!record.exists());
    let stats = || {
        Memoir::open(&f.store, Options::default())
            .stats(&ReadPoint::head(), None)
            .unwrap()
    };
    let s = stats();
    assert_eq!((s.last_gc, s.last_fsck), (None, None));

    let checked = f.ok(&["fsck"])["objects_checked"].as_u64().unwrap();
    let runs = LastRuns::read(&f.store);
    let fsck = runs.fsck.clone().expect("fsck recorded");
    assert_eq!(fsck.time, super::NOW.parse::<i64>().unwrap());
    assert_eq!(fsck.date, "2026-01-01T00:00:00+00:00");
    assert!(fsck.clean && !fsck.repaired);
    assert_eq!((fsck.findings, fsck.objects_checked), (0, checked));
    assert!(runs.gc.is_none());

    f.run_env(&[("MEMOIR_NOW", "1767225700")], true, &["gc"]);
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(on_disk["gc"]["time"], 1767225700);
    assert_eq!(on_disk["gc"]["objects_removed"], 0);
    assert_eq!(on_disk["fsck"]["time"], 1767225600, "the last fsck is kept");
    let s = stats();
    assert_eq!(s.last_gc.unwrap().time, 1767225700);
    assert_eq!(s.last_fsck, Some(fsck));

    std::fs::write(&record, b"{not json").unwrap();
    assert_eq!(stats().last_gc, None);
    f.ok(&["gc"]);
    let runs = LastRuns::read(&f.store);
    assert!(runs.gc.is_some() && runs.fsck.is_none());
}

#[test]
fn proof_and_verify() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a.b"]);
    f.ok(&["remember", "y", "-p", "a.c"]);
    let p = f.ok(&["proof", "a.b"]);
    assert_eq!(p["found"], true);
    let proof = p["proof"].as_str().unwrap().to_string();
    let root = p["root"].as_str().unwrap().to_string();
    let v = f.ok(&["verify", "a.b", "-p", &proof]);
    assert_eq!(v["valid"], true);
    assert_eq!(v["value"], p["value"]);
    // Without the store, against the root alone.
    let o = cmd(
        &[],
        &["--json", "verify", "a.b", "-p", &proof, "--root", &root],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stdout);
    // Another key, another root, or a tampered proof: exit 1.
    assert_error(&f.run(true, &["verify", "a.c", "-p", &proof]), 1);
    f.ok(&["remember", "z", "-p", "a.d"]);
    assert_error(&f.run(true, &["verify", "a.b", "-p", &proof]), 1);
    let mut bad = proof.clone().into_bytes();
    let i = bad.len() - 3;
    bad[i] = if bad[i] == b'0' { b'1' } else { b'0' };
    let bad = String::from_utf8(bad).unwrap();
    assert_error(
        &f.run(true, &["verify", "a.b", "-p", &bad, "--root", &root]),
        1,
    );
    // Absence is provable too.
    let a = f.ok(&["proof", "no.such"]);
    assert_eq!(a["found"], false);
    let v = f.ok(&["verify", "no.such", "-p", a["proof"].as_str().unwrap()]);
    assert_eq!(v["found"], false);
}

/// Every file under `dir` that holds `needle`.
fn holding(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    crate::common::files_below(dir)
        .into_iter()
        .filter(|f| std::fs::read(f).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)))
        .collect()
}

/// The pack files of a store, with their lengths.
fn packs_of(store: &std::path::Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(store.join("packs"))
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".idx"))
        .map(|e| {
            let len = e.metadata().unwrap().len();
            (e.file_name().into_string().unwrap(), len)
        })
        .collect();
    out.sort();
    out
}

/// gc rewrites a pack only once a quarter of it is dead: below that its dead records stay on
/// disk, found by no read (opened or closed) and flagged by no fsck; above it, or at a
/// purge, they leave every file.
#[test]
fn gc_rewrites_a_pack_once_a_quarter_of_it_is_dead_and_purge_erases_all() {
    let f = Fixture::new();
    let lines = |prefix: &str, n: usize, word: &str| -> String {
        (0..n)
            .map(|i| {
                serde_json::json!({"key": format!("{prefix}.k{i:04}"), "namespace": "default",
                    "content": format!("{word} {i} with enough text to weigh something")})
                .to_string()
                    + "\n"
            })
            .collect()
    };
    let file = f.store.with_extension("jsonl");
    std::fs::write(&file, lines("main", 300, "kept")).unwrap();
    f.ok(&["import", file.to_str().unwrap()]);

    // A small dead share: one branch's commit, deleted.
    let tmp = f.ok(&[
        "remember",
        "the old plan ZZ-FIRST-SECRET-ZZ",
        "-p",
        "tmp.secret",
        "--branch",
        "tmp",
    ]);
    let tmp_commit = tmp["commit_hash"].as_str().unwrap().to_string();
    f.ok(&["branch", "-D", "tmp"]);
    let before = packs_of(&f.store);
    let g = f.ok(&["gc"]);
    assert!(g["objects_removed"].as_u64().unwrap() >= 3, "{g}");
    assert_eq!(
        packs_of(&f.store),
        before,
        "no pack rewritten below the share"
    );
    assert!(!holding(&f.store.join("packs"), b"ZZ-FIRST-SECRET-ZZ").is_empty());
    assert_eq!(f.ok(&["fsck"])["clean"], true);
    // The removed commit is found by no read, with the store closed or opened.
    f.ok(&["status"]);
    assert!(f.store.join("cache/head").exists());
    assert_error(&f.run(true, &["log", &tmp_commit]), 2);
    assert_error(&f.run(true, &["log", &tmp_commit[..12]]), 2);
    assert_eq!(
        f.ok(&["get", "main.k0007"])["items"][0]["value"]["content"],
        "kept 7 with enough text to weigh something"
    );

    // A large dead share: a branch bigger than main, deleted. Its pack is rewritten, and
    // with it the dead records gc left before.
    std::fs::write(&file, lines("big", 600, "dropped")).unwrap();
    f.ok(&["import", file.to_str().unwrap(), "--branch", "big"]);
    f.ok(&["branch", "-D", "big"]);
    let before = packs_of(&f.store);
    f.ok(&["gc"]);
    let after = packs_of(&f.store);
    assert!(
        before.iter().all(|p| !after.contains(p)),
        "{before:?} -> {after:?}"
    );
    assert!(holding(&f.store.join("packs"), b"dropped 5").is_empty());
    assert!(holding(&f.store.join("packs"), b"ZZ-FIRST-SECRET-ZZ").is_empty());
    assert_eq!(f.ok(&["fsck"])["clean"], true);

    // Purge erases whatever gc left, whatever the share.
    f.ok(&[
        "remember",
        "ZZ-SECOND-SECRET-ZZ",
        "-p",
        "tmp.other",
        "--branch",
        "tmp2",
    ]);
    f.ok(&["branch", "-D", "tmp2"]);
    let before = packs_of(&f.store);
    f.ok(&["gc"]);
    assert_eq!(packs_of(&f.store), before);
    assert!(!holding(&f.store.join("packs"), b"ZZ-SECOND-SECRET-ZZ").is_empty());
    f.ok(&["forget", "main.k0001", "--purge"]);
    assert_eq!(
        holding(&f.store, b"ZZ-SECOND-SECRET-ZZ"),
        Vec::<std::path::PathBuf>::new()
    );
    assert_eq!(
        holding(&f.store, b"kept 1 with"),
        Vec::<std::path::PathBuf>::new()
    );
    assert_eq!(f.ok(&["fsck"])["clean"], true);
    assert_eq!(
        f.ok(&["get", "main.k0002"])["items"][0]["value"]["content"],
        "kept 2 with enough text to weigh something"
    );
}

/// `forget --purge` cannot be undone: `--dry-run` lists the commits and refs it would
/// rewrite and changes nothing; on a terminal it asks first (a pseudo-terminal made by
/// util-linux's `script`), and only `y`/`yes` goes ahead; without a terminal, or with
/// `--yes`, it is not asked.
#[test]
fn purge_previews_and_asks_on_a_terminal() {
    let f = Fixture::new();
    f.ok(&["remember", "token abc", "-p", "secrets.t"]);
    f.ok(&["remember", "other", "-p", "a.b"]);
    f.ok(&["branch", "side"]);
    f.ok(&["forget", "secrets.t"]);
    let heads = |f: &Fixture| f.ok(&["log"])["commits"].clone();
    let before = heads(&f);
    let v = f.ok(&["forget", "secrets.t", "--purge", "--dry-run"]);
    let p = &v["would_purge"];
    assert_eq!(p["commits_with_key"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(p["commits_rewritten"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(
        p["refs"],
        serde_json::json!(["refs/heads/main", "refs/heads/side"])
    );
    assert_eq!(heads(&f), before, "a dry run changes nothing");
    let o = f.run(false, &["forget", "secrets.t", "--purge", "--dry-run"]);
    assert!(o.stdout.contains("holds the key") && o.stdout.contains("ref refs/heads/side"));
    assert_error(&f.run(true, &["forget", "secrets.t", "--dry-run"]), 2);

    // On a terminal: "n" keeps everything, "y" purges.
    let on_terminal = |answer: &str| {
        let line = format!(
            "{} -s {} forget secrets.t --purge",
            env!("CARGO_BIN_EXE_memoir"),
            f.s()
        );
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &line, "/dev/null"])
            .env("MEMOIR_NOW", super::NOW)
            .env("MEMOIR_AUTHOR", crate::common::AUTHOR)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().expect("util-linux script runs");
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(answer.as_bytes()).unwrap();
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, out) = on_terminal("n\n");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("rewrites 3 commits and moves 2 refs"), "{out}");
    assert!(out.contains("purge cancelled; nothing changed"), "{out}");
    assert_eq!(heads(&f), before);
    let (code, out) = on_terminal("yes\n");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Purged secrets.t"), "{out}");
    assert_ne!(heads(&f), before);
    let v = f.ok(&["forget", "secrets.t", "--purge", "--dry-run"]);
    assert_eq!(v["would_purge"]["commits_with_key"], serde_json::json!([]));
}
