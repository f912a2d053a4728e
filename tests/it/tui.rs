//! `memoir tui` driven in a real pseudo-terminal (tmux): keys in, screen text out. Opens a
//! store, walks the tree to a memory, reads its blame, reads `HEAD~3` and sees the older
//! value, reads a commit's patch and a search, and quits. Skips without tmux.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{cli, new_store, on_path, require, AUTHOR};

/// A tmux server of the test's own (its socket in a temporary directory).
struct Tmux {
    program: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.program)
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", self.dir.path())
            .args(["-L", "memoir-tui-test", "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let o = self.run(&["send-keys", "-t", "tui", k]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            // One key at a time, so an Escape is never read with the next key as Alt+key.
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    }

    /// The screen once it shows every one of `texts` (fails with the screen after 20 s).
    fn wait_for(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the screen never showed {texts:?}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "tui"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn remember(s: &Path, content: &str, path: &str) -> String {
    let (code, v) = cli(s, &["remember", content, "-p", path, "--replace"]);
    assert_eq!(code, 0, "{v}");
    v["commit_hash"].as_str().unwrap()[..8].to_string()
}

#[test]
fn walks_the_tree_reads_blame_and_the_past_then_quits() {
    let Some(program) = require(on_path(&["tmux"]), "no tmux on PATH (apt-get install tmux)")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    remember(&s, "the editor is vim", "prefs.editor");
    remember(&s, "likes rust", "prefs.lang.rust");
    remember(&s, "the editor is emacs", "prefs.editor");
    remember(&s, "postgres 16", "infra.db");
    let head = remember(&s, "the editor is helix", "prefs.editor");

    let tmux = Tmux {
        program,
        dir: tempfile::tempdir().unwrap(),
    };
    let bin = env!("CARGO_BIN_EXE_memoir");
    let o = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "120",
        "-y",
        "40",
        "env",
        &format!("MEMOIR_AUTHOR={AUTHOR}"),
        "NO_COLOR=1",
        bin,
        "-s",
        s.to_str().unwrap(),
        "tui",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The top of the tree, with exact counts.
    let top = tmux.wait_for(&["Tree default:", "3 memories", "infra", "prefs"]);
    let prefs = top.lines().find(|l| l.contains("prefs")).unwrap();
    assert!(prefs.contains(" 2 "), "{top}");
    // Down to prefs, open it, open the editor's memory.
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for(&["Tree default:prefs", "editor", "lang"]);
    tmux.keys(&["Enter"]);
    let mem = tmux.wait_for(&[
        "Memory default:prefs.editor",
        "the editor is helix",
        "Blame",
    ]);
    // The blame names the commit that wrote the line; the history lists all three writes.
    let line = mem
        .lines()
        .find(|l| l.contains("│ the editor is helix"))
        .unwrap_or_else(|| panic!("no blame line:\n{mem}"));
    assert!(line.contains(&head), "{line}");
    assert!(line.contains("Tester"), "{line}");
    assert_eq!(
        mem.matches("Store prefs.editor in default").count(),
        3,
        "{mem}"
    );

    // Read HEAD~3: the editor was vim then, and the header says it is the past.
    tmux.keys(&["r", "H", "E", "A", "D", "~", "3", "Enter"]);
    let past = tmux.wait_for(&["at HEAD~3", "the editor is vim"]);
    assert!(!past.contains("helix"), "{past}");
    // An unknown revision is refused on the status line; the past stays.
    tmux.keys(&[
        "r", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace",
    ]);
    tmux.keys(&["n", "o", "p", "e", "Enter"]);
    tmux.wait_for(&["unknown revision 'nope'", "at HEAD~3", "the editor is vim"]);

    // The log at HEAD~3 and its newest commit's patch.
    tmux.keys(&["2"]);
    tmux.wait_for(&["Log — 3 commits"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for(&["Patch", "+ default:prefs.lang.rust", "+likes rust"]);

    // Back to HEAD, search.
    tmux.keys(&["H", "/", "h", "e", "l", "i", "x", "Enter"]);
    tmux.wait_for(&["Search “helix” — 1 hit", "default:prefs.editor"]);

    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.alive() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still running after q:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
