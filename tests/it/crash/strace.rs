//! `strace` as the fault injector: finding it, counting a command's write, sync and rename
//! calls, choosing the crash points, and running the command with a fault at one of them.
//!
//! strace counts the calls it injects into per system call and per thread ("Accounting of
//! syscalls that are subject to injection is done per syscall and per tracee", strace(1)), so
//! `-f -e inject=write,pwrite64:when=N` does not stop the Nth write of the process: it stops
//! the first thread that makes its Nth `write` or its Nth `pwrite64`, and a call of the main
//! thread is never reached once another thread (sled's I/O pool, the async runtime's workers)
//! has made as many calls of its name. So a crash point is one system call name and one N,
//! counted in one of two ways ([`Threads`]):
//!
//! - in the main thread alone (strace without `-f`; the other threads run untraced): every
//!   call of the main thread is a crash point, exactly (packs, the ref log, the caches,
//!   sled's snapshot and `fsync`s, renames);
//! - on one file, in every thread (`-f -P FILE`): a call of another thread on a file (sled's
//!   log writes and `sync_file_range`s, a remote's files) is a crash point when, in the run
//!   without a fault, it was the first to be a thread's Nth call of its name on that file.
//!   Other threads' calls on an eventfd or a pipe (the async runtime's wake-ups: no disk
//!   behind them, and told ENOSPC they hang), or on a file named after the process id, are
//!   not crash points.
//!
//! The test prints, per class, how many calls the command made and how many crash points that
//! gives. ENOSPC is injected where a disk could report it (a file, a rename, a link), SIGKILL
//! everywhere. (`--seccomp-bpf`, which would stop the tracee only at the traced calls, is not
//! used: with it strace 6.1 injects at `when=1` only.)

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{exec, Run};
use crate::common::{on_path, require};

/// The kinds of system calls faults are injected into, one kind at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Writes,
    Syncs,
    Renames,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Writes, Class::Syncs, Class::Renames];

    /// The system calls of the class.
    pub fn calls(self) -> &'static [&'static str] {
        match self {
            Class::Writes => &["write", "pwrite64", "writev", "pwritev"],
            Class::Syncs => &["fsync", "fdatasync", "sync_file_range"],
            // A directory remote publishes a branch's version with a hard link (put if
            // absent), the way a rename publishes a file.
            Class::Renames => &["rename", "renameat", "renameat2", "link", "linkat"],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::Writes => "writes",
            Class::Syncs => "syncs",
            Class::Renames => "renames",
        }
    }
}

/// What happens at the crash point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// SIGKILL on entry: the call never runs, nor anything after it.
    Kill,
    /// The call fails with ENOSPC without running; the process carries on.
    Enospc,
}

impl Fault {
    pub const ALL: [Fault; 2] = [Fault::Kill, Fault::Enospc];

    pub fn name(self) -> &'static str {
        match self {
            Fault::Kill => "kill",
            Fault::Enospc => "ENOSPC",
        }
    }

    fn action(self) -> &'static str {
        match self {
            Fault::Kill => "signal=KILL",
            Fault::Enospc => "error=ENOSPC",
        }
    }
}

/// Which threads a crash point counts the calls of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Threads {
    /// The main thread alone (strace without `-f`): exactly its `n`th call of the name.
    Main,
    /// Every thread, on the point's file alone (`-f -P`): the `n`th call of the name on it
    /// of the first thread to make that many.
    Any,
}

/// One crash point: the `n`th call of `call` (see [`Threads`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Point {
    pub class: Class,
    pub call: &'static str,
    pub n: usize,
    pub threads: Threads,
    /// What the call was on in the run without a fault: a file (relative to the directory
    /// the command ran in), or an eventfd, a pipe, a socket.
    pub target: String,
}

impl Point {
    /// Whether ENOSPC is a fault the call can meet: a write or sync of a file, or a rename.
    /// (An eventfd or a pipe never reports a full disk; the async runtime's wake-ups hang
    /// when told so.)
    pub fn on_a_file(&self) -> bool {
        !self.target.contains(":[")
    }
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (class, call, n, on) = (self.class.name(), self.call, self.n, &self.target);
        match self.threads {
            Threads::Main => write!(f, "{class} {call}#{n} ({on})"),
            Threads::Any => write!(f, "{class} {call}#{n} on {on} of any thread"),
        }
    }
}

/// Every system call name the tests trace, each marked `?` so that strace accepts a name the
/// architecture lacks (aarch64 has no `rename`).
fn traced() -> String {
    Class::ALL
        .iter()
        .flat_map(|c| c.calls())
        .map(|c| format!("?{c}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// strace from `PATH`, once it has traced a run here; `None` (a skip, see
/// `crate::common::require`) when it is missing or cannot trace (no ptrace).
pub fn strace() -> Option<PathBuf> {
    let strace = require(
        on_path(&["strace"]),
        "no strace on PATH; the crash-point tests inject faults with it (apt-get install strace)",
    )?;
    let probe = exec(
        Path::new("/"),
        &strace,
        &[
            "-f".into(),
            "-o".into(),
            "/dev/null".into(),
            "--".into(),
            env!("CARGO_BIN_EXE_memoir").into(),
            "--version".into(),
        ],
    );
    let why = format!(
        "{} cannot trace here (is ptrace allowed?): {}",
        strace.display(),
        probe.stderr.lines().next().unwrap_or_default()
    );
    require((probe.code == Some(0)).then_some(strace), &why)
}

/// One traced call.
#[derive(Debug)]
struct Call {
    thread: u32,
    name: String,
    /// How many calls of the name its thread had made, this one included.
    n: usize,
    /// How many calls of the name its thread had made on `target`, this one included.
    n_on_target: usize,
    /// Its file descriptor's path (`-y`), or the first path a rename or link names; `dir/`
    /// taken off.
    target: String,
}

/// The calls a command made, in order, from strace's `-f -y -o` output.
#[derive(Debug, Default)]
pub struct Counts {
    calls: Vec<Call>,
    /// The process's own thread (the one that ran `execve`).
    main: u32,
}

impl Counts {
    fn parse(trace: &str, dir: &str) -> Counts {
        let mut counts = Counts::default();
        let mut seen: BTreeMap<(u32, String, String), usize> = BTreeMap::new();
        for line in trace.lines() {
            let Some((thread, rest)) = line.split_once(' ') else {
                continue;
            };
            let Ok(thread) = thread.parse::<u32>() else {
                continue;
            };
            // "<... pwrite64 resumed>" ends a call counted where it began; "+++ exited" ends
            // a thread.
            let Some((name, args)) = rest.trim_start().split_once('(') else {
                continue;
            };
            if name.starts_with('<') || name.contains(' ') {
                continue;
            }
            if name == "execve" {
                counts.main = thread;
                continue;
            }
            // `5</dir/s/packs/pack-00000001>, "data"...` or
            // `AT_FDCWD</dir>, "/dir/remote/refs/main/0002#1", ...`
            let target = if Class::Renames.calls().contains(&name) {
                args.split('"').nth(1)
            } else {
                args.split_once('<').and_then(|(_, t)| t.split('>').next())
            };
            let target = target.unwrap_or("?");
            let target = target
                .strip_prefix(dir)
                .map_or(target, |t| t.trim_start_matches('/'));
            let mut count = |t: &str| {
                let n = seen
                    .entry((thread, name.to_string(), t.to_string()))
                    .or_insert(0);
                *n += 1;
                *n
            };
            let n = count("");
            let n_on_target = count(target);
            counts.calls.push(Call {
                thread,
                name: name.to_string(),
                n,
                n_on_target,
                target: target.to_string(),
            });
        }
        counts
    }

    /// Calls of the class made, by every thread.
    pub fn total(&self, class: Class) -> usize {
        self.calls
            .iter()
            .filter(|c| class.calls().contains(&c.name.as_str()))
            .count()
    }

    /// Every crash point of the class, in the order of the calls: each call of the main
    /// thread, then each call of another thread on a file that was the first to be a
    /// thread's `n`th call of its name on that file.
    pub fn points(&self, class: Class) -> Vec<Point> {
        let mut main = Vec::new();
        let mut others = Vec::new();
        let mut reached = std::collections::BTreeSet::new();
        let pid = format!(".{}", self.main);
        for c in &self.calls {
            let Some(&call) = class.calls().iter().find(|&&k| k == c.name) else {
                continue;
            };
            let first = reached.insert((call, &c.target, c.n_on_target));
            let point = |threads, n| Point {
                class,
                call,
                n,
                threads,
                target: c.target.clone(),
            };
            if c.thread == self.main {
                main.push(point(Threads::Main, c.n));
            } else if first && !c.target.contains(":[") && !c.target.contains(&pid) {
                others.push(point(Threads::Any, c.n_on_target));
            }
        }
        main.extend(others);
        main
    }
}

/// At most `cap` (at least 9) of `points`: the first and last four and the rest spread
/// evenly between them (`None`: all of them).
pub fn spread(points: Vec<Point>, cap: Option<usize>) -> Vec<Point> {
    let Some(cap) = cap.filter(|&c| points.len() > c) else {
        return points;
    };
    let len = points.len();
    let slots = cap.max(9) - 8;
    // len - 8 > slots, so the spread indices are distinct and lie in 4..len - 4.
    let keep = (0..4)
        .chain((0..slots).map(|i| 4 + i * (len - 8) / slots))
        .chain(len - 4..len);
    keep.map(|i| points[i].clone()).collect()
}

/// `memoir ARGS` in `dir` traced by strace (no fault): its run and the calls it made.
pub fn count(strace: &Path, dir: &Path, args: &[String]) -> (Run, Counts) {
    let trace = dir.join("..").join(format!(
        "trace-{}.txt",
        dir.file_name().unwrap().to_string_lossy()
    ));
    let mut a: Vec<OsString> = vec![
        "-f".into(),
        "-y".into(),
        "-o".into(),
        trace.clone().into(),
        "-e".into(),
        format!("trace=execve,{}", traced()).into(),
        "--".into(),
    ];
    a.extend(super::memoir_args(args));
    let run = exec(dir, strace, &a);
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let _ = std::fs::remove_file(&trace);
    (run, Counts::parse(&text, dir.to_str().unwrap()))
}

/// `memoir ARGS` in `dir` with `fault` at `point`.
pub fn inject(strace: &Path, dir: &Path, args: &[String], point: &Point, fault: Fault) -> Run {
    let mut a: Vec<OsString> = match point.threads {
        Threads::Main => vec![],
        Threads::Any => vec!["-f".into(), "-P".into(), dir.join(&point.target).into()],
    };
    a.extend([
        "-o".into(),
        "/dev/null".into(),
        "-e".into(),
        format!("trace={}", point.call).into(),
        "-e".into(),
        format!("inject={}:{}:when={}", point.call, fault.action(), point.n).into(),
        "--".into(),
    ]);
    a.extend(super::memoir_args(args));
    exec(dir, strace, &a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(n: usize) -> Vec<Point> {
        (1..=n)
            .map(|n| Point {
                class: Class::Writes,
                call: "write",
                n,
                threads: Threads::Main,
                target: "s/reflog".into(),
            })
            .collect()
    }

    #[test]
    fn spread_keeps_the_ends_and_at_most_the_cap() {
        assert_eq!(spread(points(30), Some(40)).len(), 30);
        assert_eq!(spread(points(30), None).len(), 30);
        for len in [41, 50, 97, 400] {
            let got: Vec<usize> = spread(points(len), Some(40)).iter().map(|p| p.n).collect();
            assert_eq!(got.len(), 40, "{len}: {got:?}");
            assert!(got.windows(2).all(|w| w[0] < w[1]), "{len}: {got:?}");
            assert_eq!(&got[..4], &[1, 2, 3, 4]);
            assert_eq!(&got[got.len() - 4..], &[len - 3, len - 2, len - 1, len]);
        }
    }

    #[test]
    fn every_main_call_and_the_first_nth_on_a_file_of_the_others_are_points() {
        let c = Counts::parse(
            "10 execve(\"/bin/memoir\", [\"memoir\"], 0x1 /* 2 vars */) = 0\n\
             10 pwrite64(4</d/s/db/db>, \"\", 9, 0) = 9\n\
             10 write(1</d/out>, \"x\", 1) = 1\n\
             11 pwrite64(4</d/s/db/db>, \"\"..., 3, 0 <unfinished ...>\n\
             10 pwrite64(5</d/s/packs/pack-00000001>, \"\", 2, 0) = 2\n\
             11 <... pwrite64 resumed>) = 3\n\
             12 write(7<anon_inode:[eventfd]>, \"\\1\", 8) = 8\n\
             12 write(7<anon_inode:[eventfd]>, \"\\1\", 8) = 8\n\
             11 pwrite64(4</d/s/db/db>, \"\", 3, 3) = 3\n\
             13 pwrite64(4</d/s/db/db>, \"\", 3, 6) = 3\n\
             13 pwrite64(4</d/s/db/db>, \"\", 3, 9) = 3\n\
             13 pwrite64(4</d/s/db/db>, \"\", 3, 9) = 3\n\
             10 rename(\"/d/s/cache/head.tmp.10.0\", \"/d/s/cache/head\") = 0\n\
             12 rename(\"/d/s/cache/x.tmp.10.1\", \"/d/s/cache/x\") = 0\n\
             14 linkat(AT_FDCWD</d>, \"/d/remote/refs/main/0002#1\", AT_FDCWD</d>, \"/d/r\", 0) = 0\n\
             10 +++ exited with 0 +++\n",
            "/d",
        );
        assert_eq!(c.total(Class::Writes), 10);
        let got: Vec<String> = Class::ALL
            .iter()
            .flat_map(|&k| c.points(k))
            .map(|p| format!("{p} {}", p.on_a_file()))
            .collect();
        assert_eq!(
            got,
            [
                "writes pwrite64#1 (s/db/db) true",
                "writes write#1 (out) true",
                "writes pwrite64#2 (s/packs/pack-00000001) true",
                "writes pwrite64#2 on s/db/db of any thread true",
                "writes pwrite64#3 on s/db/db of any thread true",
                "renames rename#1 (s/cache/head.tmp.10.0) true",
                "renames linkat#1 on remote/refs/main/0002#1 of any thread true",
            ]
        );
    }
}
