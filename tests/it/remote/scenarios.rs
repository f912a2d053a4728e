//! Sharing memory between stores: clone, push, fetch and pull both ways with merges, racing
//! pushers, and a purge carried to the remote.

use super::{content, ok, remember, run, Place};
use crate::common::new_store;

/// Two machines share one memory through `place`.
fn both_directions(place: &Place) {
    let dir = tempfile::tempdir().unwrap();
    let env = place.env();
    let url = place.url();
    let a = new_store(&dir.path().join("a"));
    remember(&a, "prefs.editor", "vim, with relative numbers");
    ok(&a, &env, &["remote", "add", "origin", &url], 0);
    let pushed = ok(&a, &env, &["push"], 0);
    assert_eq!(pushed["status"], "created");
    assert!(pushed["objects_sent"].as_u64().unwrap() >= 4, "{pushed}");

    // Machine B clones, and sees A's memory and its provenance.
    let b = dir.path().join("b");
    let cloned = ok(dir.path(), &env, &["clone", &url, b.to_str().unwrap()], 0);
    assert_eq!(cloned["branch"], "main");
    assert_eq!(cloned["commit"], pushed["commit"]);
    assert_eq!(
        content(&b, "prefs.editor").as_deref(),
        Some("vim, with relative numbers")
    );
    let fsck = ok(&b, &[], &["fsck"], 0);
    assert_eq!(fsck["clean"], true);

    // B adds a memory and pushes; A fetches, compares, pulls (fast-forward).
    remember(&b, "prefs.shell", "fish");
    let p = ok(&b, &env, &["push"], 0);
    assert_eq!(p["status"], "fast_forward");
    assert!(
        p["objects_sent"].as_u64().unwrap() <= 8,
        "an incremental push sends the change only: {p}"
    );
    let f = ok(&a, &env, &["fetch"], 0);
    assert_eq!(f["branches"][0]["status"], "updated");
    let d = ok(&a, &[], &["diff", "main", "origin/main"], 0);
    assert_eq!(d["count"], 1, "{d}");
    assert_eq!(d["changes"][0]["key"], "prefs.shell");
    assert_eq!(d["changes"][0]["operation"], "added");
    let pulled = ok(&a, &env, &["pull"], 0);
    assert_eq!(pulled["merge"]["kind"], "fast_forward");
    assert_eq!(content(&a, "prefs.shell").as_deref(), Some("fish"));

    // Both change different keys: B's push is refused until B pulls (a merge), then A
    // pulls B's merge.
    remember(&a, "prefs.theme", "dark");
    remember(&b, "prefs.font", "Iosevka");
    ok(&a, &env, &["push"], 0);
    let refused = run(&b, &env, &["push"]);
    assert_eq!(refused.code, 6, "{} {}", refused.stdout, refused.stderr);
    assert_eq!(refused.json()["code"], 6);
    let merged = ok(&b, &env, &["pull"], 0);
    assert_eq!(merged["merge"]["kind"], "merge", "{merged}");
    ok(&b, &env, &["push"], 0);
    let back = ok(&a, &env, &["pull", "--ff-only"], 0);
    assert_eq!(back["merge"]["kind"], "fast_forward");
    for s in [&a, &b] {
        assert_eq!(content(s, "prefs.theme").as_deref(), Some("dark"));
        assert_eq!(content(s, "prefs.font").as_deref(), Some("Iosevka"));
    }
    // Blame crosses machines: who wrote the font, through the merge.
    let blame = ok(&a, &[], &["blame", "prefs.font"], 0);
    assert!(blame.to_string().contains("prefs.font"), "{blame}");
    let heads: Vec<_> = [&a, &b]
        .iter()
        .map(|s| ok(s, &[], &["log", "-n", "1"], 0)["commits"][0]["hash"].clone())
        .collect();
    assert_eq!(heads[0], heads[1], "both machines end on the same commit");

    // A conflicting change is settled by a strategy on pull.
    ok(
        &a,
        &[],
        &["remember", "--replace", "-p", "prefs.editor", "helix"],
        0,
    );
    ok(&a, &env, &["push"], 0);
    ok(
        &b,
        &env,
        &["remember", "--replace", "-p", "prefs.editor", "emacs"],
        0,
    );
    let conflicted = run(&b, &env, &["pull"]);
    assert_eq!(conflicted.code, 4, "{}", conflicted.stdout);
    ok(&b, &env, &["pull", "-S", "theirs"], 0);
    assert_eq!(content(&b, "prefs.editor").as_deref(), Some("helix"));

    // Branches other than main travel too, and remote list shows tracking branches.
    ok(&b, &[], &["branch", "agent-1"], 0);
    ok(&b, &env, &["push", "origin", "agent-1"], 0);
    ok(&a, &env, &["fetch"], 0);
    let list = ok(&a, &[], &["remote", "list"], 0);
    let branches = list["remotes"][0]["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 2, "{list}");
    ok(&a, &[], &["get", "--at", "origin/agent-1", "prefs.font"], 0);
}

#[test]
fn share_memory_through_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    both_directions(&Place::Dir(dir.path().join("remote")));
}

#[test]
fn share_memory_through_s3() {
    let Some(place) = Place::s3("memoir-share") else {
        return;
    };
    both_directions(&place);
}

/// Two machines push the same branch at once, many times: each time exactly one wins, the
/// other is told "not a fast-forward" (exit 6), and after a pull its push succeeds.
#[test]
fn racing_pushers_on_s3_have_one_winner() {
    let Some(place) = Place::s3("memoir-race") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let env = place.env();
    let a = new_store(&dir.path().join("a"));
    ok(&a, &env, &["remote", "add", "origin", &place.url()], 0);
    ok(&a, &env, &["push"], 0);
    let b = dir.path().join("b");
    ok(
        dir.path(),
        &env,
        &["clone", &place.url(), b.to_str().unwrap()],
        0,
    );
    for round in 0..6 {
        remember(&a, &format!("race.a{round}"), "from a");
        remember(&b, &format!("race.b{round}"), "from b");
        let (ra, rb) = std::thread::scope(|s| {
            let ta = s.spawn(|| run(&a, &env, &["push"]));
            let tb = s.spawn(|| run(&b, &env, &["push"]));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let mut codes = [ra.code, rb.code];
        codes.sort();
        assert_eq!(
            codes,
            [0, 6],
            "round {round}: a {} {} / b {} {}",
            ra.stdout,
            ra.stderr,
            rb.stdout,
            rb.stderr
        );
        let loser = if ra.code == 6 { &a } else { &b };
        ok(loser, &env, &["pull"], 0);
        ok(loser, &env, &["push"], 0);
        let winner = if ra.code == 6 { &b } else { &a };
        ok(winner, &env, &["pull", "--ff-only"], 0);
    }
    for s in [&a, &b] {
        for round in 0..6 {
            assert!(content(s, &format!("race.a{round}")).is_some());
            assert!(content(s, &format!("race.b{round}")).is_some());
        }
    }
    // The remote's log of pushes: one version per successful push, numbered densely.
    let versions: Vec<String> = place
        .objects()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("refs/main/"))
        .collect();
    assert_eq!(versions.len(), 1 + 6 * 2, "{versions:?}");
}

/// A purged memory leaves the remote too: after the purge a plain push is refused (the
/// remote has history this store no longer has), `push --force` replaces it, and
/// `gc --remote` removes every object that held the content.
fn purge_reaches_the_remote(place: &Place) {
    let dir = tempfile::tempdir().unwrap();
    let env = place.env();
    let a = new_store(&dir.path().join("a"));
    let secret = "the staging database password is hunter2-XYZZY";
    remember(&a, "notes.staging", secret);
    remember(&a, "notes.other", "keep this one");
    ok(&a, &env, &["remote", "add", "origin", &place.url()], 0);
    ok(&a, &env, &["push"], 0);
    let holds = |p: &Place| {
        p.objects()
            .iter()
            .any(|(_, b)| b.windows(12).any(|w| w == b"hunter2-XYZZ"))
    };
    assert!(holds(place), "the pushed content is on the remote");

    let purged = run(&a, &env, &["forget", "--purge", "notes.staging"]);
    assert_eq!(purged.code, 0, "{}", purged.stderr);
    assert_eq!(purged.json()["remotes_keep"], serde_json::json!(["origin"]));
    let human = super::super::common::memoir()
        .arg("-s")
        .arg(&a)
        .args(["forget", "--purge", "notes.staging"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("remotes keep what was pushed") && text.contains("push --force"),
        "{text}"
    );

    let refused = run(&a, &env, &["push"]);
    assert_eq!(refused.code, 6, "{}", refused.stdout);
    let forced = ok(&a, &env, &["push", "--force"], 0);
    assert_eq!(forced["status"], "forced");
    assert!(holds(place), "the old packs stay until gc --remote");
    let gc = ok(&a, &env, &["gc", "--remote", "origin", "--grace", "0"], 0);
    assert!(gc["objects_removed"].as_u64().unwrap() > 0, "{gc}");
    assert!(
        !holds(place),
        "no object of the remote holds the purged content"
    );

    // The remote still serves what was kept.
    let c = dir.path().join("c");
    ok(
        dir.path(),
        &env,
        &["clone", &place.url(), c.to_str().unwrap()],
        0,
    );
    assert_eq!(content(&c, "notes.other").as_deref(), Some("keep this one"));
    assert_eq!(content(&c, "notes.staging"), None);
    assert_eq!(ok(&c, &[], &["fsck"], 0)["clean"], true);
}

#[test]
fn purge_then_force_push_and_gc_remote_in_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    purge_reaches_the_remote(&Place::Dir(dir.path().join("remote")));
}

#[test]
fn purge_then_force_push_and_gc_remote_on_s3() {
    let Some(place) = Place::s3("memoir-purge") else {
        return;
    };
    purge_reaches_the_remote(&place);
}

/// Another store on the machine as a remote: clone it, push into it (its branch moves,
/// and it reads the result), pull its own later writes back, and refuse a stale push.
#[test]
fn another_store_is_a_remote() {
    let dir = tempfile::tempdir().unwrap();
    let team = new_store(&dir.path().join("team"));
    remember(&team, "team.style", "tabs, not spaces");
    let agent = dir.path().join("agent");
    let cloned = ok(
        dir.path(),
        &[],
        &["clone", team.to_str().unwrap(), agent.to_str().unwrap()],
        0,
    );
    assert_eq!(cloned["branch"], "main");
    assert_eq!(
        content(&agent, "team.style").as_deref(),
        Some("tabs, not spaces")
    );

    remember(&agent, "team.tests", "pytest -q");
    let p = ok(&agent, &[], &["push"], 0);
    assert_eq!(p["status"], "fast_forward");
    assert!(p["objects_sent"].as_u64().unwrap() >= 3, "{p}");
    assert_eq!(content(&team, "team.tests").as_deref(), Some("pytest -q"));
    assert_eq!(ok(&team, &[], &["fsck"], 0)["clean"], true);
    let reflog = ok(&team, &[], &["reflog"], 0);
    assert!(reflog.to_string().contains("push: from"), "{reflog}");

    // The team store moves on its own; the agent's next push is refused until it pulls.
    remember(&team, "team.review", "two approvals");
    remember(&agent, "team.lint", "ruff");
    let refused = run(&agent, &[], &["push"]);
    assert_eq!(refused.code, 6, "{}", refused.stdout);
    let pulled = ok(&agent, &[], &["pull"], 0);
    assert_eq!(pulled["merge"]["kind"], "merge");
    ok(&agent, &[], &["push"], 0);
    for s in [&team, &agent] {
        assert_eq!(content(s, "team.review").as_deref(), Some("two approvals"));
        assert_eq!(content(s, "team.lint").as_deref(), Some("ruff"));
    }
    let gc = run(&agent, &[], &["gc", "--remote", "origin"]);
    assert_eq!(
        gc.code, 1,
        "gc --remote is for object storage: {}",
        gc.stdout
    );
}
