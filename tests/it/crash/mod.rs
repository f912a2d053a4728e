//! Crash points: every command that writes a store is run, as the real `memoir` binary, under
//! `strace` fault injection at its write, sync and rename system calls, one call at a time,
//! each call either killing the process (SIGKILL before the call runs) or failing with
//! ENOSPC. After each fault, on a fresh copy of the same prepared store, the test proves:
//!
//! 1. the next ordinary commands (`status`, `get`) succeed with no manual step, on a store
//!    with its history;
//! 2. `fsck` finds the store clean;
//! 3. every memory acknowledged before the command reads back with its content, and so does
//!    every one the command wrote if it exited 0;
//! 4. nothing is half done: on every branch compared, the memories are those before the
//!    command or those after it (after it, if it exited 0), and what a command that exited 0
//!    erased is gone from the store's files;
//! 5. the ref log agrees with the database: the store rebuilt from the ref log and the packs
//!    alone (`db/` removed, `fsck --repair`) shows what it showed, but for a move the
//!    database made and the log had not yet recorded when the command was cut short;
//! 6. a re-run finishes an interrupted `forget --purge`, `gc`, `push`, `fetch` or
//!    `fsck --repair` (the one command allowed to leave the damage it was repairing, exit 5,
//!    but never a store without history, for its re-run to repair), a pushed branch is on the
//!    remote as before or as pushed, and a new memory can be written.
//!
//! "Before" is the prepared store; "after" is the same command run under strace without a
//! fault, which also counts the calls that give the crash points (see `strace.rs` for what a
//! crash point is: strace counts per thread). Classes with more than 40 points are spread
//! over 40 (the first and last four kept); `MEMOIR_CRASH_POINTS_ALL=1` runs them all.
//! Without strace (or ptrace) the tests skip saying so (see `crate::common::require`).
//! `MEMOIR_CRASH_KEEP=DIR` keeps, under `DIR`, the prepared directory of a case and the copy
//! each failure left, to replay it by hand.

mod cases;
mod check;
mod ref_journal;
mod strace;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Seek};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use self::check::State;
use self::strace::{Class, Fault};

/// The author and clock of every run: commits and records come out the same each time.
const ENV: [(&str, &str); 2] = [
    ("MEMOIR_AUTHOR", "Tester <t@example.org>"),
    ("MEMOIR_NOW", "1767225600"),
];

/// A process that runs longer than this is stuck (a fault that hangs it is a finding).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Crash points per class and command, unless `MEMOIR_CRASH_POINTS_ALL=1`.
const CAP: usize = 40;

/// A finished process.
#[derive(Debug)]
pub struct Run {
    /// Its exit code; `None` when a signal ended it (the injected SIGKILL) or it hung.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub hung: bool,
}

impl Run {
    /// Stdout as one JSON value, if it is one.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.stdout).ok()
    }

    /// What it said went wrong: the JSON error, else the first line of stderr.
    pub fn error(&self) -> String {
        if let Some(e) = self
            .json()
            .and_then(|v| v["error"].as_str().map(str::to_string))
        {
            return e;
        }
        self.stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    }

    /// How it ended, in words: `exit 0`, `exit 5: <error>`, `killed`, `hung`.
    pub fn outcome(&self) -> String {
        match (self.code, self.hung) {
            (_, true) => format!("hung (killed after {} s)", TIMEOUT.as_secs()),
            (None, false) => "killed".to_string(),
            (Some(0), false) => "exit 0".to_string(),
            (Some(c), false) => format!("exit {c}: {}", self.error()),
        }
    }
}

/// Runs `program ARGS` in `dir` with the tests' environment, its output in files (no pipe to
/// fill), in a process group of its own that is killed whole if it hangs.
pub fn exec(dir: &Path, program: &Path, args: &[OsString]) -> Run {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(ENV)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || tx.send(child.wait().unwrap()).unwrap());
    let (status, hung) = match rx.recv_timeout(TIMEOUT) {
        Ok(s) => (s, false),
        Err(_) => {
            // SAFETY: kill(2) on the process group this function made; no memory involved.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            (rx.recv().unwrap(), true)
        }
    };
    waiter.join().unwrap();
    let read = |mut f: std::fs::File| {
        let mut s = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut s).unwrap();
        String::from_utf8_lossy(&s).into_owned()
    };
    Run {
        code: if hung { None } else { status.code() },
        stdout: read(out),
        stderr: read(err),
        hung,
    }
}

/// The memoir binary and its arguments for `memoir -s s --json ARGS`.
fn memoir_args(args: &[String]) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        env!("CARGO_BIN_EXE_memoir").into(),
        "-s".into(),
        "s".into(),
        "--json".into(),
    ];
    a.extend(args.iter().map(OsString::from));
    a
}

/// `memoir -s s --json ARGS` in `dir` (the store is `dir/s`).
pub fn memoir(dir: &Path, args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let a = memoir_args(&args);
    exec(dir, Path::new(&a[0]), &a[1..])
}

/// A command and the prepared directory it runs in: the store at `s`, beside it what the
/// command reads (a remote at `remote`, files to import or watch).
pub struct Case {
    pub name: &'static str,
    pub root: tempfile::TempDir,
    /// The command, after `memoir -s s --json`.
    pub args: Vec<String>,
    /// The revisions whose memories are compared before and after.
    pub revs: Vec<&'static str>,
    /// A memory acknowledged before that every state has: key and content.
    pub probe: (&'static str, &'static str),
    /// `fsck --repair`: the prepared store is damaged, and `before` is what it must recover.
    pub repair: bool,
    /// A re-run after a fault must succeed and leave the state after.
    pub rerun: bool,
    /// `push`: the remote, seen through a fetch, holds the branch before or after.
    pub remote: bool,
    /// Bytes no file of the store may hold once the command succeeded, and whether the
    /// packs are searched too (a purge) or only the other files (a collection).
    pub erased: Option<(&'static str, bool)>,
    /// The memories before, when the prepared store cannot be read (a damaged one).
    pub before: Option<State>,
}

impl Case {
    /// A case running `args` on the store prepared in `root`.
    pub fn new(name: &'static str, root: tempfile::TempDir, args: &[&str]) -> Case {
        Case {
            name,
            root,
            args: args.iter().map(|a| a.to_string()).collect(),
            revs: vec!["main"],
            probe: ("t1.k1", "fact 1 about topic1"),
            repair: false,
            rerun: false,
            remote: false,
            erased: None,
            before: None,
        }
    }
}

/// Copies the prepared directory to `to`, pointing the store's remotes at the copy's.
fn copy_case(from: &Path, to: &Path) {
    copy_tree(from, to);
    let remotes = to.join("s").join("remotes.json");
    if let Ok(text) = std::fs::read_to_string(&remotes) {
        let from = from.to_str().unwrap();
        std::fs::write(&remotes, text.replace(from, to.to_str().unwrap())).unwrap();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// With `MEMOIR_CRASH_KEEP=DIR`, copies `dir` (the prepared directory of `case`, or a
/// point's copy after its checks) to `DIR/<case>/<name>`, to replay a failure by hand.
fn keep(case: &Case, dir: &Path, name: &str) {
    let Some(to) = std::env::var_os("MEMOIR_CRASH_KEEP") else {
        return;
    };
    let slug: String = case
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let to = Path::new(&to).join(slug);
    copy_tree(dir, &to.join(name));
    eprintln!("crash {}: kept {}", case.name, to.join(name).display());
}

/// One fault that left the store wrong.
struct Failure {
    /// The crash point and the fault (`writes pwrite64#3 kill`).
    at: String,
    /// How the command under the fault ended.
    outcome: String,
    /// The first check that failed.
    problem: String,
}

/// `s` with the work directory `dir` written `DIR` and object ids `<hex>`, so that alike
/// failures read alike.
fn symptom(s: &str, dir: &Path) -> String {
    let s = s.replace(dir.to_str().unwrap(), "DIR");
    let mut out = String::new();
    let mut run = String::new();
    for ch in s.chars().map(Some).chain([None]) {
        match ch {
            Some(c) if c.is_ascii_hexdigit() => run.push(c),
            _ => {
                out.push_str(if run.len() >= 12 { "<hex>" } else { &run });
                run.clear();
                out.extend(ch);
            }
        }
    }
    out
}

/// Runs every crash point of `case` and fails listing each fault that left the store wrong,
/// grouped by what went wrong.
pub fn run_case(case: &Case) {
    let Some(strace) = strace::strace() else {
        return;
    };
    let started = Instant::now();
    let cap = match std::env::var("MEMOIR_CRASH_POINTS_ALL") {
        Ok(v) if v == "1" => None,
        _ => Some(CAP),
    };
    let root = case.root.path();
    let before = case.before.clone().unwrap_or_else(|| {
        check::state(root, &case.revs)
            .unwrap_or_else(|e| panic!("{}: the prepared store: {e}", case.name))
    });
    let work = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    keep(case, root, "prepared");

    // The command without a fault: the state after it, and the calls it makes.
    let reference = work.path().join("reference");
    copy_case(root, &reference);
    let (run, counts) = strace::count(&strace, &reference, &case.args);
    assert_eq!(
        run.code,
        Some(0),
        "{}: {:?} without a fault: {} / {}",
        case.name,
        case.args,
        run.outcome(),
        run.stderr
    );
    let mut after = check::state(&reference, &case.revs)
        .unwrap_or_else(|e| panic!("{}: after the command without a fault: {e}", case.name));
    if case.repair {
        // What a repair must recover is what the store held before its damage.
        if let Err(e) = check::compare(&after, &before, &before, true) {
            failures.push(Failure {
                at: "no fault".into(),
                outcome: "exit 0".into(),
                problem: format!("the repair without a fault did not recover the store: {e}"),
            });
        }
        after = before.clone();
    }

    let mut runs = 0;
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut planned = Vec::new();
    for class in Class::ALL {
        let points = strace::spread(counts.points(class), cap);
        eprintln!(
            "crash {}: {}: {} calls, {} crash points, running {}",
            case.name,
            class.name(),
            counts.total(class),
            counts.points(class).len(),
            points.len()
        );
        planned.extend(points);
    }
    for point in planned {
        for fault in Fault::ALL {
            if fault == Fault::Enospc && !point.on_a_file() {
                continue;
            }
            runs += 1;
            let dir = work.path().join(format!("p{runs}"));
            copy_case(root, &dir);
            let run = strace::inject(&strace, &dir, &case.args, &point, fault);
            let kind = match run.code {
                Some(c) => format!("exit {c}"),
                None if run.hung => "hung".to_string(),
                None => "killed".to_string(),
            };
            *outcomes.entry(kind).or_insert(0) += 1;
            let acked = run.code == Some(0) && !run.hung;
            let verdict = if run.hung {
                Err("the command hung".to_string())
            } else if run.code == Some(101) {
                // A fault is bad input for a command: a typed error, never a panic.
                Err(format!("the command panicked: {}", run.error()))
            } else {
                check::after_fault(&dir, case, &before, &after, acked)
            };
            if let Err(problem) = verdict {
                keep(case, &dir, &format!("p{runs}"));
                let outcome = run.outcome();
                failures.push(Failure {
                    at: format!("{point} {}", fault.name()),
                    outcome: symptom(outcome.lines().next().unwrap_or(""), &dir),
                    problem: symptom(&problem, &dir),
                });
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    eprintln!(
        "crash {}: {runs} faults in {:.1} s; outcomes {outcomes:?}; {} left the store wrong",
        case.name,
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    if !failures.is_empty() {
        panic!("{}", report(case.name, &failures));
    }
}

/// The failures grouped by symptom, each with its crash points.
fn report(name: &str, failures: &[Failure]) -> String {
    let mut groups: BTreeMap<&str, Vec<&Failure>> = BTreeMap::new();
    for f in failures {
        groups.entry(&f.problem).or_default().push(f);
    }
    let mut out = format!(
        "{name}: {} faults left the store wrong ({} symptoms):\n",
        failures.len(),
        groups.len()
    );
    for (problem, fs) in groups {
        out.push_str(&format!("* {problem}\n"));
        for f in fs {
            out.push_str(&format!(
                "    {name} {}: the command: {}\n",
                f.at, f.outcome
            ));
        }
    }
    out
}
