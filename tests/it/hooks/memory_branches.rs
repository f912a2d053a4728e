//! `sync-branch`, `branch-match` and repo mode, through the command line.

use serde_json::json;

use super::{answer, Project};

/// A project whose store exists (made by a session start).
fn started() -> Project {
    let p = Project::new();
    let input = json!({"cwd": p.repo, "hook_event_name": "SessionStart", "source": "startup"});
    answer(&p.hook("claude-code", "session-start", &input)).unwrap();
    p
}

#[test]
fn sync_branch_promotes_inserts_and_updates_and_never_deletes() {
    let p = started();
    for (c, k) in [
        ("main only", "project.main.only"),
        ("old value", "project.shared.value"),
        ("same everywhere", "project.same.value"),
    ] {
        assert_eq!(p.cli(&["remember", c, "-p", k]).0, 0);
    }
    assert_eq!(p.cli(&["checkout", "--create", "feature"]).0, 0);
    for (c, k) in [
        ("new on the branch", "project.branch.new"),
        ("new value", "project.shared.value"),
        ("other namespace", "notes:project.other.ns"),
    ] {
        assert_eq!(p.cli(&["remember", c, "-p", k]).0, 0);
    }
    assert_eq!(p.cli(&["forget", "project.main.only"]).0, 0);
    assert_eq!(p.cli(&["checkout", "main"]).0, 0);

    let (code, dry) = p.cli(&["sync-branch", "feature", "--dry-run"]);
    assert_eq!(code, 0, "{dry}");
    assert_eq!(dry["added_keys"], json!(["project.branch.new"]));
    assert_eq!(dry["updated_keys"], json!(["project.shared.value"]));
    assert_eq!(
        (dry["dry_run"].clone(), dry["commit_hash"].clone()),
        (json!(true), json!(null))
    );
    assert_eq!(dry["restored_branch"], "main");

    // Not on a terminal, without --yes: nothing written, the preview in the failure.
    let (code, refused) = p.cli(&["sync-branch", "feature"]);
    assert_eq!(code, 1, "{refused}");
    assert_eq!(refused["success"], false);
    assert!(refused["error"].as_str().unwrap().contains("--yes"));
    assert_eq!(refused["added_keys"], json!(["project.branch.new"]));

    let (code, done) = p.cli(&["sync-branch", "feature", "--yes"]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["success"], true);
    assert_eq!(done["dry_run"], false);
    assert_eq!(done["restored_branch"], "main");
    let hash = done["commit_hash"].as_str().unwrap().to_string();
    let (_, got) = p.cli(&[
        "get",
        "project.main.only",
        "project.shared.value",
        "project.branch.new",
        "project.same.value",
    ]);
    let contents: Vec<_> = got["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["value"]["content"].clone())
        .collect();
    assert_eq!(
        contents,
        vec![
            json!("main only"),
            json!("new value"),
            json!("new on the branch"),
            json!("same everywhere")
        ]
    );
    let (code, other) = p.cli(&["get", "project.other.ns", "-n", "notes"]);
    assert_eq!(code, 1, "only namespace default is promoted: {other}");
    assert!(other["error"]
        .as_str()
        .unwrap()
        .contains("namespace 'notes' not found"));
    let (_, log) = p.cli(&["log", "-n", "1"]);
    assert_eq!(log["commits"][0]["hash"], hash.as_str());
    assert_eq!(
        log["commits"][0]["message"],
        "Sync branch 'feature' into main"
    );
    assert_eq!(p.cli(&["status"]).1["branch"], "main", "HEAD did not move");

    // Again: nothing left to promote, nothing written.
    let (code, again) = p.cli(&["sync-branch", "feature"]);
    assert_eq!((code, again["commit_hash"].clone()), (0, json!(null)));
    // A missing target or source is not found; the same branch twice is an error.
    assert_eq!(
        p.cli(&["sync-branch", "feature", "--into", "nope", "--yes"])
            .0,
        2
    );
    assert_eq!(p.cli(&["sync-branch", "nope", "--yes"]).0, 2);
    assert_eq!(p.cli(&["sync-branch", "main", "--yes"]).0, 1);
}

#[test]
fn branch_match_turns_following_off_and_on_and_lists_memory_branches() {
    let p = started();
    let (code, st) = p.cli(&["branch-match"]);
    assert_eq!(code, 0, "{st}");
    assert_eq!(
        (
            st["enabled"].clone(),
            st["memory_branch"].clone(),
            st["code_branch"].clone()
        ),
        (json!(true), json!("main"), json!("main"))
    );
    assert_eq!(st["matched"], true);

    assert_eq!(p.cli(&["branch-match", "off"]).1["enabled"], false);
    p.git(&["checkout", "-q", "-b", "side"]);
    let prompt = json!({"cwd": p.repo, "hook_event_name": "UserPromptSubmit",
                        "prompt": "Please look at the parser module for me"});
    answer(&p.hook("claude-code", "user-prompt-submit", &prompt));
    assert_eq!(p.cli(&["status"]).1["branch"], "main", "following is off");
    let (code, _) = p.cli(&["branch-match", "follow"]);
    assert_eq!(code, 1, "follow refuses while following is off");

    assert_eq!(p.cli(&["branch-match", "on"]).1["enabled"], true);
    let (code, f) = p.cli(&["branch-match", "follow"]);
    assert_eq!(code, 0, "{f}");
    assert_eq!(
        (f["branch"].clone(), f["created"].clone()),
        (json!("side"), json!(true))
    );
    assert_eq!(
        p.cli(&["remember", "side work", "-p", "project.side.work"])
            .0,
        0
    );

    // Back on main, the memory branch is listed with its work and its code branch.
    p.git(&["checkout", "-q", "main"]);
    let (_, f) = p.cli(&["branch-match", "follow"]);
    assert_eq!(f["branch"], "main");
    let (_, st) = p.cli(&["branch-match", "status"]);
    let side = &st["branches"][0];
    assert_eq!(side["name"], "side");
    assert_eq!(
        (side["ahead"].clone(), side["pending_keys"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(side["code_branch_exists"], true);
    assert_eq!(side["code_merged"], false);
    assert_eq!(
        (side["unmerged"].clone(), side["stale"].clone()),
        (json!(true), json!(false))
    );

    // A session start on main says so; once the code branch is gone and 60 days have passed,
    // the branch is stale.
    let start = json!({"cwd": p.repo, "hook_event_name": "SessionStart", "source": "startup"});
    let v = answer(&p.hook("claude-code", "session-start", &start));
    let ctx = super::context(&v);
    assert!(
        ctx.contains("- side: 1 commit ahead, 1 key to promote"),
        "{ctx}"
    );
    p.git(&["branch", "-q", "-D", "side"]);
    let later = (1767225600 + 61 * 86400).to_string();
    let o = p
        .memoir()
        .args(["--json", "branch-match"])
        .env("MEMOIR_NOW", &later)
        .output()
        .unwrap();
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let side = &st["branches"][0];
    assert_eq!(
        (side["code_branch_exists"].clone(), side["stale"].clone()),
        (json!(false), json!(true))
    );
    let o = p.hook_with(
        "claude-code",
        "session-start",
        &start,
        &[("MEMOIR_NOW", later.as_str())],
    );
    let ctx = super::context(&answer(&o));
    assert!(ctx.contains("## Stale memory branches"), "{ctx}");
    assert!(ctx.contains("memoir branch -D side"), "{ctx}");
}

#[test]
fn repo_mode_finds_the_projects_store_from_any_worktree_and_repo_insists() {
    let p = started();
    assert_eq!(
        p.cli(&["remember", "shared", "-p", "project.shared.fact"])
            .0,
        0
    );
    // A subdirectory and a linked worktree of the repository use the same store.
    std::fs::create_dir_all(p.repo.join("src/deep")).unwrap();
    let wt = p.home.join("wt");
    p.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "wt-branch",
        wt.to_str().unwrap(),
    ]);
    for dir in [p.repo.join("src/deep"), wt.clone()] {
        let o = p
            .memoir()
            .current_dir(&dir)
            .args(["--json", "get", "project.shared.fact"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["items"][0]["found"], true, "{}", dir.display());
    }
    // -s and MEMOIR_STORE come first; outside a repository, the current directory.
    let other = p.home.join("other");
    let o = p
        .memoir()
        .args(["--json", "new"])
        .arg(&other)
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = p
        .memoir()
        .env("MEMOIR_STORE", &other)
        .args(["--json", "status"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["path"], other.to_str().unwrap());
    let o = p
        .memoir()
        .current_dir(&other)
        .args(["--json", "status"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["path"],
        other.to_str().unwrap(),
        "a store's own .git is no repository"
    );
    let o = p
        .memoir()
        .current_dir(&p.home)
        .args(["--json", "--repo", "status"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "--repo outside a repository");
    let o = p
        .memoir()
        .current_dir(&p.repo)
        .args(["--json", "--repo", "status"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["path"], p.store().to_str().unwrap());
}
