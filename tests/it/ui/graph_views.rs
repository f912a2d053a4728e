//! The Graph, Timeline and Watch views: their API calls (`/api/graph` answers what `memoir
//! graph` prints, at any revision; `/api/timeline` counts writes per day per agent;
//! `/api/watch` gives each watched file's state) and the views in headless Chromium: the
//! graph of a memory's neighbourhood drawn and walked from the keyboard, related groups, the
//! Timeline and Watch views, axe-core clean in both themes.

use std::path::{Path, PathBuf};

use fantoccini::key::Key;
use serde_json::{json, Value};

use super::browser::{click, console_errors, text, until, Driver};
use super::browser_views::{axe, devtools, session, tools, view};
use super::supervise::with_agents;
use super::{cli_at, Ui, T0};

/// The agents' store, with a memory written under two keys (related) and a watched file
/// changed since it was scanned; the file's path.
fn with_graph_and_watch(dir: &Path) -> (PathBuf, PathBuf) {
    let store = with_agents(dir);
    let (code, out) = cli_at(
        &store,
        T0 + 13 * 86_400,
        &[
            "remember",
            "cargo builds it",
            "-p",
            "preferences.tools.cargo",
            "-p",
            "projects.memoir.build",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let doc = dir.join("notes.md");
    std::fs::write(&doc, "# Notes\n\nThe first version.\n").unwrap();
    let (code, out) = cli_at(
        &store,
        T0 + 14 * 86_400,
        &["watch", "add", doc.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");
    std::fs::write(&doc, "# Notes\n\nThe second version.\n").unwrap();
    (store, doc)
}

#[test]
fn graph_timeline_and_watch_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (store, doc) = with_graph_and_watch(dir.path());
    let ui = Ui::start(&store, &[("MEMOIR_NOW", "1767300000")]);

    // The graph the page asks for is the command line's, at HEAD and in the past.
    for (query, args) in [
        (
            "key=preferences&depth=2",
            vec!["graph", "preferences", "--depth", "2"],
        ),
        (
            "key=preferences.tools.cargo&depth=1",
            vec!["graph", "preferences.tools.cargo"],
        ),
        (
            "key=preferences&at=HEAD~3",
            vec!["graph", "preferences", "--at", "HEAD~3"],
        ),
    ] {
        let (status, page) = ui.get(&format!("/api/graph?{query}"));
        assert_eq!(status, 200, "{page}");
        let (code, cli) = cli_at(&store, T0, &args);
        assert_eq!(code, 0, "{cli}");
        assert_eq!(page, cli, "{query}");
    }
    let (_, g) = ui.get("/api/graph?key=preferences.tools.cargo");
    assert_eq!(
        g["components"],
        json!([[
            "default:preferences.tools.cargo",
            "default:projects.memoir.build"
        ]])
    );
    let (status, v) = ui.get("/api/graph?key=no.such.key");
    assert_eq!((status, v["code"].clone()), (404, json!(2)), "{v}");
    let (status, v) = ui.get("/api/graph?key=preferences&depth=9");
    assert_eq!((status, v["code"].clone()), (400, json!(1)), "{v}");

    // Writes per day per agent, over every branch: the seeded commits (no agent) on the
    // first day, each agent's on theirs.
    let (status, t) = ui.get("/api/timeline");
    assert_eq!(status, 200, "{t}");
    let days: Vec<(String, Value, u64)> = t["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap().to_string(),
                d["actor"].clone(),
                d["commits"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        days,
        [
            ("2026-01-01".to_string(), Value::Null, 8),
            ("2026-01-11".to_string(), json!("agent-1"), 1),
            ("2026-01-12".to_string(), json!("agent-1"), 1),
            ("2026-01-13".to_string(), json!("agent-2"), 1),
            ("2026-01-14".to_string(), Value::Null, 1),
            ("2026-01-15".to_string(), Value::Null, 1),
        ]
    );
    assert_eq!(t["commits"], 13);
    let (_, agents) = ui.get("/api/agents");
    let order: Vec<Value> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["actor"].clone())
        .collect();
    assert_eq!(t["actors"], json!(order));

    // The watched file changed since its scan.
    let (status, w) = ui.get("/api/watch");
    assert_eq!(status, 200, "{w}");
    assert_eq!(w["count"], 1);
    assert_eq!(w["changed"], 1);
    assert_eq!(w["files"][0]["state"], "changed");
    assert_eq!(
        Path::new(w["files"][0]["path"].as_str().unwrap()),
        doc.canonicalize().unwrap()
    );
}

#[test]
fn graph_timeline_and_watch_views_in_a_real_browser() {
    let Some((chromedriver, chromium, axe_source)) = tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = with_graph_and_watch(dir.path());
    let ui = Ui::start(&store, &[("MEMOIR_NOW", "1767300000")]);
    let driver = Driver::start(&chromedriver);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, api) = ui.get("/api/graph?key=preferences.editor&depth=2&limit=400");
    rt.block_on(async {
        let c = session(&driver, &chromium, &dir.path().join("profile")).await;
        let base = &ui.base;

        // From a memory's page to the graph of its neighbourhood: every node drawn and
        // listed, the key in the middle.
        view(&c, base, "#/memory?key=preferences.editor").await;
        click(&c, "#memory-graph-link").await;
        until(&c, "location.hash.startsWith('#/graph') && document.querySelector('#graph-svg') && !document.querySelector('main[aria-busy]')", "the graph").await;
        let drawn = c
            .execute("return document.querySelectorAll('#graph-svg [data-id]').length", vec![])
            .await
            .unwrap();
        assert_eq!(drawn, api["node_count"]);
        let rows = c
            .execute("return document.querySelectorAll('#graph-nodes tbody tr').length", vec![])
            .await
            .unwrap();
        assert_eq!(rows, api["node_count"]);
        let lines = c
            .execute("return document.querySelectorAll('#graph-svg line.edge').length", vec![])
            .await
            .unwrap();
        assert_eq!(lines, api["edge_count"]);
        assert!(text(&c, "#graph-summary").await.contains("within 2 hop(s) of default:preferences.editor"));

        // Keyboard: a node is a link reached by Tab; Enter walks to its own graph.
        let node = "#graph-svg a[data-id='default:preferences']";
        c.execute(&format!("document.querySelector(\"{node}\").focus()"), vec![]).await.unwrap();
        let focused = c
            .execute(&format!("return document.activeElement === document.querySelector(\"{node}\")"), vec![])
            .await
            .unwrap();
        assert_eq!(focused, Value::Bool(true), "a node takes the focus");
        c.active_element().await.unwrap().send_keys(&Key::Enter.to_string()).await.unwrap();
        until(&c, "document.getElementById('graph-summary') && document.getElementById('graph-summary').textContent.includes('of default:preferences at')", "the prefix's graph").await;

        // Memories written together are a related group, joined by a dashed edge.
        view(&c, base, "#/graph?key=preferences.tools.cargo&depth=1").await;
        let group = text(&c, "#graph-components li").await;
        assert!(group.contains("default:preferences.tools.cargo") && group.contains("default:projects.memoir.build"), "{group}");
        let related = c
            .execute("return document.querySelectorAll('#graph-svg line.edge-related').length", vec![])
            .await
            .unwrap();
        assert_eq!(related, json!(1));

        // Timeline: writes per day per agent.
        view(&c, base, "#/timeline").await;
        let day = text(&c, "#timeline tr[data-day='2026-01-13']").await;
        assert!(day.contains("2026-01-13"), "{day}");
        let head = text(&c, "#timeline thead").await;
        assert!(head.contains("agent-1") && head.contains("agent-2"), "{head}");

        // Watch: the changed file.
        view(&c, base, "#/watch").await;
        let row = text(&c, "#watch-files tr[data-state='changed']").await;
        assert!(row.contains("notes.md") && row.contains("changed"), "{row}");

        // axe-core on the three views, light then dark.
        let mut violations = Vec::new();
        let views = ["#/graph?key=preferences.editor&depth=2", "#/graph?key=preferences.tools.cargo", "#/graph", "#/timeline", "#/watch"];
        for theme in ["light", "dark"] {
            devtools(&driver.url, &c, "Emulation.setEmulatedMedia", json!({"features": [{"name": "prefers-color-scheme", "value": theme}]})).await;
            for v in views {
                view(&c, base, v).await;
                violations.extend(axe(&c, &axe_source).await.into_iter().map(|x| format!("{theme} {v}: {x}")));
            }
        }
        assert!(violations.is_empty(), "axe-core violations: {violations:#?}");

        let page: Value = c.execute("return window.__memoirErrors", vec![]).await.unwrap();
        assert_eq!(page, json!([]), "errors on the page");
        let console = console_errors(&driver.url, &c).await;
        assert!(console.is_empty(), "console errors: {console:?}");
        c.close().await.unwrap();
    });
}
