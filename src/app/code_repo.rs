//! The code repository a store serves: a git working tree, read from its files (no `git`
//! process for what is asked on every hook: where the repository is, its current branch,
//! whether a branch exists), and through `git` for ancestry (whether a branch was merged).
//!
//! Repo mode keys a store on the repository: `~/.memoir/<slug>`, the slug being the main
//! worktree's absolute path with `/` and `.` written `-` (`/home/ada/app` gives
//! `-home-ada-app`), so every linked worktree of one repository shares one store, and the
//! reference plugin's hooks find the same one.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::store::FORMAT_FILE;

/// A git working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRepo {
    /// The top of the working tree the search started in.
    pub top: PathBuf,
    /// Its git directory (`.git`, or `.git/worktrees/NAME` of a linked worktree).
    pub git_dir: PathBuf,
    /// The repository's shared git directory (refs, packed refs).
    pub common_dir: PathBuf,
    /// The main worktree: the top of the working tree that owns `common_dir`.
    pub main_worktree: PathBuf,
}

impl CodeRepo {
    /// The working tree `start` is in, if any: the nearest directory at or above it holding
    /// `.git` (a directory, or a file `gitdir: PATH` of a linked worktree or submodule). A
    /// memoir store is not in a code repository, even one around it: a store's own `.git`
    /// (made for the reference plugin) is none, and a store kept inside a project is the
    /// store, not the project's.
    pub fn find(start: &Path) -> Option<CodeRepo> {
        let start = crate::app::absolute(start);
        for dir in start.ancestors() {
            if dir.join(FORMAT_FILE).is_file() {
                return None;
            }
            let dot_git = dir.join(".git");
            let Ok(meta) = fs::metadata(&dot_git) else {
                continue;
            };
            let top = dir.to_path_buf();
            if meta.is_dir() {
                return Some(CodeRepo {
                    main_worktree: top.clone(),
                    top,
                    common_dir: dot_git.clone(),
                    git_dir: dot_git,
                });
            }
            let text = fs::read_to_string(&dot_git).ok()?;
            let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            let git_dir = crate::app::absolute(&dir.join(target));
            let common_dir = match fs::read_to_string(git_dir.join("commondir")) {
                Ok(c) => crate::app::absolute(&git_dir.join(c.trim())),
                Err(_) => git_dir.clone(),
            };
            // The main worktree is the directory holding the common `.git`; a submodule's
            // git directory (under `.git/modules/`) has no worktree of its own there.
            let main_worktree = match common_dir.file_name() {
                Some(n) if n == ".git" && git_dir != common_dir => common_dir
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| top.clone()),
                _ => top.clone(),
            };
            return Some(CodeRepo {
                top,
                git_dir,
                common_dir,
                main_worktree,
            });
        }
        None
    }

    /// The branch checked out (`None` when HEAD is detached or unreadable).
    pub fn current_branch(&self) -> Option<String> {
        let head = fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        head.trim()
            .strip_prefix("ref: refs/heads/")
            .map(str::to_string)
            .filter(|b| !b.is_empty())
    }

    /// Whether the repository has a local branch `name` (a loose ref or a packed one).
    pub fn has_branch(&self, name: &str) -> bool {
        if name.is_empty() || name.split('/').any(|s| s.is_empty() || s == "..") {
            return false;
        }
        if self.common_dir.join("refs/heads").join(name).is_file() {
            return true;
        }
        let wanted = format!("refs/heads/{name}");
        fs::read_to_string(self.common_dir.join("packed-refs")).is_ok_and(|packed| {
            packed
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
                .any(|l| l.split_whitespace().nth(1) == Some(wanted.as_str()))
        })
    }

    /// Whether branch `name` was merged into `into` with a merge commit: its tip is an
    /// ancestor of `into` but not on `into`'s first-parent line (a branch whose tip is an
    /// old commit of `into` itself was never worked on, and is not "merged"). `None` when
    /// `git` cannot tell (not installed, a branch missing).
    pub fn merged_into(&self, name: &str, into: &str) -> Option<bool> {
        let tip = self.git(&["rev-parse", "--verify", "-q", &format!("refs/heads/{name}")])?;
        let tip = tip.trim().to_string();
        let ancestor = Command::new("git")
            .arg("-C")
            .arg(&self.top)
            .args([
                "merge-base",
                "--is-ancestor",
                &tip,
                &format!("refs/heads/{into}"),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !ancestor.success() {
            return Some(false);
        }
        let line = self.git(&["rev-list", "--first-parent", &format!("refs/heads/{into}")])?;
        Some(!line.lines().any(|l| l.trim() == tip))
    }

    /// `git -C TOP ARGS...`'s standard output when it succeeds.
    fn git(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.top)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The slug of a project directory: its absolute path with `/` and `.` written `-`.
pub fn project_slug(dir: &Path) -> String {
    dir.to_string_lossy()
        .chars()
        .map(|c| if c == '/' || c == '.' { '-' } else { c })
        .collect()
}

/// The repo-mode store of a project directory: `HOME/.memoir/<slug>`.
pub fn project_store(home: &Path, project: &Path) -> PathBuf {
    home.join(".memoir").join(project_slug(project))
}

/// The repo-mode store for a process in `cwd`: that of the main worktree of the git
/// repository `cwd` is in, or `None` outside one (see [`CodeRepo::find`]).
pub fn repo_store(home: &Path, cwd: &Path) -> Option<PathBuf> {
    CodeRepo::find(cwd).map(|r| project_store(home, &r.main_worktree))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slug_writes_slashes_and_dots_as_dashes() {
        assert_eq!(project_slug(Path::new("/home/ada/app")), "-home-ada-app");
        assert_eq!(
            project_slug(Path::new("/Users/a/.claude-mem/s")),
            "-Users-a--claude-mem-s"
        );
        assert_eq!(
            project_store(Path::new("/h"), Path::new("/w/app")),
            PathBuf::from("/h/.memoir/-w-app")
        );
    }

    #[test]
    fn a_linked_worktree_shares_the_main_worktrees_store() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        let main = d.join("app");
        fs::create_dir_all(main.join(".git/worktrees/wt/")).unwrap();
        fs::create_dir_all(main.join(".git/refs/heads/feature")).unwrap();
        fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(main.join(".git/refs/heads/feature/x"), "0\n").unwrap();
        fs::write(main.join(".git/packed-refs"), "# x\nabc refs/heads/old\n").unwrap();
        let wt = d.join("wt");
        fs::create_dir_all(wt.join("src")).unwrap();
        let gd = main.join(".git/worktrees/wt");
        fs::write(wt.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
        fs::write(gd.join("commondir"), "../..\n").unwrap();
        fs::write(gd.join("HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        let r = CodeRepo::find(&wt.join("src")).unwrap();
        assert_eq!(r.top, absolute(&wt));
        assert_eq!(r.main_worktree, absolute(&main));
        assert_eq!(r.current_branch().as_deref(), Some("feature/x"));
        assert!(r.has_branch("feature/x") && r.has_branch("old"));
        assert!(!r.has_branch("gone") && !r.has_branch("../x"));
        let m = CodeRepo::find(&main).unwrap();
        assert_eq!(m.current_branch().as_deref(), Some("main"));
        // A store's own `.git` is no code repository, nor is one around a store.
        let inner = main.join("mem");
        fs::create_dir_all(&inner).unwrap();
        fs::write(inner.join(FORMAT_FILE), "memoir-store\n").unwrap();
        assert_eq!(CodeRepo::find(&inner), None);
        fs::write(main.join(FORMAT_FILE), "memoir-store\n").unwrap();
        assert_eq!(CodeRepo::find(&main), None);
    }

    fn absolute(p: &Path) -> PathBuf {
        crate::app::absolute(p)
    }
}
