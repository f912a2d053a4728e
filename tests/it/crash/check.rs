//! What a store must be after a fault: usable by the next commands, clean, holding on every
//! compared branch the memories before the command or after it (never a mix), with a ref log
//! that rebuilds the same refs, and finished by a re-run where the command promises it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{memoir, Case};

/// A revision's memories: `namespace:key` -> the exported record.
pub type Memories = BTreeMap<String, Value>;

/// Each compared revision's memories (`None`: no such revision).
pub type State = BTreeMap<String, Option<Memories>>;

/// A command that must succeed: its JSON, or what went wrong.
fn ok(dir: &Path, args: &[&str]) -> Result<Value, String> {
    let run = memoir(dir, args);
    if run.code != Some(0) {
        return Err(format!("`{}` after it: {}", args.join(" "), run.outcome()));
    }
    Ok(run.json().unwrap_or(Value::Null))
}

/// The memories of `rev` in the store `dir/s`.
fn export(dir: &Path, rev: &str) -> Result<Option<Memories>, String> {
    let run = memoir(dir, &["export", "--at", rev]);
    match run.code {
        Some(0) => {}
        Some(2) if run.error().contains("unknown revision") => return Ok(None),
        _ => return Err(format!("`export --at {rev}` after it: {}", run.outcome())),
    }
    let mut out = Memories::new();
    for line in run.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("`export --at {rev}` printed a line that is not JSON: {e}"))?;
        let key = format!(
            "{}:{}",
            v["namespace"].as_str().unwrap_or("?"),
            v["key"].as_str().unwrap_or("?")
        );
        out.insert(key, v);
    }
    Ok(Some(out))
}

/// The memories of each of `revs` in the store `dir/s`.
pub fn state(dir: &Path, revs: &[&str]) -> Result<State, String> {
    revs.iter()
        .map(|r| Ok((r.to_string(), export(dir, r)?)))
        .collect()
}

/// How `now` differs from `want`, in a few keys.
fn difference(now: &Option<Memories>, want: &Option<Memories>) -> String {
    let (Some(now), Some(want)) = (now, want) else {
        let has = |s: &Option<Memories>| if s.is_some() { "exists" } else { "absent" };
        return format!("the revision {} (expected: {})", has(now), has(want));
    };
    let mut parts = Vec::new();
    let list = |keys: Vec<&String>| {
        let n = keys.len();
        let mut s: Vec<String> = keys.into_iter().take(3).cloned().collect();
        if n > 3 {
            s.push(format!("and {} more", n - 3));
        }
        s.join(", ")
    };
    let missing: Vec<&String> = want.keys().filter(|k| !now.contains_key(*k)).collect();
    let extra: Vec<&String> = now.keys().filter(|k| !want.contains_key(*k)).collect();
    let changed: Vec<&String> = want
        .iter()
        .filter(|(k, v)| now.get(*k).is_some_and(|n| n != *v))
        .map(|(k, _)| k)
        .collect();
    if !missing.is_empty() {
        parts.push(format!("lacks {}", list(missing)));
    }
    if !extra.is_empty() {
        parts.push(format!("has extra {}", list(extra)));
    }
    if !changed.is_empty() {
        parts.push(format!("has other content at {}", list(changed)));
    }
    if parts.is_empty() {
        return "is the same".to_string();
    }
    parts.join(", ")
}

/// Each revision of `now` is as `after`, or (unless the command was acknowledged) as
/// `before`.
pub fn compare(now: &State, before: &State, after: &State, acked: bool) -> Result<(), String> {
    for (rev, got) in now {
        let want = &after[rev];
        if got == want || (!acked && got == &before[rev]) {
            continue;
        }
        return Err(if acked {
            format!(
                "{rev} lacks what the command acknowledged: {}",
                difference(got, want)
            )
        } else {
            format!(
                "{rev} is neither as before nor as after: against before it {}; against \
                 after it {}",
                difference(got, &before[rev]),
                difference(got, want)
            )
        });
    }
    Ok(())
}

/// `fsck` finds the store clean.
fn clean(dir: &Path) -> Result<(), String> {
    let v = ok(dir, &["fsck"])?;
    if v["clean"] != true {
        return Err(format!("`fsck` after it: not clean: {}", v["findings"]));
    }
    Ok(())
}

/// No file of the store (outside `packs/` unless `packs_too`) holds `marker`.
fn erased(dir: &Path, marker: &str, packs_too: bool, when: &str) -> Result<(), String> {
    let store = dir.join("s");
    for file in crate::common::files_below(&store) {
        if !packs_too && file.starts_with(store.join("packs")) {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap_or_default();
        if bytes.windows(marker.len()).any(|w| w == marker.as_bytes()) {
            return Err(format!(
                "{when}, {} still holds {marker}",
                file.strip_prefix(&store).unwrap().display()
            ));
        }
    }
    Ok(())
}

/// After a repair cut short, the damage may still be there (exit 5) but the store is still a
/// store, never one without history (exit 3), and the repair's re-run brings it all back.
fn repair_cut_short(dir: &Path) -> Result<(), String> {
    let status = memoir(dir, &["status"]);
    let fsck = memoir(dir, &["fsck"]);
    for (what, run) in [("status", &status), ("fsck", &fsck)] {
        let no_history = run.json().is_some_and(|v| v["initialized"] == false);
        if !matches!(run.code, Some(0 | 5)) || no_history {
            let said = if no_history {
                "the store has no history".to_string()
            } else {
                run.outcome()
            };
            return Err(format!(
                "`{what}` after a repair cut short: {said} (only the damage, exit 5, may remain)"
            ));
        }
    }
    if status.code != Some(0) || fsck.json().is_none_or(|v| v["clean"] != true) {
        let v =
            ok(dir, &["fsck", "--repair"]).map_err(|e| format!("the re-run of the repair: {e}"))?;
        if v["clean"] != true {
            return Err(format!(
                "the re-run of the repair leaves findings: {}",
                v["findings"]
            ));
        }
    }
    Ok(())
}

/// The ref log agrees with the database: the store rebuilt from the ref log and the packs
/// alone (`db/` removed, `fsck --repair`) shows on each revision what it showed (`now`),
/// even where a command cut short had moved the ref in the database but not yet logged the
/// move (the next open logs it from the ref journal). A log naming a move the database
/// never made, or missing one it made, is a failure.
fn rebuilt_agrees(
    dir: &Path,
    revs: &[&str],
    now: &State,
    before: &State,
    after: &State,
) -> Result<(), String> {
    std::fs::remove_dir_all(dir.join("s").join("db")).unwrap();
    let v = ok(dir, &["fsck", "--repair"])
        .map_err(|e| format!("rebuilding db/ from the ref log and the packs: {e}"))?;
    if v["clean"] != true {
        return Err(format!(
            "rebuilt from the ref log and the packs, the store has findings: {}",
            v["findings"]
        ));
    }
    let rebuilt = state(dir, revs)?;
    for (rev, got) in &rebuilt {
        let shown = &now[rev];
        if got == shown {
            continue;
        }
        let hint = if shown == &before[rev] && got == &after[rev] {
            " (the ref log names a move the database does not have)"
        } else if shown == &after[rev] && got == &before[rev] {
            " (the ref log misses a move the database made)"
        } else {
            ""
        };
        return Err(format!(
            "rebuilt from the ref log and the packs, {rev} {} against what the store \
             showed{hint}",
            difference(got, shown)
        ));
    }
    Ok(())
}

/// The checks after the command ran with a fault on the copy `dir` and ended acknowledged
/// (exit 0) or not: `Err` names the first that failed.
pub fn after_fault(
    dir: &Path,
    case: &Case,
    before: &State,
    after: &State,
    acked: bool,
) -> Result<(), String> {
    if case.repair && !acked {
        repair_cut_short(dir)?;
    }
    let status = ok(dir, &["status"])?;
    if status["initialized"] != true {
        return Err("`status` after it: the store has no history".to_string());
    }
    let (key, content) = case.probe;
    let got = ok(dir, &["get", key])?;
    if got["items"][0]["value"]["content"] != content {
        return Err(format!(
            "`get {key}` after it: {} instead of {content:?}",
            got["items"][0]["value"]["content"]
        ));
    }
    clean(dir)?;
    let now = state(dir, &case.revs)?;
    compare(&now, before, after, acked)?;
    rebuilt_agrees(dir, &case.revs, &now, before, after)?;
    if let (true, Some((marker, packs_too))) = (acked, case.erased) {
        erased(dir, marker, packs_too, "the command succeeded, yet")?;
    }
    if case.remote {
        // What the remote's branch is, seen from here: as before or as pushed.
        ok(dir, &["fetch", "origin"])?;
        let seen = export(dir, "origin/main")?;
        let pushed = &after["main"];
        if &seen != pushed && (acked || seen != before["origin/main"]) {
            return Err(format!(
                "the remote's main, fetched, is neither as before nor as pushed: {}",
                difference(&seen, pushed)
            ));
        }
    }
    if case.rerun && !acked {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        ok(dir, &args).map_err(|e| format!("the re-run: {e}"))?;
        compare(&state(dir, &case.revs)?, after, after, true)
            .map_err(|e| format!("after the re-run, {e}"))?;
        if let Some((marker, packs_too)) = case.erased {
            erased(dir, marker, packs_too, "after the re-run")?;
        }
        clean(dir).map_err(|e| format!("after the re-run, {e}"))?;
    }
    // Writes go on.
    ok(
        dir,
        &["remember", "written after the fault", "-p", "crash.after"],
    )?;
    let got = ok(dir, &["get", key, "crash.after"])?;
    let contents = [
        &got["items"][0]["value"]["content"],
        &got["items"][1]["value"]["content"],
    ];
    if contents != [content, "written after the fault"] {
        return Err(format!("`get` after a new write: {contents:?}"));
    }
    Ok(())
}
