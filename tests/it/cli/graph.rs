//! `memoir graph`: the neighbourhood of a key in the taxonomy and its related keys, at any
//! revision, its degrees and groups, and its errors' exit codes.

use serde_json::Value;

use crate::common::{cli, memoir, new_store};

fn ids(v: &Value, member: &str) -> Vec<String> {
    v[member]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

fn node<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .unwrap_or_else(|| panic!("no node {id} in {v}"))
}

fn edges(v: &Value) -> Vec<(String, String, String)> {
    v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap().to_string(),
                e["to"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn edge(from: &str, to: &str, kind: &str) -> (String, String, String) {
    (from.into(), to.into(), kind.into())
}

#[test]
fn neighbourhood_degrees_groups_and_time_travel() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    let w = |content: &str, paths: &[&str]| {
        let mut args = vec!["remember", content];
        for p in paths {
            args.extend(["-p", p]);
        }
        let (code, v) = cli(&s, &args);
        assert_eq!(code, 0, "{v}");
    };
    w("likes rust", &["prefs.lang.rust", "prefs.tools.cargo"]);
    w("tabs", &["prefs.style.indent"]);
    w("postgres", &["infra.db"]);

    let (code, v) = cli(&s, &["graph", "prefs.lang.rust"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["key"], "default:prefs.lang.rust");
    assert_eq!(v["depth"], 1);
    assert_eq!(
        ids(&v, "nodes"),
        [
            "default:prefs.lang.rust",
            "default:prefs.lang",
            "default:prefs.tools.cargo"
        ]
    );
    assert_eq!(
        edges(&v),
        [
            edge("default:prefs.lang", "default:prefs.lang.rust", "taxonomy"),
            edge(
                "default:prefs.lang.rust",
                "default:prefs.tools.cargo",
                "related"
            ),
        ]
    );
    assert_eq!(node(&v, "default:prefs.lang.rust")["kind"], "memory");
    assert_eq!(node(&v, "default:prefs.lang.rust")["degree"], 2);
    assert_eq!(node(&v, "default:prefs.lang")["kind"], "prefix");
    assert_eq!(node(&v, "default:prefs.lang")["distance"], 1);
    assert_eq!(
        v["components"],
        serde_json::json!([["default:prefs.lang.rust", "default:prefs.tools.cargo"]])
    );
    assert_eq!(v["truncated"], false);

    // Two hops reach the top prefix (with its exact count) and the other memory's parent,
    // whose edge to it is listed too.
    let (_, v) = cli(&s, &["graph", "prefs.lang.rust", "--depth", "2"]);
    assert_eq!(v["node_count"], 5);
    assert_eq!(node(&v, "default:prefs")["count"], 3);
    assert_eq!(node(&v, "default:prefs")["distance"], 2);
    assert!(edges(&v).contains(&edge(
        "default:prefs.tools",
        "default:prefs.tools.cargo",
        "taxonomy"
    )));
    assert_eq!(node(&v, "default:prefs.tools.cargo")["degree"], 2);

    // A prefix: its children, the namespace above it; degrees count edges in the graph.
    let (_, v) = cli(&s, &["graph", "prefs"]);
    assert_eq!(
        ids(&v, "nodes"),
        [
            "default:prefs",
            "default:",
            "default:prefs.lang",
            "default:prefs.style",
            "default:prefs.tools"
        ]
    );
    assert_eq!(node(&v, "default:")["kind"], "namespace");
    assert_eq!(node(&v, "default:")["count"], 4);
    assert_eq!(node(&v, "default:prefs")["degree"], 4);
    assert_eq!(v["components"], serde_json::json!([]));

    // The limit cuts the walk short and says so.
    let (_, v) = cli(&s, &["graph", "prefs", "--limit", "2"]);
    assert_eq!(v["node_count"], 2);
    assert_eq!(v["truncated"], true);

    // In the past: before `infra.db` was written, the namespace held three memories.
    let (_, v) = cli(&s, &["graph", "prefs", "--at", "HEAD~1"]);
    assert_eq!(node(&v, "default:")["count"], 3);
    let (code, v) = cli(&s, &["graph", "infra.db", "--at", "HEAD~1"]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["success"], false);

    // Human output names the nodes, edges and groups.
    let o = memoir()
        .arg("-s")
        .arg(&s)
        .args(["graph", "prefs.lang.rust"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success());
    assert!(text.contains("Graph of default:prefs.lang.rust"), "{text}");
    assert!(
        text.contains("prefs.lang.rust — prefs.tools.cargo  (related)"),
        "{text}"
    );
    assert!(
        text.contains("related group 1: default:prefs.lang.rust, default:prefs.tools.cargo"),
        "{text}"
    );
}

#[test]
fn bad_requests_have_their_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    let (code, _) = cli(&s, &["remember", "x", "-p", "a.b"]);
    assert_eq!(code, 0);
    // Unknown key or revision: 2; unknown namespace, invalid key or limit: 1; a depth
    // out of range is a usage error (2).
    for (args, want) in [
        (vec!["graph", "nope"], 2),
        (vec!["graph", "a", "--at", "HEAD~9"], 2),
        (vec!["graph", "a", "-n", "zz"], 1),
        (vec!["graph", "a..b"], 1),
        (vec!["graph", "a", "--limit", "0"], 1),
    ] {
        let (code, v) = cli(&s, &args);
        assert_eq!(code, want, "{args:?}: {v}");
        assert_eq!(v["success"], false, "{args:?}");
        assert_eq!(v["code"], want, "{args:?}");
    }
    let o = memoir()
        .arg("-s")
        .arg(&s)
        .args(["graph", "a", "--depth", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
