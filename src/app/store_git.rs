//! The git repository in a store's directory (`<store>/.git`). The reference plugin takes a
//! directory with `.git` for a store that exists, keeps its own state files there, and asks
//! `git` how far each memory branch is ahead of `main` (`git rev-list --count main..B`) and
//! when it last changed (`git log -1 --format=%ct B`). memoir makes the repository when it
//! creates a store (for a store made before, on its next write) and keeps in it a *mirror*
//! of the memory branches, derived from the store and rebuilt whenever branches are listed.
//! The history every branch shares stands as one root commit; each commit after it is one
//! git commit of the empty tree with the same parents and time, naming the memoir commit in
//! its message. So `A..B` counts in the mirror are memoir's, and a store of one branch has a
//! mirror of one commit. Everything memoir reads comes from the store; `fsck` ignores `.git`.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::object::ObjectId;
use crate::repo::ReachedCommit;

/// The id git gives the empty tree, which every mirrored commit has.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Brings the mirror in `store/.git` up to date (see the module) for `branches` (names and
/// tips): `shared` is the time of the newest commit all of them reach, `past` the commits
/// after it (as [`crate::repo::Repo::past_shared`] gives them). Objects are written once,
/// each whole and renamed into place, and refs the same way; refs of branches that are gone
/// are removed. Nothing is synced: the mirror is rebuilt from the store.
pub(crate) fn update_mirror(
    store: &Path,
    branches: &[(String, ObjectId)],
    shared: Option<i64>,
    past: &[ReachedCommit],
) -> io::Result<()> {
    let git = store.join(".git");
    write_object(&git, "tree", b"")?;
    // The shared history: one root commit at the time of its newest commit.
    let root = match shared {
        Some(time) => Some(write_commit(
            &git,
            &[],
            time,
            "the history every branch shares",
        )?),
        None => None,
    };
    let mut shas: HashMap<ObjectId, String> = HashMap::new();
    for c in past {
        let mut parents: Vec<String> = Vec::new();
        for p in &c.parents {
            if let Some(sha) = shas.get(p).or(root.as_ref()) {
                if !parents.contains(sha) {
                    parents.push(sha.clone());
                }
            }
        }
        let sha = write_commit(
            &git,
            &parents,
            c.time,
            &format!("memoir commit {}", c.id.to_hex()),
        )?;
        shas.insert(c.id, sha);
    }
    let mut names: HashSet<String> = HashSet::new();
    for (name, tip) in branches {
        if let Some(sha) = shas.get(tip).or(root.as_ref()) {
            write_ref(&git, name, sha)?;
            names.insert(name.clone());
        }
    }
    remove_other_refs(&git.join("refs/heads"), "", &names)
}

/// Records that `branch` was promoted at `now` (unix seconds), where the reference plugin
/// reads it: `.git/plugin-synced-branches/<branch>`, a branch it then stops offering to
/// promote until the branch changes again. Nothing is written for a store without `.git`.
pub(crate) fn mark_synced(store: &Path, branch: &str, now: i64) -> io::Result<()> {
    let git = store.join(".git");
    if !git.is_dir() {
        return Ok(());
    }
    let path = git.join("plugin-synced-branches").join(branch);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    replace_file(&path, now.to_string().as_bytes())
}

/// Writes a git commit of the empty tree with `parents` at `time` and `message`; returns its
/// git id.
fn write_commit(git: &Path, parents: &[String], time: i64, message: &str) -> io::Result<String> {
    let mut body = format!("tree {EMPTY_TREE}\n");
    for p in parents {
        body.push_str(&format!("parent {p}\n"));
    }
    body.push_str(&format!(
        "author memoir <memoir> {time} +0000\ncommitter memoir <memoir> {time} +0000\n\n{message}\n"
    ));
    write_object(git, "commit", body.as_bytes())
}

/// Writes a loose git object of `kind` holding `body` unless it is there; returns its id.
fn write_object(git: &Path, kind: &str, body: &[u8]) -> io::Result<String> {
    let mut raw = format!("{kind} {}\0", body.len()).into_bytes();
    raw.extend_from_slice(body);
    let sha = sha1_smol::Sha1::from(&raw).digest().to_string();
    let dir = git.join("objects").join(&sha[..2]);
    let path = dir.join(&sha[2..]);
    if path.is_file() {
        return Ok(sha);
    }
    fs::create_dir_all(&dir)?;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&raw)?;
    replace_file(&path, &z.finish()?)?;
    Ok(sha)
}

/// Points `refs/heads/<name>` at `sha` unless it is there already.
fn write_ref(git: &Path, name: &str, sha: &str) -> io::Result<()> {
    let path = git.join("refs/heads").join(name);
    let text = format!("{sha}\n");
    if fs::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    replace_file(&path, text.as_bytes())
}

/// Writes `path` whole: beside it first, then renamed over it.
fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = PathBuf::from(path);
    tmp.set_file_name(format!(
        ".tmp-{}-{}",
        std::process::id(),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("x")
    ));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Removes the refs below `dir` (named from `prefix`) that `keep` does not name.
fn remove_other_refs(dir: &Path, prefix: &str, keep: &HashSet<String>) -> io::Result<()> {
    let Ok(list) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in list {
        let e = e?;
        let Some(file) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let name = format!("{prefix}{file}");
        if e.file_type()?.is_dir() {
            remove_other_refs(&e.path(), &format!("{name}/"), keep)?;
            let _ = fs::remove_dir(e.path());
        } else if !keep.contains(&name) {
            fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Makes `store/.git` an empty, valid git repository (HEAD on `main`, no objects) unless it
/// exists. Returns whether it made one.
pub fn ensure_store_git(store: &Path) -> io::Result<bool> {
    let git = store.join(".git");
    if fs::symlink_metadata(&git).is_ok() {
        return Ok(false);
    }
    // Built beside and renamed into place, so a reader never sees half of one.
    let tmp = store.join(format!(".git.tmp.{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    for dir in ["objects/info", "objects/pack", "refs/heads", "refs/tags"] {
        fs::create_dir_all(tmp.join(dir))?;
    }
    fs::write(tmp.join("HEAD"), "ref: refs/heads/main\n")?;
    fs::write(
        tmp.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
    )?;
    fs::write(
        tmp.join("description"),
        "Not a code repository: the memoir store's directory, kept for host plugins.\n",
    )?;
    match fs::rename(&tmp, &git) {
        Ok(()) => Ok(true),
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            // Another process made it meanwhile.
            if git.is_dir() {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_an_empty_repository_once() {
        let d = tempfile::tempdir().unwrap();
        assert!(ensure_store_git(d.path()).unwrap());
        assert!(!ensure_store_git(d.path()).unwrap());
        let head = fs::read_to_string(d.path().join(".git/HEAD")).unwrap();
        assert_eq!(head, "ref: refs/heads/main\n");
        assert!(d.path().join(".git/objects").is_dir() && d.path().join(".git/refs").is_dir());
    }
}
