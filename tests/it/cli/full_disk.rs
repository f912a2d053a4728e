//! A full disk: a write that does not fit fails with a clear error and stores nothing, and
//! every read still answers (sled writes as it opens its database, so a full disk is read
//! from a copy of the database made elsewhere); once space is freed, writes work again.

use std::process::Command;

use crate::common::{on_path, require, AUTHOR};

/// Runs `script` as root of a private user and mount namespace (`unshare -rm`), where it
/// may mount a small file system; stdout and stderr.
fn in_namespace(script: &str) -> Option<(String, String)> {
    let unshare = require(
        on_path(&["unshare"]),
        "needs util-linux's unshare to mount a small file system",
    )?;
    let probe = Command::new(&unshare)
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    require(
        probe.then_some(()),
        "needs user namespaces (`unshare -rm true` fails here)",
    )?;
    let o = Command::new(unshare)
        .args(["-rm", "sh", "-c", script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("MEMOIR_AUTHOR", AUTHOR)
        .env("MEMOIR_NOW", "1767225600")
        .output()
        .unwrap();
    Some((
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    ))
}

#[test]
fn reads_need_no_free_space_and_writes_resume_when_space_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"
set -u
M='{bin}'; D='{dir}/disk'
mkdir -p "$D" && mount -t tmpfs -o size=3m tmpfs "$D" || exit 90
cd "$D"
"$M" new s -q
for i in 1 2 3; do "$M" -s s remember "fact $i about the garden" -p notes.garden.f$i -q; done
"$M" -s s search garden -q > /dev/null
dd if=/dev/zero of=fill bs=64k 2>/dev/null
head -c 1500000 /dev/urandom | base64 > "{dir}/big.txt"
"$M" -s s remember - -p notes.big < "{dir}/big.txt" -q; echo "big=$?"
"$M" -s s remember "one more small fact" -p notes.small -q; echo "small=$?"
"$M" -s s search garden -q > /dev/null; echo "search=$?"
"$M" -s s log -q > /dev/null; echo "log=$?"
"$M" -s s export > /dev/null; echo "export=$?"
"$M" -s s status -q > /dev/null; echo "status=$?"
"$M" -s s fsck -q; echo "fsck=$?"
"$M" -s s get notes.garden.f2 -q; echo "get=$?"
"$M" -s s get notes.big -q > /dev/null; echo "get-big=$?"
rm fill
"$M" -s s remember "after space was freed" -p notes.later -q; echo "later=$?"
"$M" -s s fsck -q; echo "fsck-after=$?"
"$M" -s s get notes.later -q; echo "get-later=$?"
"#,
        bin = env!("CARGO_BIN_EXE_memoir"),
        dir = dir.path().display(),
    );
    let Some((out, err)) = in_namespace(&script) else {
        return;
    };
    let code = |name: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name}= line in {out:?} / {err:?}"))
            .to_string()
    };
    // The write that does not fit is refused as a plain error, never a crash or damage.
    assert_eq!(code("big"), "1", "{out}\n{err}");
    assert!(
        err.contains("No space left on device") || err.contains("no space left on the disk"),
        "{err}"
    );
    // A small write may still fit in space the database set aside; either way every read
    // answers, and what was acknowledged is there.
    let small = code("small");
    assert!(small == "0" || small == "1", "{out}\n{err}");
    for read in ["search", "log", "export", "status", "fsck", "get"] {
        assert_eq!(code(read), "0", "{read}: {out}\n{err}");
    }
    assert!(out.contains("fact 2 about the garden"), "{out}");
    assert_eq!(
        code("get-big"),
        "2",
        "the refused write stored nothing: {out}"
    );
    assert!(!err.contains("panicked"), "{err}");
    for after in ["later", "fsck-after", "get-later"] {
        assert_eq!(code(after), "0", "{after}: {out}\n{err}");
    }
    assert!(out.contains("after space was freed"), "{out}");
}
