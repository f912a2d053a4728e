//! The API calls behind the supervisor's views: a diff a page at a time (and from the merge
//! base), history filtered by agent, date and over every branch, the agents' summary, search
//! by agent, and tree levels in natural order with previews and paging.

use std::path::Path;

use serde_json::{json, Value};

use super::{cli_at, seeded, Ui, T0};
use crate::common::memoir;

/// Runs `memoir --json ARGS` on `store` as agent `actor` from `source` at time `now`.
fn as_agent(store: &Path, actor: &str, source: &str, now: i64, args: &[&str]) -> Value {
    let o = memoir()
        .env("MEMOIR_NOW", now.to_string())
        .env("MEMOIR_ACTOR", actor)
        .env("MEMOIR_SOURCE", source)
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The seeded store, and two agents writing on branches of their own.
pub(super) fn with_agents(dir: &Path) -> std::path::PathBuf {
    let store = seeded(dir);
    let day = 86_400;
    as_agent(
        &store,
        "agent-1",
        "hook",
        T0 + 10 * day,
        &[
            "remember",
            "agent one learned this",
            "-p",
            "agents.one.fact",
            "--branch",
            "agent-1",
        ],
    );
    as_agent(
        &store,
        "agent-1",
        "hook",
        T0 + 11 * day,
        &[
            "remember",
            "and then this",
            "-p",
            "agents.one.more",
            "--branch",
            "agent-1",
        ],
    );
    as_agent(
        &store,
        "agent-2",
        "mcp",
        T0 + 12 * day,
        &[
            "remember",
            "agent two helix notes",
            "-p",
            "agents.two.fact",
            "--branch",
            "agent-2",
        ],
    );
    store
}

fn keys(v: &Value) -> Vec<String> {
    v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}:{}",
                c["namespace"].as_str().unwrap(),
                c["key"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_diff_pages_through_its_changes_and_gives_patches_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[]);
    // Every key of the store, compared with the first commit (the empty tree).
    let (code, first) = ui.get("/api/log?rev=HEAD&limit=200");
    assert_eq!(code, 200);
    let root = first["commits"].as_array().unwrap().last().unwrap()["hash"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, whole) = ui.get(&format!("/api/diff?from={root}&to=HEAD"));
    assert_eq!(code, 200, "{whole}");
    let want: Vec<String> = keys(&whole);
    assert_eq!(want.len(), 5);
    let mut got = Vec::new();
    let mut after = String::new();
    let mut pages = 0;
    loop {
        let (code, page) = ui.get(&format!(
            "/api/changes?from={root}&to=HEAD&limit=2&after={after}"
        ));
        assert_eq!(code, 200, "{page}");
        assert!(page["changes"].as_array().unwrap().len() <= 2);
        got.extend(keys(&page));
        pages += 1;
        match page["next"].as_str() {
            Some(n) => after = n.to_string(),
            None => break,
        }
    }
    assert_eq!(got, want);
    assert_eq!(pages, 3);
    let (code, counts) = ui.get(&format!("/api/change-counts?from={root}&to=HEAD"));
    assert_eq!(code, 200);
    assert_eq!(counts["count"], 5);
    assert_eq!(counts["added"], 5);
    // One change with its patch.
    let (code, one) = ui.get("/api/change?from=HEAD~4&to=HEAD&key=preferences.editor");
    assert_eq!(code, 200, "{one}");
    let patch = one["change"]["patch"].as_str().unwrap();
    assert!(
        patch.contains("-uses vim") && patch.contains("+uses helix now"),
        "{patch}"
    );
    assert_eq!(one["change"]["operation"], "modified");
    // A key that did not change is not found; a bad limit is a usage error.
    let (code, _) = ui.get("/api/change?from=HEAD~1&to=HEAD&key=projects.memoir.language");
    assert_eq!(code, 404);
    let (code, _) = ui.get("/api/changes?limit=0");
    assert_eq!(code, 400);
}

#[test]
fn compare_from_the_merge_base_shows_what_a_branch_adds() {
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let (code, out) = cli_at(
        &store,
        T0 + 30 * 86_400,
        &["remember", "later on main", "-p", "main.later"],
    );
    assert_eq!(code, 0, "{out}");
    let ui = Ui::start(&store, &[]);
    // Tip against tip, main's later writes look removed on agent-1 ...
    let (_, tips) = ui.get("/api/change-counts?from=main&to=agent-1");
    assert!(tips["removed"].as_u64().unwrap() > 0, "{tips}");
    // ... from the merge base, only what agent-1 added.
    let (code, page) = ui.get("/api/changes?from=main&to=agent-1&base=1");
    assert_eq!(code, 200, "{page}");
    assert_eq!(
        keys(&page),
        ["default:agents.one.fact", "default:agents.one.more"]
    );
    assert_eq!(page["since_base"], true);
    let (_, counts) = ui.get("/api/change-counts?from=main&to=agent-1&base=1");
    assert_eq!(
        (counts["added"].as_u64(), counts["removed"].as_u64()),
        (Some(2), Some(0))
    );
}

#[test]
fn history_filters_by_agent_and_date_over_every_branch() {
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let ui = Ui::start(&store, &[("MEMOIR_NOW", &(T0 + 100 * 86_400).to_string())]);
    let subjects = |v: &Value| -> Vec<String> {
        v["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["message"].as_str().unwrap().to_string())
            .collect()
    };
    let (code, one) = ui.get("/api/history?all=1&actor=agent-1");
    assert_eq!(code, 200, "{one}");
    assert_eq!(
        subjects(&one),
        [
            "Store agents.one.more in default",
            "Store agents.one.fact in default"
        ]
    );
    assert!(one["commits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["metadata"]["actor"] == "agent-1" && c["metadata"]["source"] == "hook"));
    // Without `all`, HEAD's branch (main) has none of the agents' commits.
    let (_, main) = ui.get("/api/history?actor=agent-1");
    assert_eq!(main["count"], 0);
    // Every branch, and the branches' tips to label them with.
    let (_, all) = ui.get("/api/history?all=1");
    assert_eq!(all["count"], 11, "{all}");
    let names: Vec<&str> = all["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["agent-1", "agent-2", "main", "side"]);
    // Dates: both ends included.
    let (_, since) = ui.get("/api/history?all=1&since=2026-01-12T12:00:00");
    assert_eq!(subjects(&since), ["Store agents.two.fact in default"]);
    let (_, until) = ui.get("/api/history?all=1&until=2026-01-01T01:00:00");
    assert_eq!(until["count"], 2, "{until}");
    let (code, bad) = ui.get("/api/history?since=not-a-date");
    assert_eq!(code, 400, "{bad}");
}

#[test]
fn agents_sum_up_who_wrote_where_and_when() {
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let ui = Ui::start(&store, &[]);
    let (code, out) = ui.get("/api/agents");
    assert_eq!(code, 200, "{out}");
    let agents = out["agents"].as_array().unwrap();
    let actors: Vec<Value> = agents.iter().map(|a| a["actor"].clone()).collect();
    // The most recently active first; the seeded commits record no agent.
    assert_eq!(actors, [json!("agent-2"), json!("agent-1"), Value::Null]);
    let one = &agents[1];
    assert_eq!(one["commits"], 2);
    assert_eq!(one["branches"], json!(["agent-1"]));
    assert_eq!(one["sources"], json!(["hook"]));
    assert_eq!(one["last"], "2026-01-12T00:00:00+00:00");
    assert_eq!(one["last_message"], "Store agents.one.more in default");
    assert_eq!(
        agents[2]["branches"],
        json!(["agent-1", "agent-2", "main", "side"])
    );
    assert_eq!(out["commits"], 11);
    // A new write is seen (the summary is kept only until a branch moves).
    as_agent(
        &store,
        "agent-3",
        "cli",
        T0 + 20 * 86_400,
        &[
            "remember",
            "three",
            "-p",
            "agents.three",
            "--branch",
            "agent-3",
        ],
    );
    let (_, again) = ui.get("/api/agents");
    assert_eq!(again["agents"][0]["actor"], "agent-3");
}

#[test]
fn search_and_blame_say_which_agent_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let ui = Ui::start(&store, &[]);
    let (code, hits) = ui.get("/api/search?q=helix&branch=agent-2");
    assert_eq!(code, 200, "{hits}");
    assert_eq!(hits["count"], 2, "{hits}");
    let (_, only) = ui.get("/api/search?q=helix&branch=agent-2&actor=agent-2");
    assert_eq!(only["count"], 1, "{only}");
    assert_eq!(only["hits"][0]["key"], "agents.two.fact");
    let (_, blame) = ui.get("/api/blame?key=agents.one.fact&lines=1&branch=agent-1");
    assert_eq!(blame["lines"][0]["actor"], "agent-1");
    assert_eq!(blame["lines"][0]["source"], "hook");
}

#[test]
fn tree_levels_sort_naturally_page_and_preview() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let lines: String = [7, 70, 8, 100, 9]
        .iter()
        .map(|n| {
            format!(
                "{}\n",
                json!({"key": format!("list.n{n}"), "namespace": "default",
                       "content": format!("item {n}\nsecond line"), "confidence": 1.0,
                       "timestamp": 1767225600.0})
            )
        })
        .collect();
    let file = dir.path().join("list.jsonl");
    std::fs::write(&file, lines).unwrap();
    let (code, out) = cli_at(&store, T0, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let ui = Ui::start(&store, &[]);
    let names = |v: &Value| -> Vec<String> {
        v["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, all) = ui.get("/api/tree?prefix=list&previews=1");
    assert_eq!(names(&all), ["n7", "n8", "n9", "n70", "n100"]);
    assert_eq!(all["children"][0]["preview"], "item 7 second line");
    let (_, page) = ui.get("/api/tree?prefix=list&offset=2&limit=2");
    assert_eq!(names(&page), ["n9", "n70"]);
    assert_eq!(
        (page["offset"].as_u64(), page["omitted"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(page["children"][0].get("preview").is_none());
}

#[test]
fn writes_go_to_the_branch_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let ui = Ui::start(&store, &[]);
    let (code, out) = ui.post(
        "/api/remember",
        &json!({"content": "noted by the supervisor", "paths": ["agents.two.review"], "branch": "agent-2"}),
    );
    assert_eq!(code, 200, "{out}");
    let (c, on_branch) = cli_at(
        &store,
        T0,
        &["get", "agents.two.review", "--branch", "agent-2"],
    );
    assert_eq!(c, 0);
    assert_eq!(on_branch["items"][0]["found"], true);
    let (_, on_main) = cli_at(&store, T0, &["get", "agents.two.review"]);
    assert_eq!(on_main["items"][0]["found"], false);
    let (code, out) = ui.post(
        "/api/forget",
        &json!({"key": "agents.two.fact", "branch": "agent-2"}),
    );
    assert_eq!(code, 200, "{out}");
    let (_, gone) = cli_at(
        &store,
        T0,
        &["get", "agents.two.fact", "--branch", "agent-2"],
    );
    assert_eq!(gone["items"][0]["found"], false);
}
