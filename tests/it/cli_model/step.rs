//! One operation: its command line, run with the binary, the output checked against the
//! model, and the model brought up to date.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{
    assert_failed, assert_ok, check_export, check_log, full_key, order_of, s, three_way, Entry,
    FullKey, Harness, Model, Op, Policy, Read, Rec, Strat, BAD_KEYS, BRANCHES, KEYS,
};

/// The commit a read resolves to in the model, its command-line arguments, and `None` when
/// the read must fail with exit 2.
fn resolve_read(m: &Model, r: &Read) -> (Vec<String>, Option<String>) {
    match r {
        Read::Head => (vec![], Some(m.head_tip())),
        Read::Branch(b) => (
            vec![s("--branch"), s(BRANCHES[*b])],
            m.tip(BRANCHES[*b]).cloned(),
        ),
        Read::At(i, short) => {
            let id = &m.order[i % m.order.len()];
            let shown = if *short { &id[..12] } else { &id[..] };
            (vec![s("--at"), s(shown)], Some(id.clone()))
        }
        Read::Back(b, n) => (
            vec![s("--at"), format!("{}~{n}", BRANCHES[*b])],
            m.tip(BRANCHES[*b]).and_then(|t| m.back(t, *n)),
        ),
    }
}

fn policy_args(p: Policy) -> Vec<String> {
    match p {
        Policy::Default => vec![],
        Policy::Replace => vec![s("--merge-policy"), s("replace")],
        Policy::ReplaceFlag => vec![s("--replace")],
        Policy::Append => vec![s("--merge-policy"), s("append")],
    }
}

/// Whether a write under `policy` at `path` keeps the earlier entries active.
fn appends(policy: Policy, path: &str) -> bool {
    match policy {
        Policy::Append => true,
        Policy::Replace | Policy::ReplaceFlag => false,
        // experience.* appends by default; the pool's other keys are confidence_gated, which
        // at the same confidence (1.0) replaces like replace.
        Policy::Default => path == "experience" || path.starts_with("experience."),
    }
}

/// Runs one operation, checks its output against the model and updates the model.
pub(super) fn step(h: &Harness, m: &mut Model, op: &Op) {
    let what = format!("{op:?}");
    match op {
        Op::Remember {
            keys,
            content,
            policy,
            branch,
        } => {
            let mut args = vec![s("remember"), content.clone()];
            for k in keys {
                args.push(s("-p"));
                args.push(s(KEYS[*k]));
            }
            args.extend(policy_args(*policy));
            if let Some(b) = branch {
                args.push(s("--branch"));
                args.push(s(BRANCHES[*b]));
            }
            let v = assert_ok(&h.run(true, &args), &what);
            let target = branch.map_or(m.current.clone(), |b| s(BRANCHES[b]));
            let base = m.tip(&target).cloned().unwrap_or_else(|| m.head_tip());
            let mut fks: Vec<FullKey> = Vec::new();
            for k in keys {
                let fk = full_key(KEYS[*k]);
                if !fks.contains(&fk) {
                    fks.push(fk);
                }
            }
            let paths: Vec<String> = fks.iter().map(|k| k.1.clone()).collect();
            assert_eq!(v["keys"], json!(paths), "{what}");
            assert_eq!(v["content"], json!(content), "{what}");
            assert_eq!(v["conflicts"], json!([]), "{what}");
            let mut snap = m.snap(&base).clone();
            for fk in &fks {
                let entry = Entry {
                    content: content.clone(),
                    ts: h.now,
                    active: true,
                };
                let related: Vec<String> = paths.iter().filter(|p| **p != fk.1).cloned().collect();
                let rec = match snap.get(fk) {
                    None => Rec {
                        entries: vec![entry],
                        related,
                    },
                    Some(old) => {
                        let mut r = old.clone();
                        for k in related {
                            if !r.related.contains(&k) {
                                r.related.push(k);
                            }
                        }
                        // A replace leaves exactly the new entry (history keeps the old).
                        if !appends(*policy, &fk.1) {
                            r.entries.clear();
                        }
                        r.entries.push(entry);
                        r
                    }
                };
                snap.insert(fk.clone(), rec);
            }
            let id = v["commit_hash"].as_str().expect("a commit").to_string();
            m.record(&id, vec![base], h.now, snap);
            m.branches.insert(target, id);
        }
        Op::RememberBadKey(k, content) => {
            let args = [s("remember"), content.clone(), s("-p"), s(BAD_KEYS[*k])];
            assert_failed(&h.run(true, &args), 1, &what);
        }
        Op::Forget(k, branch) => {
            let fk = full_key(KEYS[*k]);
            let mut args = vec![s("forget"), s(KEYS[*k])];
            if let Some(b) = branch {
                args.push(s("--branch"));
                args.push(s(BRANCHES[*b]));
            }
            let target = branch.map_or(m.current.clone(), |b| s(BRANCHES[b]));
            let base = m.tip(&target).cloned().unwrap_or_else(|| m.head_tip());
            let o = h.run(true, &args);
            let mut snap = m.snap(&base).clone();
            if snap.remove(&fk).is_none() {
                assert_failed(&o, 2, &what);
                return;
            }
            let v = assert_ok(&o, &what);
            assert_eq!(v["key"], json!(fk.1), "{what}");
            assert_eq!(v["namespace"], json!(fk.0), "{what}");
            let id = v["commit_hash"].as_str().unwrap().to_string();
            m.record(&id, vec![base], h.now, snap);
            m.branches.insert(target, id);
        }
        Op::ForgetBadKey(k) => {
            assert_failed(&h.run(true, &[s("forget"), s(BAD_KEYS[*k])]), 1, &what);
        }
        Op::Get(keys, r) => {
            let (mut args, at) = resolve_read(m, r);
            args.insert(0, s("get"));
            args.extend(keys.iter().map(|k| s(KEYS[*k])));
            let o = h.run(true, &args);
            let Some(at) = at else {
                assert_failed(&o, 2, &what);
                return;
            };
            let snap = m.snap(&at);
            let items: Vec<Value> = keys
                .iter()
                .map(|k| {
                    let fk = full_key(KEYS[*k]);
                    let value = snap.get(&fk).map_or(Value::Null, |r| r.to_json(&fk));
                    json!({
                        "key": fk.1,
                        "namespace": fk.0,
                        "full_key": format!("{}:{}", fk.0, fk.1),
                        "found": !value.is_null(),
                        "value": value,
                    })
                })
                .collect();
            let found = items.iter().filter(|i| i["found"] == true).count();
            let expected_code = if keys.len() == 1 && found == 0 { 2 } else { 0 };
            assert_eq!(o.code, expected_code, "{what}: {}", o.stderr);
            let v = o.json();
            assert_eq!(v["items"], json!(items), "{what}");
            assert_eq!(v["count"], keys.len(), "{what}");
            assert_eq!(v["found_count"], found, "{what}");
            assert_eq!(v["success"], expected_code == 0, "{what}");
        }
        Op::GetBadKey(k) => {
            let args = [s("get"), s(KEYS[0]), s(BAD_KEYS[*k])];
            assert_failed(&h.run(true, &args), 1, &what);
        }
        Op::Branch(b, from) => {
            let name = BRANCHES[*b];
            let mut args = vec![s("branch"), s(name)];
            let at = match from {
                Some(f) => {
                    args.push(s("--from"));
                    args.push(s(BRANCHES[*f]));
                    m.tip(BRANCHES[*f]).cloned()
                }
                None => Some(m.head_tip()),
            };
            let o = h.run(true, &args);
            match at {
                None => assert_failed(&o, 2, &what),
                Some(_) if m.branches.contains_key(name) => assert_failed(&o, 1, &what),
                Some(at) => {
                    let v = assert_ok(&o, &what);
                    assert_eq!(v["commit"], json!(at), "{what}");
                    m.branches.insert(s(name), at);
                }
            }
        }
        Op::Delete(b, force) => {
            let name = BRANCHES[*b];
            let flag = if *force { "-D" } else { "-d" };
            let o = h.run(true, &[s("branch"), s(flag), s(name)]);
            match m.tip(name) {
                None => assert_failed(&o, 2, &what),
                Some(_) if name == m.current => assert_failed(&o, 1, &what),
                Some(tip) if !force && !m.ancestors(&m.head_tip()).contains(tip) => {
                    assert_failed(&o, 1, &what)
                }
                Some(_) => {
                    let v = assert_ok(&o, &what);
                    assert_eq!(v["deleted"], name, "{what}");
                    m.branches.remove(name);
                }
            }
        }
        Op::Checkout(b, create) => {
            let name = BRANCHES[*b];
            let mut args = vec![s("checkout")];
            if *create {
                args.push(s("-b"));
            }
            args.push(s(name));
            let o = h.run(true, &args);
            let exists = m.branches.contains_key(name);
            if *create && exists {
                assert_failed(&o, 1, &what);
            } else if !*create && !exists {
                assert_failed(&o, 2, &what);
            } else {
                let v = assert_ok(&o, &what);
                let tip = if *create {
                    m.head_tip()
                } else {
                    m.branches[name].clone()
                };
                assert_eq!(v["branch"], name, "{what}");
                assert_eq!(v["commit"], json!(tip), "{what}");
                m.branches.insert(s(name), tip);
                m.current = s(name);
            }
        }
        Op::Merge { src, into, strat } => merge(h, m, *src, *into, *strat, &what),
        Op::Summarize(depth, r) => {
            let (mut args, at) = resolve_read(m, r);
            args.insert(0, s("summarize"));
            args.push(s("--depth"));
            args.push(depth.to_string());
            let o = h.run(true, &args);
            if *depth == 0 {
                assert_failed(&o, 2, &what);
                return;
            }
            let Some(at) = at else {
                assert_failed(&o, 2, &what);
                return;
            };
            let v = assert_ok(&o, &what);
            let snap = m.snap(&at);
            let mut namespaces: BTreeMap<&str, u64> = BTreeMap::new();
            let mut prefixes: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
            for (ns, path) in snap.keys() {
                *namespaces.entry(ns).or_default() += 1;
                let segs: Vec<&str> = path.split('.').collect();
                let prefix = segs[..segs.len().min(*depth)].join(".");
                *prefixes.entry(ns).or_default().entry(prefix).or_default() += 1;
            }
            assert_eq!(v["total_memories"], snap.len(), "{what}");
            assert_eq!(v["total_namespaces"], namespaces.len(), "{what}");
            assert_eq!(v["namespaces"], json!(namespaces), "{what}");
            assert_eq!(v["depth"], *depth, "{what}");
            assert_eq!(v["prefix_counts"], json!(prefixes), "{what}");
        }
        Op::Export(r) => {
            let (args, at) = resolve_read(m, r);
            let mut all = vec![s("export")];
            all.extend(args);
            let o = h.run(false, &all);
            match at {
                None => assert_failed(&o, 2, &what),
                Some(at) => check_export(&o, m.snap(&at), &what),
            }
        }
        Op::Log(b, exclude) => {
            let name = BRANCHES[*b];
            let rev = match exclude {
                Some(x) => format!("{}..{name}", BRANCHES[*x]),
                None => s(name),
            };
            let o = h.run(true, &[s("log"), rev]);
            let tips = (m.tip(name), exclude.map(|x| m.tip(BRANCHES[x])));
            match tips {
                (Some(tip), None) => check_log(&o, m, tip, None, &what),
                (Some(tip), Some(Some(x))) => check_log(&o, m, tip, Some(x), &what),
                _ => assert_failed(&o, 2, &what),
            }
        }
        Op::Diff(a, b) => {
            let from = m.order[a % m.order.len()].clone();
            let to = m.order[b % m.order.len()].clone();
            let o = h.run(true, &[s("diff"), from.clone(), to.clone()]);
            let v = assert_ok(&o, &what);
            let (old, new) = (m.snap(&from), m.snap(&to));
            let mut keys: Vec<&FullKey> = old.keys().chain(new.keys()).collect();
            keys.sort_by_key(|k| order_of(k));
            keys.dedup();
            let mut expected = Vec::new();
            for k in keys {
                let (o, n) = (old.get(k), new.get(k));
                let op = match (o, n) {
                    (None, Some(_)) => "added",
                    (Some(_), None) => "removed",
                    (Some(x), Some(y)) if x != y => "modified",
                    _ => continue,
                };
                expected.push(json!([
                    k.0,
                    k.1,
                    op,
                    o.map(|r| r.content()),
                    n.map(|r| r.content())
                ]));
            }
            let observed: Vec<Value> = v["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    json!([
                        c["namespace"],
                        c["key"],
                        c["operation"],
                        c["old"]["content"],
                        c["new"]["content"]
                    ])
                })
                .collect();
            assert_eq!(observed, expected, "{what}");
            assert_eq!(v["count"], expected.len(), "{what}");
        }
    }
}

fn merge(
    h: &Harness,
    m: &mut Model,
    src: usize,
    into: Option<usize>,
    strat: Option<Strat>,
    what: &str,
) {
    let src_name = BRANCHES[src];
    let mut args = vec![s("merge"), s(src_name)];
    if let Some(i) = into {
        args.push(s("--into"));
        args.push(s(BRANCHES[i]));
    }
    if let Some(st) = strat {
        args.push(s("-S"));
        args.push(s(match st {
            Strat::Ours => "ours",
            Strat::Theirs => "theirs",
            Strat::Union => "union",
        }));
    }
    let o = h.run(true, &args);
    let into_name = into.map_or(m.current.clone(), |i| s(BRANCHES[i]));
    let (Some(ours), Some(theirs)) = (m.tip(&into_name).cloned(), m.tip(src_name).cloned()) else {
        assert_failed(&o, 2, what);
        return;
    };
    if m.ancestors(&ours).contains(&theirs) {
        let v = assert_ok(&o, what);
        assert_eq!(v["kind"], "up_to_date", "{what}");
        assert_eq!(v["commit_hash"], Value::Null, "{what}");
        return;
    }
    if m.ancestors(&theirs).contains(&ours) {
        let v = assert_ok(&o, what);
        assert_eq!(v["kind"], "fast_forward", "{what}");
        assert_eq!(v["commit_hash"], json!(theirs), "{what}");
        m.branches.insert(into_name, theirs);
        return;
    }
    let base = m.merge_base(&ours, &theirs);
    let (conflicts, merged) = three_way(m.snap(&base), m.snap(&ours), m.snap(&theirs), strat);
    let shown: Vec<String> = conflicts
        .iter()
        .map(|(ns, p)| format!("{ns}:{p}"))
        .collect();
    let Some(snap) = merged else {
        assert_eq!(o.code, 4, "{what}: {} {}", o.stdout, o.stderr);
        let v = o.json();
        assert_eq!(v["conflicts"], json!(shown), "{what}");
        assert_eq!(v["commit_hash"], Value::Null, "{what}");
        return;
    };
    let v = assert_ok(&o, what);
    assert_eq!(v["kind"], "merge", "{what}");
    assert_eq!(v["conflicts"], json!(shown), "{what}");
    assert_eq!(
        v["message"],
        format!("Merge branch '{src_name}' into {into_name}"),
        "{what}"
    );
    let id = v["commit_hash"].as_str().unwrap().to_string();
    m.record(&id, vec![ours, theirs], h.now, snap);
    m.branches.insert(into_name, id);
}
