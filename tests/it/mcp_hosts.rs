//! What agent hosts expect of `memoir mcp` today, driven with rmcp's client over stdio on
//! real stores: every tool annotated, memories as resources (paged, read at a revision),
//! the `search`/`fetch` shapes of ChatGPT connectors, `memoir_capture` with a scripted model,
//! `memoir_taxonomy`, `memoir_sync_branch` and `memoir_memory` (Anthropic's memory tool).

use std::path::Path;

use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{json, Value};

use crate::common::{cli, new_store, text_of, Session as Server};

fn start(store: &Path, env: &[(&str, &str)]) -> Server {
    Server::stdio(store, &["-q"], &[], env)
}

fn commits(store: &Path) -> usize {
    let (code, log) = cli(store, &["log", "-n", "1000"]);
    assert_eq!(code, 0, "{log}");
    log["commits"].as_array().unwrap().len()
}

fn remember(store: &Path, content: &str, path: &str) {
    let (code, out) = cli(store, &["remember", content, "-p", path]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn every_tool_has_all_four_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = start(&store, &[]);
    let tools = s.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for new in [
        "memoir_capture",
        "memoir_taxonomy",
        "memoir_sync_branch",
        "memoir_memory",
        "search",
        "fetch",
    ] {
        assert!(names.contains(&new), "{new} missing from {names:?}");
    }
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        let hints = [
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ];
        assert!(hints.iter().all(Option::is_some), "{}: {a:?}", t.name);
        // Only capture reaches a model; nothing reaches the world otherwise.
        assert_eq!(
            a.open_world_hint,
            Some(t.name == "memoir_capture"),
            "{}",
            t.name
        );
    }
    let hint = |name: &str| {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        let a = t.annotations.clone().unwrap();
        (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
    };
    assert_eq!(hint("search"), (Some(true), Some(false), Some(true)));
    assert_eq!(hint("fetch"), (Some(true), Some(false), Some(true)));
    assert_eq!(
        hint("memoir_taxonomy"),
        (Some(true), Some(false), Some(true))
    );
    assert_eq!(hint("memoir_memory").1, Some(true));
    assert_eq!(
        hint("memoir_sync_branch"),
        (Some(false), Some(true), Some(true))
    );
    // The connector tools take exactly one string, as ChatGPT requires.
    for (name, arg) in [("search", "query"), ("fetch", "id")] {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        assert_eq!(t.input_schema["required"], json!([arg]), "{name}");
        assert_eq!(
            t.input_schema["properties"][arg]["type"],
            json!("string"),
            "{name}"
        );
    }
}

#[test]
fn memories_are_resources_listed_in_pages_and_read_at_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    // 130 keys, then a change, and memoir's own taxonomy namespace.
    let paths: Vec<String> = (0..130).map(|i| format!("notes.n{i:03}")).collect();
    for chunk in paths.chunks(10) {
        let mut args = vec!["remember", "first text"];
        for p in chunk {
            args.extend(["-p", p.as_str()]);
        }
        let (code, out) = cli(&store, &args);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = cli(
        &store,
        &["remember", "second text", "-p", "notes.n007", "--replace"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(cli(&store, &["taxonomy", "init"]).0, 0);

    let s = start(&store, &[]);
    let client = s.client();
    let first =
        s.rt.block_on(client.list_resources(None))
            .expect("resources/list");
    assert_eq!(first.resources.len(), 100);
    assert_eq!(first.resources[0].uri, "memoir://default/notes.n000");
    assert_eq!(first.resources[0].name, "default:notes.n000");
    let cursor = first.next_cursor.clone().expect("a second page");
    let second =
        s.rt.block_on(client.list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        )))
        .unwrap();
    assert_eq!(second.resources.len(), 30);
    assert_eq!(second.next_cursor, None);
    let all: Vec<&str> = first
        .resources
        .iter()
        .chain(&second.resources)
        .map(|r| r.uri.as_str())
        .collect();
    assert!(all.iter().all(|u| u.starts_with("memoir://default/notes.")));

    let read = |uri: &str| -> Result<String, String> {
        s.rt.block_on(client.read_resource(ReadResourceRequestParams::new(uri)))
            .map(|r| match &r.contents[0] {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => panic!("not text: {other:?}"),
            })
            .map_err(|e| e.to_string())
    };
    assert_eq!(read("memoir://default/notes.n007").unwrap(), "second text");
    // The taxonomy commit and the replace are the last two: HEAD~2 has the first text.
    assert_eq!(
        read("memoir://default/notes.n007?at=HEAD~2").unwrap(),
        "first text"
    );
    let missing = read("memoir://default/notes.none").unwrap_err();
    assert!(missing.contains("no memory"), "{missing}");
    let bad = read("file:///etc/passwd").unwrap_err();
    assert!(bad.contains("not a memory URI"), "{bad}");
    let templates = s.rt.block_on(client.list_resource_templates(None)).unwrap();
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "memoir://{namespace}/{path}"
    );
}

#[test]
fn search_and_fetch_answer_in_the_connector_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    remember(
        &store,
        "the staging database is postgres 16",
        "infra.database",
    );
    remember(&store, "prefers pytest", "preferences.testing");
    let s = start(&store, &[]);

    let r = s.call("search", json!({"query": "postgres"}));
    assert_eq!(r.is_error, Some(false));
    assert_eq!(r.content.len(), 1, "exactly one text item");
    let found: Value = serde_json::from_str(&text_of(&r)).expect("the text is JSON");
    assert_eq!(
        found,
        json!({"results": [{
            "id": "default:infra.database",
            "title": "infra.database",
            "url": "memoir://default/infra.database"
        }]})
    );
    assert_eq!(r.structured_content, Some(found.clone()));

    let r = s.call("fetch", json!({"id": "default:infra.database"}));
    assert_eq!(r.is_error, Some(false));
    let doc: Value = serde_json::from_str(&text_of(&r)).expect("the text is JSON");
    assert_eq!(doc["id"], "default:infra.database");
    assert_eq!(doc["title"], "infra.database");
    assert_eq!(doc["text"], "the staging database is postgres 16");
    assert_eq!(doc["url"], "memoir://default/infra.database");
    assert_eq!(doc["metadata"]["namespace"], "default");
    assert_eq!(doc["metadata"]["entries"], 1);

    let e = s.err("fetch", json!({"id": "default:no.such"}));
    assert_eq!(e["code"], 2);
    let none = s.ok("search", json!({"query": "kubernetes"}));
    assert_eq!(none, json!({"results": []}));
}

#[test]
fn capture_and_taxonomy_tools_work_with_a_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let script = dir.path().join("model.sh");
    std::fs::write(
        &script,
        "cat >/dev/null\nprintf 'preferences.testing.framework\\tThe user wants pytest for every test.\\n'\n",
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let s = start(&store, &[("MEMOIR_LLM_COMMAND", command.as_str())]);

    let r = s.ok(
        "memoir_capture",
        json!({"turn": "[Human] Always use pytest.\n[Assistant] Will do.", "dry_run": true}),
    );
    assert_eq!(r["dry_run"], true);
    assert_eq!(r["commit_hash"], Value::Null);
    let before = commits(&store);
    let r = s.ok(
        "memoir_capture",
        json!({"turn": "[Human] Always use pytest.\n[Assistant] Will do."}),
    );
    assert_eq!(r["captured"][0]["key"], "preferences.testing.framework");
    assert!(r["commit_hash"].is_string());
    assert_eq!(commits(&store), before + 1);
    let e = s.err("memoir_capture", json!({"turn": "x", "profile": "robot"}));
    assert_eq!(e["code"], 2);

    let list = s.ok("memoir_taxonomy", json!({"action": "list"}));
    let ids: Vec<&str> = list["categories"]
        .as_array()
        .expect("categories")
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"preferences"), "{list}");
    let show = s.ok(
        "memoir_taxonomy",
        json!({"action": "show", "id": "preferences"}),
    );
    assert_eq!(show["category"]["id"], "preferences", "{show}");
    let e = s.err("memoir_taxonomy", json!({"action": "show"}));
    assert_eq!(e["code"], 2);
}

#[test]
fn sync_branch_promotes_inserts_and_updates_and_never_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    remember(&store, "tabs", "style.indent");
    remember(&store, "old db", "infra.db");
    remember(&store, "kept on main", "team.lead");
    assert_eq!(cli(&store, &["branch", "feature"]).0, 0);
    let on = |branch: &str, content: &str, path: &str, policy: &str| {
        let (code, out) = cli(
            &store,
            &[
                "remember",
                content,
                "-p",
                path,
                "--branch",
                branch,
                "--merge-policy",
                policy,
            ],
        );
        assert_eq!(code, 0, "{out}");
    };
    on("feature", "new db", "infra.db", "replace");
    on("feature", "uses ruff", "tools.lint", "replace");
    on("feature", "other ns", "work:x.y", "replace");
    let (code, out) = cli(&store, &["forget", "team.lead", "--branch", "feature"]);
    assert_eq!(code, 0, "{out}");
    // main changes style.indent on its own; feature left it alone, so it stays.
    on("main", "spaces", "style.indent", "replace");

    let s = start(&store, &[]);
    let before = commits(&store);
    let dry = s.ok(
        "memoir_sync_branch",
        json!({"source": "feature", "dry_run": true}),
    );
    assert_eq!(dry["added_keys"], json!(["tools.lint"]));
    assert_eq!(dry["updated_keys"], json!(["infra.db"]));
    assert_eq!(dry["commit_hash"], Value::Null);
    assert_eq!(commits(&store), before);

    let done = s.ok("memoir_sync_branch", json!({"source": "feature"}));
    assert_eq!(done["success"], true);
    assert_eq!(done["target_branch"], "main");
    assert_eq!(done["restored_branch"], "main");
    assert!(done["commit_hash"].is_string());
    assert_eq!(commits(&store), before + 1);
    let g = s.ok(
        "memoir_get",
        json!({"keys": ["infra.db", "tools.lint", "team.lead", "style.indent", "work:x.y"]}),
    );
    let contents: Vec<Value> = g["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["value"]["content"].clone())
        .collect();
    assert_eq!(
        contents,
        [
            json!("new db"),
            json!("uses ruff"),
            json!("kept on main"),
            json!("spaces"),
            Value::Null
        ]
    );
    // Idempotent: nothing more to promote, no commit.
    let again = s.ok("memoir_sync_branch", json!({"source": "feature"}));
    assert_eq!(again["commit_hash"], Value::Null);
    assert_eq!(again["added_keys"], json!([]));
    assert_eq!(commits(&store), before + 1);

    let e = s.err("memoir_sync_branch", json!({"source": "nope"}));
    assert_eq!(e["code"], 2);
    assert!(e["error"].as_str().unwrap().contains("'nope'"), "{e}");
    let e = s.err("memoir_sync_branch", json!({"source": "main"}));
    assert_eq!(e["code"], 1);
}

#[test]
fn the_memory_tool_edits_memories_one_commit_per_change() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let s = start(&store, &[("MEMOIR_ACTOR", "claude")]);
    let text = |args: Value| text_of(&s.call("memoir_memory", args));
    let before = commits(&store);

    assert_eq!(
        text(
            json!({"command": "create", "path": "/memories/project/notes.md", "file_text": "alpha\nbeta\n"})
        ),
        "File created successfully at: /memories/project/notes.md"
    );
    assert_eq!(
        text(json!({"command": "str_replace", "path": "/memories/project/notes.md", "old_str": "beta", "new_str": "gamma"})),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\talpha\n     2\tgamma\n     3\t"
    );
    assert_eq!(
        text(
            json!({"command": "insert", "path": "/memories/project/notes.md", "insert_line": 0, "insert_text": "title"})
        ),
        "The file /memories/project/notes.md has been edited."
    );
    assert_eq!(
        text(json!({"command": "view", "path": "/memories/project/notes.md"})),
        "Here's the content of /memories/project/notes.md with line numbers:\n     1\ttitle\n     2\talpha\n     3\tgamma\n     4\t"
    );
    assert_eq!(
        text(
            json!({"command": "rename", "old_path": "/memories/project", "new_path": "/memories/done"})
        ),
        "Successfully renamed /memories/project to /memories/done"
    );
    assert_eq!(
        text(json!({"command": "view", "path": "/memories"})),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
         18B\t/memories\n18B\t/memories/done/\n18B\t/memories/done/notes.md"
    );
    // The file is a memory like any other, with the writer's provenance.
    let g = s.ok("memoir_get", json!({"keys": ["done.notes%2Emd"]}));
    let entry = &g["items"][0]["value"]["entries"][0];
    assert_eq!(entry["actor"], "claude", "{g}");
    assert_eq!(entry["source"], "memory-tool", "{g}");
    assert_eq!(
        text(json!({"command": "delete", "path": "/memories/done"})),
        "Successfully deleted /memories/done"
    );
    assert_eq!(commits(&store), before + 5, "one commit per change");

    // Refusals carry the tool's own texts, and change nothing.
    for (args, want) in [
        (
            json!({"command": "view", "path": "/etc/passwd"}),
            "Path must start with /memories, got: /etc/passwd",
        ),
        (
            json!({"command": "create", "path": "/memories/../../x", "file_text": "x"}),
            "Path /memories/../../x would escape /memories directory",
        ),
        (
            json!({"command": "view", "path": "/memories/gone.md"}),
            "The path /memories/gone.md does not exist. Please provide a valid path.",
        ),
        (
            json!({"command": "delete", "path": "/memories"}),
            "Cannot delete the /memories directory itself",
        ),
    ] {
        let r = s.call("memoir_memory", args.clone());
        assert_eq!(r.is_error, Some(true), "{args}");
        assert_eq!(text_of(&r), want, "{args}");
    }
    let r = s.call(
        "memoir_memory",
        json!({"command": "create", "path": "/memories/my notes.md", "file_text": "x"}),
    );
    assert_eq!(r.is_error, Some(true));
    assert!(
        text_of(&r).starts_with("Path /memories/my notes.md is not a valid memory path: "),
        "{}",
        text_of(&r)
    );
    assert_eq!(commits(&store), before + 5);
}
