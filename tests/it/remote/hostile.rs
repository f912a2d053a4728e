//! A hostile directory remote: files far larger than the format allows (sparse, so cheap on
//! disk) are refused with exit 5 before they are read, under a 1 GiB address-space limit
//! that reading one would pass; nothing local changes, and one unreadable branch does not
//! keep the others from being fetched.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{content, ok, remember, run};
use crate::common::{files_below, memoir, new_store, Out};

/// The address space memoir runs in here: a 3 GB read could not fit.
const LIMIT: u64 = 1 << 30;
/// A pack's name: the hash its index ends with.
const HASH: &str = "abababababababababababababababababababababababababababababababab";

/// Runs memoir on `store` (`--json`) with its address space limited to [`LIMIT`].
fn limited(store: &Path, args: &[&str]) -> Out {
    let mut c = memoir();
    c.arg("-s").arg(store).arg("--json").args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("run memoir").into()
}

/// As [`limited`], asserting exit 5 (a damaged remote) naming `says`.
fn refused(store: &Path, args: &[&str], says: &str) -> Value {
    let o = limited(store, args);
    assert_eq!(
        o.code, 5,
        "{args:?}: stdout {} stderr {}",
        o.stdout, o.stderr
    );
    let j = o.json();
    let error = j["error"].as_str().unwrap();
    assert!(error.contains(says), "{args:?}: {error}");
    assert!(!error.contains("  "), "no empty words: {error}");
    j
}

/// What a fetch could change in `store`: its packs (names and sizes), its ref log and its
/// remote-tracking branches.
fn local_state(store: &Path) -> (Vec<(PathBuf, u64)>, String, Value) {
    let packs = files_below(&store.join("packs"))
        .into_iter()
        .map(|f| {
            let len = f.metadata().unwrap().len();
            (f, len)
        })
        .collect();
    let reflog = std::fs::read_to_string(store.join("reflog")).unwrap();
    (packs, reflog, ok(store, &[], &["remote", "list"], 0))
}

/// Makes `path` a sparse file of `len` bytes beginning with `head`.
fn sparse(path: &Path, head: &[u8], len: u64) {
    let mut f = File::create(path).unwrap();
    f.write_all(head).unwrap();
    f.set_len(len).unwrap();
}

/// An index naming pack [`HASH`]: `count` claimed, the `entries` (id byte, offset,
/// length) written, and the file made `len` bytes long (sparse) with the hash at its end.
fn index(path: &Path, count: u32, entries: &[(u8, u64, u32)], len: u64) {
    let mut bytes = b"MEMRIDX1".to_vec();
    bytes.extend_from_slice(&count.to_le_bytes());
    for (id, offset, length) in entries {
        bytes.extend_from_slice(&[*id; 32]);
        bytes.extend_from_slice(&offset.to_le_bytes());
        bytes.extend_from_slice(&length.to_le_bytes());
    }
    sparse(path, &bytes, len);
    let mut f = OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(len - 32)).unwrap();
    let hash: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&HASH[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    f.write_all(&hash).unwrap();
}

/// Store `a` pushed two commits of `main` to a directory remote; `b` cloned the first.
struct World {
    dir: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
    remote: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote");
    let a = new_store(&dir.path().join("a"));
    remember(&a, "facts.one", "first fact");
    ok(
        &a,
        &[],
        &["remote", "add", "origin", remote.to_str().unwrap()],
        0,
    );
    ok(&a, &[], &["push"], 0);
    let b = dir.path().join("b");
    ok(
        dir.path(),
        &[],
        &["clone", remote.to_str().unwrap(), b.to_str().unwrap()],
        0,
    );
    remember(&a, "facts.two", "second fact");
    ok(&a, &[], &["push"], 0);
    World { dir, a, b, remote }
}

#[test]
fn files_larger_than_the_format_allows_are_refused_before_they_are_read() {
    let w = world();
    let r = &w.remote;
    let packs = r.join("packs");
    let marker = r.join("memoir-remote.json");
    let marker_len = marker.metadata().unwrap().len();
    let huge_version = r.join("refs/main/00000000000000000003");
    let pack = packs.join(format!("{HASH}.pack"));
    let idx = packs.join(format!("{HASH}.idx"));
    let entry = |len: u32| [(7u8, 48u64, len)];
    // Each case damages the remote, says what the refusal names, and undoes it.
    type Case<'a> = (&'a str, Box<dyn Fn(bool) + 'a>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "a 3 GB ref version",
            Box::new(|on| match on {
                true => sparse(&huge_version, b"{", 3 << 30),
                false => std::fs::remove_file(&huge_version).unwrap(),
            }),
            "too large",
        ),
        (
            "a 3 GB marker",
            Box::new(|on| {
                let f = OpenOptions::new().write(true).open(&marker).unwrap();
                f.set_len(if on { 3 << 30 } else { marker_len }).unwrap();
            }),
            "too large",
        ),
        (
            "an entry of 0xFFFFFFF0 bytes in a sparse 5 GiB pack",
            Box::new(|on| match on {
                true => {
                    sparse(&pack, b"MEMRPAK1", 5 << 30);
                    index(&idx, 1, &entry(0xFFFF_FFF0), 12 + 44 + 32);
                }
                false => {
                    std::fs::remove_file(&pack).unwrap();
                    std::fs::remove_file(&idx).unwrap();
                }
            }),
            "a pack is at most",
        ),
        (
            "an entry of 0xFFFFFFF0 bytes in a 100 MiB pack",
            Box::new(|on| match on {
                true => {
                    sparse(&pack, b"MEMRPAK1", 100 << 20);
                    index(&idx, 1, &entry(0xFFFF_FFF0), 12 + 44 + 32);
                }
                false => {
                    std::fs::remove_file(&pack).unwrap();
                    std::fs::remove_file(&idx).unwrap();
                }
            }),
            "an object has at most",
        ),
        (
            "an index of 40 M entries beside a small pack",
            Box::new(|on| match on {
                true => {
                    sparse(&pack, b"MEMRPAK1", 200);
                    index(&idx, 40_000_000, &[], 12 + 40_000_000 * 44 + 32);
                }
                false => {
                    std::fs::remove_file(&pack).unwrap();
                    std::fs::remove_file(&idx).unwrap();
                }
            }),
            "the index of a pack of 200 bytes is at most",
        ),
        (
            "an index claiming 40 M entries in a few bytes",
            Box::new(|on| match on {
                true => {
                    sparse(&pack, b"MEMRPAK1", 100 << 20);
                    index(&idx, 40_000_000, &entry(10), 12 + 44 + 32);
                }
                false => {
                    std::fs::remove_file(&pack).unwrap();
                    std::fs::remove_file(&idx).unwrap();
                }
            }),
            "more than a pack of",
        ),
    ];
    let before = local_state(&w.b);
    for (i, (what, damage, says)) in cases.iter().enumerate() {
        damage(true);
        refused(&w.b, &["fetch"], says);
        assert_eq!(local_state(&w.b), before, "{what}: fetch changed nothing");
        refused(&w.b, &["pull"], says);
        assert_eq!(local_state(&w.b), before, "{what}: pull changed nothing");
        let c = w.dir.path().join(format!("c{i}"));
        let url = w.remote.to_str().unwrap();
        refused(w.dir.path(), &["clone", url, c.to_str().unwrap()], says);
        assert_eq!(
            run(&c, &[], &["get", "facts.one"]).code,
            3,
            "{what}: no history"
        );
        damage(false);
    }
    assert_eq!(content(&w.b, "facts.two"), None);
    ok(&w.b, &[], &["pull"], 0);
    assert_eq!(content(&w.b, "facts.two").as_deref(), Some("second fact"));
    assert_eq!(ok(&w.b, &[], &["fsck"], 0)["clean"], true);
}

#[test]
fn one_unreadable_branch_does_not_keep_the_others_from_being_fetched() {
    let w = world();
    ok(&w.a, &[], &["branch", "side"], 0);
    ok(&w.a, &[], &["push", "origin", "side"], 0);
    ok(&w.b, &[], &["fetch"], 0);
    remember(&w.a, "facts.three", "third fact");
    ok(&w.a, &[], &["push"], 0);
    let side = w.remote.join("refs/side/00000000000000000002");
    sparse(&side, b"{", 3 << 30);
    let tips = |store: &Path| ok(store, &[], &["remote", "list"], 0)["remotes"][0].clone();
    let old = tips(&w.b);

    let j = refused(&w.b, &["fetch"], "branch 'side' of origin cannot be read");
    assert_eq!(j["branches"][0]["branch"], "main");
    assert_eq!(j["branches"][0]["status"], "updated");
    assert_eq!(j["unreadable"][0]["branch"], "side");
    assert_eq!(j["removed"], serde_json::json!([]));
    let now = tips(&w.b);
    assert_ne!(now["branches"][0], old["branches"][0], "origin/main moved");
    assert_eq!(
        now["branches"][1], old["branches"][1],
        "origin/side was kept"
    );
    assert_eq!(
        run(&w.b, &[], &["get", "--at", "origin/main", "facts.three"]).code,
        0
    );

    // Pulling the readable branch works; the unreadable one is refused.
    let pulled = limited(&w.b, &["pull"]);
    assert_eq!(pulled.code, 0, "{}", pulled.stdout);
    assert_eq!(content(&w.b, "facts.three").as_deref(), Some("third fact"));
    refused(&w.b, &["pull", "origin", "side"], "cannot be read");
    // A push of another branch goes ahead; of that one, and a gc of the remote, do not.
    ok(&w.a, &[], &["push"], 0);
    refused(&w.a, &["push", "origin", "side"], "too large");
    let files = files_below(&w.remote);
    refused(&w.a, &["gc", "--remote", "origin", "--grace", "0"], "side");
    assert_eq!(files_below(&w.remote), files, "gc removed nothing");
    // A clone takes the readable branches, and says which it could not.
    let c = w.dir.path().join("c");
    let url = w.remote.to_str().unwrap();
    refused(w.dir.path(), &["clone", url, c.to_str().unwrap()], "'side'");
    assert_eq!(content(&c, "facts.three").as_deref(), Some("third fact"));
}

#[test]
fn a_fifo_on_a_remote_is_refused_not_waited_on() {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    let w = world();
    let before = local_state(&w.b);
    let marker = w.remote.join("memoir-remote.json");
    std::fs::remove_file(&marker).unwrap();
    let path = std::ffi::CString::new(marker.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the file.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let mut child = memoir()
        .arg("-s")
        .arg(&w.b)
        .args(["--json", "fetch"])
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("fetch waits on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(out.contains("not a regular file"), "{out}");
    assert_eq!(local_state(&w.b), before);
}
