//! The calls the reference's Claude Code plugin makes (its hooks and slash commands, read
//! from `plugins/claude-code` of memoir-ai), run on memoir, with the JSON members the
//! plugin reads.

use std::process::Command;

use serde_json::json;

use super::Project;

const TEAM: &str = "---\nname: team\ndescription: Our own categories.\n---\n\n# Team taxonomy\n\n## runbook\nWhat to do when something breaks.\n\nExamples:\n- runbook.deploy.rollback: Roll back with make rollback\n";

#[test]
fn the_reference_plugins_calls_work_and_give_what_it_reads() {
    let p = Project::new();
    let store = p.store();
    let s = store.to_str().unwrap();
    let team = p.home.join("team.md");
    std::fs::write(&team, TEAM).unwrap();

    // ensure-store.sh: `memoir new STORE --taxonomy-builtin`, then `<store>/.git` is its test.
    let (code, v) = p.cli(&["new", s, "--taxonomy-builtin"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["success"], true);
    assert_eq!(v["path"], s);
    assert_eq!(v["taxonomy_loaded"]["builtin"], true);
    assert!(store.join(".git").is_dir());
    let o = Command::new("git")
        .arg("-C")
        .arg(&store)
        .args(["rev-parse", "--is-inside-work-tree"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "true",
        "a valid git repository"
    );
    // The plugin keeps its files there; memoir's fsck does not mind.
    std::fs::write(store.join(".git/plugin-ignored-branches"), "old\n").unwrap();
    let (code, f) = p.cli(&["-s", s, "fsck"]);
    assert_eq!(code, 0, "{f}");

    // `taxonomy load FILE` (custom taxonomies at first start).
    let (code, v) = p.cli(&["-s", s, "taxonomy", "load", team.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    // `new -t FILE` too; a missing file is exit 2 and makes no store.
    let other = p.home.join("other");
    let (code, v) = p.cli(&[
        "new",
        other.to_str().unwrap(),
        "--taxonomy-builtin",
        "-t",
        team.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["taxonomy_loaded"]["taxonomy"], "team");
    let gone = p.home.join("gone");
    let (code, _) = p.cli(&["new", gone.to_str().unwrap(), "-t", "/nonexistent/t.md"]);
    assert_eq!(code, 2);
    assert!(!gone.exists());

    // remember -p / --path, get, status, summarize taxonomy, summarize --keys.
    let mem = |args: &[&str]| p.cli(&[&["-s", s][..], args].concat());
    assert_eq!(
        mem(&["remember", "Use pytest", "-p", "preferences.coding.testing"]).0,
        0
    );
    assert_eq!(
        mem(&[
            "remember",
            "Deploy on Fridays",
            "--path",
            "project.deploy.day"
        ])
        .0,
        0
    );
    let (_, st) = mem(&["status"]);
    assert_eq!(
        (st["branch"].clone(), st["memory_count"].clone()),
        (json!("main"), json!(2))
    );
    let (_, g) = mem(&["get", "preferences.coding.testing"]);
    assert_eq!(g["items"][0]["value"]["content"], "Use pytest");
    let (_, sum) = mem(&["summarize", "taxonomy"]);
    assert_eq!(sum["namespaces"], json!({"default": 2}));
    let (_, keys) = mem(&["summarize", "--keys", "*", "-n", "default"]);
    assert_eq!(
        keys["matching_keys"],
        json!({"default": ["preferences.coding.testing", "project.deploy.day"]})
    );

    // auto_match_memoir_branch: `branch NAME --from main`, `checkout NAME`, `branch` list.
    assert_eq!(mem(&["branch", "feature/x", "--from", "main"]).0, 0);
    assert_eq!(mem(&["checkout", "feature/x"]).0, 0);
    let (_, b) = mem(&["branch"]);
    assert_eq!(b["branches"], json!(["feature/x", "main"]));
    assert_eq!(b["current"], "feature/x");
    assert_eq!(
        mem(&["remember", "Login uses OAuth", "-p", "project.login.auth"]).0,
        0
    );
    // auto_promote_merged_branches: `sync-branch B --into main --yes`.
    let (code, v) = mem(&["sync-branch", "feature/x", "--into", "main", "--yes"]);
    assert_eq!(code, 0, "{v}");
    for member in [
        "success",
        "added_keys",
        "updated_keys",
        "dry_run",
        "commit_hash",
        "restored_branch",
    ] {
        assert!(v.get(member).is_some(), "{member}: {v}");
    }
    assert_eq!(v["restored_branch"], "feature/x");
    // `checkout -b` and `--create`.
    assert_eq!(mem(&["checkout", "-b", "one"]).0, 0);
    let (code, v) = mem(&["checkout", "--create", "two"]);
    assert_eq!(
        (code, v["branch"].clone(), v["created"].clone()),
        (0, json!("two"), json!(true))
    );

    // `--json-schema` / `--machine-readable`: the command line for agents.
    for flag in ["--json-schema", "--machine-readable"] {
        let o = p.memoir().arg(flag).output().unwrap();
        assert!(o.status.success());
        let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let branch_cmds: Vec<&str> = schema["commands"]["branch"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(branch_cmds.contains(&"sync-branch") && branch_cmds.contains(&"checkout"));
        let new = schema["commands"]["store"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "new")
            .unwrap();
        let flags: Vec<String> = new["options"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|o| {
                o["flags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap().to_string())
            })
            .collect();
        assert!(
            flags.contains(&"--taxonomy-builtin".to_string()),
            "{flags:?}"
        );
        assert!(schema["global_options"].to_string().contains("--repo"));
    }
}

#[test]
fn a_store_made_before_gets_its_git_directory_on_its_next_write() {
    let p = Project::new();
    let store = p.home.join("s");
    let s = store.to_str().unwrap();
    assert_eq!(p.cli(&["new", s]).0, 0);
    std::fs::remove_dir_all(store.join(".git")).unwrap();
    assert_eq!(p.cli(&["-s", s, "status"]).0, 0);
    assert!(
        !store.join(".git").exists(),
        "a read leaves the directory alone"
    );
    assert_eq!(p.cli(&["-s", s, "remember", "x", "-p", "a.b"]).0, 0);
    assert!(store.join(".git/HEAD").is_file());
}

/// `git` in the store's directory, as the reference plugin asks it (stdout, trimmed).
fn store_git(store: &std::path::Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The reference plugin finds unmerged memory branches by asking `git` in the store's
/// directory (`rev-list --count main..B`, `log -1 --format=%ct B`) right after `memoir
/// branch`: the mirror that listing keeps answers as memoir's own count does.
#[test]
fn the_store_git_mirror_answers_the_plugins_branch_questions() {
    let p = Project::new();
    let store = p.store();
    let s = store.to_str().unwrap();
    assert_eq!(p.cli(&["new", s]).0, 0);
    assert_eq!(p.cli(&["-s", s, "remember", "on main", "-p", "a.one"]).0, 0);
    assert_eq!(
        p.cli(&["-s", s, "branch", "feature/x", "--from", "main"]).0,
        0
    );
    assert_eq!(p.cli(&["-s", s, "checkout", "feature/x"]).0, 0);
    for i in 0..3 {
        let path = format!("b.k{i}");
        assert_eq!(
            p.cli(&["-s", s, "remember", "on the branch", "-p", &path])
                .0,
            0
        );
    }
    assert_eq!(p.cli(&["-s", s, "checkout", "main"]).0, 0);
    assert_eq!(
        p.cli(&["-s", s, "remember", "main again", "-p", "a.two"]).0,
        0
    );

    let (code, v) = p.cli(&["-s", s, "branch"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        store_git(&store, &["rev-list", "--count", "main..feature/x"]),
        "3"
    );
    assert_eq!(
        store_git(&store, &["rev-list", "--count", "feature/x..main"]),
        "1"
    );
    assert_eq!(
        store_git(&store, &["log", "-1", "--format=%ct", "feature/x"]),
        "1767225600"
    );
    let tip = p.cli(&["-s", s, "log", "feature/x", "-n", "1"]).1["commits"][0]["hash"].clone();
    assert_eq!(
        store_git(&store, &["log", "-1", "--format=%s", "feature/x"]),
        format!("memoir commit {}", tip.as_str().unwrap())
    );
    // The mirror is a sound git repository, and memoir's own figure agrees with it.
    store_git(&store, &["fsck", "--strict", "--no-dangling"]);
    let st = p.cli(&["-s", s, "branch-match"]).1;
    let ahead = st["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "feature/x")
        .unwrap()["ahead"]
        .clone();
    assert_eq!(ahead, 3, "{st}");

    // Promoted into main, then deleted: the mirror follows the store.
    let marker = store.join(".git/plugin-synced-branches/feature/x");
    assert_eq!(
        p.cli(&["-s", s, "sync-branch", "feature/x", "--yes", "--dry-run"])
            .0,
        0
    );
    assert!(!marker.exists(), "a dry run marks nothing");
    assert_eq!(p.cli(&["-s", s, "sync-branch", "feature/x", "--yes"]).0, 0);
    // The plugin's marker that the branch was promoted, at the store's clock.
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "1767225600");
    p.cli(&["-s", s, "branch"]);
    let st = p.cli(&["-s", s, "branch-match"]).1;
    let ahead = st["branches"][0]["ahead"].to_string();
    assert_eq!(
        store_git(&store, &["rev-list", "--count", "main..feature/x"]),
        ahead
    );
    assert_eq!(p.cli(&["-s", s, "branch", "-D", "feature/x"]).0, 0);
    p.cli(&["-s", s, "branch"]);
    assert_eq!(
        store_git(&store, &["for-each-ref", "--format=%(refname)"]),
        "refs/heads/main"
    );
    // memoir's fsck ignores the mirror.
    assert_eq!(p.cli(&["-s", s, "fsck"]).0, 0);
}
