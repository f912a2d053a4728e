//! Random command-line sequences run with the real `memoir` binary on a real store, each
//! result checked against a small in-memory model: branches -> tip commit, every commit's
//! parents, time and snapshot (key -> record with its facet entries), and the current branch.
//!
//! Covered: `remember` (one or two keys from a small colliding pool, unicode and newlines in
//! the content, default / replace / `--replace` / append policies, optionally `--branch`,
//! which creates missing branches), `forget`, `get` of several keys (found and missing, at
//! HEAD, `--branch`, `--at ID`, `--at BRANCH~N`), `branch` create / `-d` / `-D`, `checkout`
//! (with and without `-b`), `merge` (fast-forward, up to date, three-way against the merge
//! base with and without `-S ours|theirs|union`, `--into`), `summarize --depth`, `export`,
//! `log REV` and `log A..B` (the exact set of commits and their parents), `diff` between
//! recorded commits, and invalid commands (bad keys, unknown branches and revisions,
//! duplicate branches, `--depth 0`), which must fail with the documented exit code and change
//! nothing. After every step the refs and HEAD are compared with the model; at the end every
//! branch is exported and logged and `memoir fsck` must be clean.
//!
//! Cases: 24 by default; set `MEMOIR_MODEL_CASES=N` for a longer run.

mod step;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::Out;
use memoir::repo::{Head, Repo};
use memoir::store::{OpenOptions, Store};

use step::step;

const BASE: u64 = 1_767_225_600;
const AUTHOR: &str = "Model <model@example.org>";
/// Branch names; the last one is never created.
const BRANCHES: [&str; 4] = ["main", "dev", "topic", "ghost"];
const CREATABLE: usize = 3;
/// Valid keys; the first `DEFAULT_NS` are in the default namespace.
const KEYS: [&str; 9] = [
    "a",
    "a.b",
    "a.b.c",
    "a.c",
    "b.x.y",
    "ünï.cödé",
    "experience.log",
    "work:a.b",
    "work:z",
];
const DEFAULT_NS: usize = 7;
/// How long every open waits for the store's lock.
const LOCK_TIMEOUT_SECS: u64 = 30;
const BAD_KEYS: [&str; 4] = ["a..b", "sp ace", "glob*", "a.b.c.d.e.f.g.h.i"];

fn cases() -> u32 {
    std::env::var("MEMOIR_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

// ---------------------------------------------------------------------------------------
// The model

/// (namespace, path)
type FullKey = (String, String);

fn full_key(k: &str) -> FullKey {
    match k.rsplit_once(':') {
        Some((ns, p)) => (ns.to_string(), p.to_string()),
        None => ("default".to_string(), k.to_string()),
    }
}

/// The store's key order: namespace, then path segment by segment.
fn order_of(k: &FullKey) -> (String, Vec<String>) {
    (k.0.clone(), k.1.split('.').map(str::to_string).collect())
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    content: String,
    ts: u64,
    active: bool,
}

#[derive(Clone, Debug, PartialEq)]
struct Rec {
    entries: Vec<Entry>,
    related: Vec<String>,
}

impl Rec {
    fn content(&self) -> String {
        self.entries
            .iter()
            .filter(|e| e.active)
            .map(|e| e.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n[update] ")
    }

    /// The record's JSON exactly as `get` prints it.
    fn to_json(&self, k: &FullKey) -> Value {
        let active: Vec<&Entry> = self.entries.iter().filter(|e| e.active).collect();
        let ts = active
            .iter()
            .map(|e| e.ts)
            .max()
            .or_else(|| self.entries.iter().map(|e| e.ts).max())
            .unwrap_or(0);
        json!({
            "content": self.content(),
            "key": k.1,
            "namespace": k.0,
            "confidence": if active.is_empty() { 0.0 } else { 1.0 },
            "timestamp": ts as f64,
            "related_keys": self.related,
            "entries": self.entries.iter().map(|e| json!({
                "content": e.content,
                "confidence": 1.0,
                "timestamp": e.ts as f64,
                "status": if e.active { "active" } else { "superseded" },
            })).collect::<Vec<_>>(),
            "schema_version": 2,
        })
    }

    /// `merge -S union`: entries of both (ours first), duplicates by (content, time) dropped,
    /// stably sorted by time; related keys united in order.
    fn union(ours: &Rec, theirs: &Rec) -> Rec {
        let mut entries: Vec<Entry> = Vec::new();
        for e in ours.entries.iter().chain(&theirs.entries) {
            if !entries
                .iter()
                .any(|x| x.content == e.content && x.ts == e.ts)
            {
                entries.push(e.clone());
            }
        }
        entries.sort_by_key(|e| e.ts);
        let mut related = ours.related.clone();
        for k in &theirs.related {
            if !related.contains(k) {
                related.push(k.clone());
            }
        }
        Rec { entries, related }
    }
}

type Snap = BTreeMap<FullKey, Rec>;

#[derive(Clone, Debug)]
struct ModelCommit {
    parents: Vec<String>,
    ts: u64,
    snap: Snap,
}

#[derive(Debug)]
struct Model {
    commits: HashMap<String, ModelCommit>,
    /// Commit ids in the order they were made.
    order: Vec<String>,
    branches: BTreeMap<String, String>,
    current: String,
}

impl Model {
    fn tip(&self, b: &str) -> Option<&String> {
        self.branches.get(b)
    }

    fn snap(&self, id: &str) -> &Snap {
        &self.commits[id].snap
    }

    fn head_tip(&self) -> String {
        self.branches[&self.current].clone()
    }

    fn ancestors(&self, id: &str) -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut todo = vec![id.to_string()];
        while let Some(c) = todo.pop() {
            if seen.insert(c.clone()) {
                todo.extend(self.commits[&c].parents.iter().cloned());
            }
        }
        seen
    }

    /// `B~n`: n first parents back.
    fn back(&self, id: &str, n: usize) -> Option<String> {
        let mut at = id.to_string();
        for _ in 0..n {
            at = self.commits[&at].parents.first()?.clone();
        }
        Some(at)
    }

    /// The merge base the store picks: best common ancestors, newest first.
    fn merge_base(&self, a: &str, b: &str) -> String {
        let (aa, ab) = (self.ancestors(a), self.ancestors(b));
        let common: HashSet<&String> = aa.intersection(&ab).collect();
        let below: HashSet<&String> = common
            .iter()
            .flat_map(|c| self.commits[*c].parents.iter())
            .collect();
        common
            .iter()
            .filter(|c| !below.contains(**c))
            .max_by_key(|c| self.commits[**c].ts)
            .map(|c| (*c).clone())
            .expect("one root commit")
    }

    fn record(&mut self, id: &str, parents: Vec<String>, ts: u64, snap: Snap) {
        assert!(!self.commits.contains_key(id), "commit id {id} reused");
        self.commits
            .insert(id.to_string(), ModelCommit { parents, ts, snap });
        self.order.push(id.to_string());
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Strat {
    Ours,
    Theirs,
    Union,
}

/// Three-way merge as the store does it: the changes base -> theirs applied to ours; a key
/// changed differently on both sides is a conflict. Returns the conflicts (key order) and the
/// merged snapshot, `None` when a conflict is left unresolved.
fn three_way(
    base: &Snap,
    ours: &Snap,
    theirs: &Snap,
    strat: Option<Strat>,
) -> (Vec<FullKey>, Option<Snap>) {
    let mut keys: Vec<&FullKey> = base
        .keys()
        .chain(theirs.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| base.get(*k) != theirs.get(*k))
        .collect();
    keys.sort_by_key(|k| order_of(k));
    let mut out = ours.clone();
    let mut conflicts = Vec::new();
    let mut unresolved = false;
    let set = |out: &mut Snap, k: &FullKey, v: Option<&Rec>| match v {
        Some(r) => {
            out.insert(k.clone(), r.clone());
        }
        None => {
            out.remove(k);
        }
    };
    for k in keys {
        let (b, o, t) = (base.get(k), ours.get(k), theirs.get(k));
        if o == b {
            set(&mut out, k, t);
        } else if o == t {
            continue;
        } else {
            conflicts.push(k.clone());
            match strat {
                None => unresolved = true,
                Some(Strat::Ours) => {}
                Some(Strat::Theirs) => set(&mut out, k, t),
                Some(Strat::Union) => {
                    let u = match (o, t) {
                        (Some(o), Some(t)) => Some(Rec::union(o, t)),
                        (Some(o), None) => Some(o.clone()),
                        (None, t) => t.cloned(),
                    };
                    set(&mut out, k, u.as_ref());
                }
            }
        }
    }
    (conflicts, (!unresolved).then_some(out))
}

// ---------------------------------------------------------------------------------------
// Operations

#[derive(Clone, Copy, Debug)]
enum Policy {
    Default,
    Replace,
    ReplaceFlag,
    Append,
}

/// Where a read looks.
#[derive(Clone, Debug)]
enum Read {
    Head,
    Branch(usize),
    /// A commit made so far (index modulo their number), full id or a 12-digit prefix.
    At(usize, bool),
    /// `--at BRANCH~N`
    Back(usize, usize),
}

#[derive(Clone, Debug)]
enum Op {
    Remember {
        keys: Vec<usize>,
        content: String,
        policy: Policy,
        branch: Option<usize>,
    },
    RememberBadKey(usize, String),
    Forget(usize, Option<usize>),
    ForgetBadKey(usize),
    Get(Vec<usize>, Read),
    GetBadKey(usize),
    Branch(usize, Option<usize>),
    Delete(usize, bool),
    Checkout(usize, bool),
    Merge {
        src: usize,
        into: Option<usize>,
        strat: Option<Strat>,
    },
    Summarize(usize, Read),
    Export(Read),
    Log(usize, Option<usize>),
    Diff(usize, usize),
}

/// A branch to refer to: mostly one that can exist, sometimes the one that never does.
fn branch_ref() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![9 => 0..CREATABLE, 1 => Just(CREATABLE)]
}

fn read() -> impl Strategy<Value = Read> {
    prop_oneof![
        2 => Just(Read::Head),
        2 => branch_ref().prop_map(Read::Branch),
        3 => (any::<usize>(), any::<bool>()).prop_map(|(i, s)| Read::At(i, s)),
        1 => (branch_ref(), 0..4usize).prop_map(|(b, n)| Read::Back(b, n)),
    ]
}

fn content() -> impl Strategy<Value = String> {
    // Never blank and never starting with '-' (it would be read as an option).
    "[a-zA-Zé日🙂\"][a-zA-Z0-9 é日本🙂\n\t\"\\\\{}]{0,14}"
}

fn op() -> impl Strategy<Value = Op> {
    let keys = prop_oneof![
        3 => (0..KEYS.len()).prop_map(|k| vec![k]),
        1 => (0..DEFAULT_NS, 0..DEFAULT_NS).prop_map(|(a, b)| vec![a, b]),
    ];
    let policy = prop_oneof![
        Just(Policy::Default),
        Just(Policy::Replace),
        Just(Policy::ReplaceFlag),
        Just(Policy::Append),
    ];
    let strat = prop_oneof![
        Just(None),
        Just(Some(Strat::Ours)),
        Just(Some(Strat::Theirs)),
        Just(Some(Strat::Union)),
    ];
    prop_oneof![
        10 => (keys, content(), policy, prop::option::weighted(0.7, 0..CREATABLE)).prop_map(
            |(keys, content, policy, branch)| Op::Remember { keys, content, policy, branch }
        ),
        1 => (0..BAD_KEYS.len(), content()).prop_map(|(k, c)| Op::RememberBadKey(k, c)),
        3 => (0..KEYS.len(), prop::option::weighted(0.2, 0..CREATABLE))
            .prop_map(|(k, b)| Op::Forget(k, b)),
        1 => (0..BAD_KEYS.len()).prop_map(Op::ForgetBadKey),
        4 => (prop::collection::vec(0..KEYS.len(), 1..4), read()).prop_map(|(k, r)| Op::Get(k, r)),
        1 => (0..BAD_KEYS.len()).prop_map(Op::GetBadKey),
        3 => (0..CREATABLE, prop::option::weighted(0.3, branch_ref()))
            .prop_map(|(b, f)| Op::Branch(b, f)),
        1 => (branch_ref(), any::<bool>()).prop_map(|(b, f)| Op::Delete(b, f)),
        3 => (branch_ref(), any::<bool>()).prop_map(|(b, c)| Op::Checkout(b, c)),
        6 => (branch_ref(), prop::option::weighted(0.3, branch_ref()), strat)
            .prop_map(|(src, into, strat)| Op::Merge { src, into, strat }),
        2 => (0..3usize, read()).prop_map(|(d, r)| Op::Summarize(d, r)),
        2 => read().prop_map(Op::Export),
        2 => (branch_ref(), prop::option::weighted(0.4, branch_ref()))
            .prop_map(|(b, x)| Op::Log(b, x)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Diff(a, b)),
    ]
}

// ---------------------------------------------------------------------------------------
// Running the binary

struct Harness {
    _dir: tempfile::TempDir,
    store: PathBuf,
    /// The clock of the current step (`MEMOIR_NOW`): one second per step.
    now: u64,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let mut h = Harness {
            _dir: dir,
            store,
            now: BASE,
        };
        let path = h.store.to_str().unwrap().to_string();
        let o = h.exec(&["new".to_string(), path]);
        assert_eq!(o.code, 0, "new: {}", o.stderr);
        h.now += 1;
        h
    }

    fn exec(&self, args: &[String]) -> Out {
        let o = Command::new(env!("CARGO_BIN_EXE_memoir"))
            .env_clear()
            .env("MEMOIR_NOW", self.now.to_string())
            .env("MEMOIR_AUTHOR", AUTHOR)
            // The model is about results, not lock latency: on a loaded machine the engine of
            // the handle `refs` just closed may take a while to let go of its files.
            .env("MEMOIR_LOCK_TIMEOUT", LOCK_TIMEOUT_SECS.to_string())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run memoir");
        Out::from(o)
    }

    /// `memoir -s STORE [--json] args...`
    fn run(&self, json: bool, args: &[String]) -> Out {
        let mut all = vec!["-s".to_string(), self.store.to_str().unwrap().to_string()];
        if json {
            all.push("--json".to_string());
        }
        all.extend_from_slice(args);
        self.exec(&all)
    }

    /// The refs and HEAD, read through the library.
    fn refs(&self) -> (BTreeMap<String, String>, Head) {
        let opts = OpenOptions {
            lock_timeout: std::time::Duration::from_secs(LOCK_TIMEOUT_SECS),
            ..OpenOptions::default()
        };
        let repo = Repo::open(Store::open(&self.store, &opts).unwrap()).unwrap();
        let branches = repo
            .branches()
            .unwrap()
            .into_iter()
            .map(|(n, id)| (n, id.to_hex()))
            .collect();
        (branches, repo.head().unwrap())
    }
}

fn s(x: &str) -> String {
    x.to_string()
}

fn assert_failed(o: &Out, code: i32, what: &str) {
    assert_eq!(
        o.code, code,
        "{what}: expected exit {code}; stdout {:?} stderr {:?}",
        o.stdout, o.stderr
    );
    if let Ok(v) = serde_json::from_str::<Value>(&o.stdout) {
        assert_eq!(v["success"], false, "{what}: {v}");
    }
}

fn assert_ok(o: &Out, what: &str) -> Value {
    assert_eq!(
        o.code, 0,
        "{what}: stdout {:?} stderr {:?}",
        o.stdout, o.stderr
    );
    o.json()
}

fn check_export(o: &Out, snap: &Snap, what: &str) {
    assert_eq!(o.code, 0, "{what}: {}", o.stderr);
    let observed: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| json!([v["namespace"], v["key"], v["content"]]))
        .collect();
    let mut keys: Vec<&FullKey> = snap.keys().collect();
    keys.sort_by_key(|k| order_of(k));
    let expected: Vec<Value> = keys
        .iter()
        .map(|k| json!([k.0, k.1, snap[*k].content()]))
        .collect();
    assert_eq!(observed, expected, "{what}");
}

fn check_log(o: &Out, m: &Model, tip: &str, exclude: Option<&String>, what: &str) {
    let v = assert_ok(o, what);
    let mut expected = m.ancestors(tip);
    if let Some(x) = exclude {
        for c in m.ancestors(x) {
            expected.remove(&c);
        }
    }
    let commits = v["commits"].as_array().unwrap();
    assert_eq!(v["count"], expected.len(), "{what}");
    let listed: HashSet<String> = commits
        .iter()
        .map(|c| c["hash"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, expected, "{what}");
    assert_eq!(listed.len(), commits.len(), "{what}: a commit listed twice");
    if let Some(first) = commits.first() {
        assert_eq!(first["hash"], tip, "{what}: the tip comes first");
    }
    for c in commits {
        let id = c["hash"].as_str().unwrap();
        assert_eq!(c["parents"], json!(m.commits[id].parents), "{what}");
        assert_eq!(c["timestamp"], m.commits[id].ts, "{what}");
        assert_eq!(c["author"], AUTHOR, "{what}");
    }
}

fn run_sequence(ops: &[Op]) {
    let mut h = Harness::new();
    let (branches, head) = h.refs();
    assert_eq!(head, Head::Branch(s("main")));
    let root = branches["main"].clone();
    let mut m = Model {
        commits: HashMap::new(),
        order: Vec::new(),
        branches: BTreeMap::from([(s("main"), root.clone())]),
        current: s("main"),
    };
    m.record(&root, vec![], BASE, Snap::new());
    // Every creatable branch exists from the start, so writes diverge and merges have work.
    let prelude: Vec<Op> = (1..CREATABLE).map(|b| Op::Branch(b, None)).collect();
    for (i, op) in prelude.iter().chain(ops).enumerate() {
        step(&h, &mut m, op);
        let (branches, head) = h.refs();
        assert_eq!(branches, m.branches, "refs after step {i} {op:?}");
        assert_eq!(
            head,
            Head::Branch(m.current.clone()),
            "HEAD after step {i} {op:?}"
        );
        h.now += 1;
    }
    // Every branch in full, then a clean fsck.
    for (name, tip) in &m.branches {
        let o = h.run(false, &[s("export"), s("--branch"), name.clone()]);
        check_export(&o, m.snap(tip), &format!("final export of {name}"));
        let o = h.run(true, &[s("log"), name.clone()]);
        check_log(&o, &m, tip, None, &format!("final log of {name}"));
    }
    let v = assert_ok(&h.run(true, &[s("fsck")]), "fsck");
    assert_eq!(v["clean"], true, "fsck: {v}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn cli_matches_the_model(ops in prop::collection::vec(op(), 5..26)) {
        run_reporting(&ops);
    }
}

/// Runs `ops`; if they fail, writes the failure and the operations straight to the process's
/// standard error before failing. libtest captures only the print macros, so this stays next
/// to the test's FAILED line in logs that show only part of a run; proptest then shrinks.
fn run_reporting(ops: &[Op]) {
    use std::io::Write;
    let Err(payload) = std::panic::catch_unwind(|| run_sequence(ops)) else {
        return;
    };
    let why = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    // The first few failures only: shrinking fails many times over.
    static REPORTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    if REPORTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 3 {
        std::panic::resume_unwind(payload);
    }
    let _ = writeln!(
        std::io::stderr(),
        "cli_model failure: {why}\ncli_model operations: {ops:?}"
    );
    std::panic::resume_unwind(payload);
}
