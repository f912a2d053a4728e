//! `memoir recall` with a model: its modes, its fallback, and the single prompt.

use std::collections::BTreeMap;

use memoir::recall::picker;

use serde_json::json;

use super::{memoir, openai, raw, serve, user_prompt};

#[test]
fn cli_recall_modes_and_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    for (c, p) in [
        ("We deploy with a blue-green rollout", "ops.deploy.strategy"),
        ("PostgreSQL 16 is the main database", "infra.database"),
        ("Prefers property tests", "preferences.coding.testing"),
    ] {
        assert_eq!(memoir(&store, &[], &["remember", c, "-p", p]).0, 0);
    }
    // No LLM configured: lexical, and it says so.
    let (code, v) = memoir(&store, &[], &["recall", "database"]);
    assert_eq!(code, 0);
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["memories"][0]["path"], "infra.database");
    assert_eq!(v["memories"][0]["metadata"]["mode"], "lexical");
    // Single mode through an OpenAI-compatible endpoint.
    let s = serve(vec![openai(r#"{"keys": ["default:ops.deploy.strategy"]}"#)]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["recall", "how do we ship?"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["metadata"]["mode"], "single");
    assert_eq!(v["count"], 1);
    assert_eq!(v["memories"][0]["path"], "ops.deploy.strategy");
    assert_eq!(v["memories"][0]["metadata"]["mode"], "single");
    assert_eq!(v["metadata"]["llm_prompts"].as_array().unwrap().len(), 1);
    // The endpoint fails: lexical answer, with the reason.
    let s = serve(vec![raw(500, "down")]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["recall", "database", "--mode", "tiered"]);
    assert_eq!(code, 0);
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["metadata"]["fellback_from"], "tiered");
    assert!(v["metadata"]["fallback_reason"]
        .as_str()
        .unwrap()
        .contains("500"));
    assert_eq!(v["memories"][0]["path"], "infra.database");
}

/// `memoir recall` uses a model's reply only when it is the JSON object the prompt asked for,
/// naming only keys it was shown: a reply that repeats the prompt, prose, a key that was not
/// offered or a field of the wrong type is a failed call, and recall answers lexically with
/// `fellback_from` and the reason, in JSON and on the terminal.
#[test]
fn cli_recall_refuses_replies_in_another_form() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    for i in 0..12 {
        let (c, p) = (format!("note number {i}"), format!("notes.n{i:02}"));
        assert_eq!(memoir(&store, &[], &["remember", &c, "-p", &p]).0, 0);
    }
    let (c, p) = ("PostgreSQL 16 is the main database", "infra.database");
    assert_eq!(memoir(&store, &[], &["remember", c, "-p", p]).0, 0);
    // What an echo server answers: the prompt, keys one per line.
    let probe = serve(vec![openai(r#"{"keys": []}"#)]);
    let base = format!("{}/v1", probe.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["recall", "which database?"]);
    assert_eq!((code, v["count"].as_u64()), (0, Some(0)), "{v}");
    let echo = format!(
        "[echo] model=m\nUser: {}",
        user_prompt(&probe.requests()[0])
    );
    assert!(echo.contains("- default:notes.n00: note number 0\n"));
    for (reply, why) in [
        (echo.as_str(), "not a JSON object"),
        (
            "The answer is in default:infra.database.",
            "not a JSON object",
        ),
        ("default:infra.database", "not a JSON object"),
        (
            r#"{"keys": ["default:infra.database", "default:infra.secrets"]}"#,
            "was not offered",
        ),
        (r#"{"keys": "default:infra.database"}"#, "not an array"),
        (r#"{"keys": [1]}"#, "not only strings"),
    ] {
        let s = serve(vec![openai(reply)]);
        let base = format!("{}/v1", s.url);
        let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
        let (code, v) = memoir(
            &store,
            &env,
            &["recall", "which database?", "--mode", "single"],
        );
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["success"], true);
        assert_eq!(v["metadata"]["mode"], "lexical", "{reply}: {v}");
        assert_eq!(v["metadata"]["fellback_from"], "single");
        let reason = v["metadata"]["fallback_reason"].as_str().unwrap();
        assert!(reason.contains(why), "{reply}: {reason}");
        assert_eq!(v["metadata"]["llm_prompts"][0]["reply"], reply);
        assert_eq!(v["memories"][0]["path"], "infra.database");
        assert_eq!(v["memories"][0]["metadata"]["mode"], "lexical");
        assert_eq!(s.requests().len(), 1);
    }
    // Tiered: the prefix steps fall back, the key step fails, recall answers lexically.
    let s = serve(vec![openai(&echo), openai(&echo)]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(
        &store,
        &env,
        &["recall", "which database?", "--mode", "tiered"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["metadata"]["fellback_from"], "tiered");
    assert_eq!(v["memories"][0]["path"], "infra.database");
    // On the terminal, the fallback is stated.
    let s = serve(vec![openai(&echo)]);
    let base = format!("{}/v1", s.url);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .env("MEMOIR_LLM_BASE_URL", &base)
        .args(["-s", store.to_str().unwrap(), "recall", "which database?"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        stdout.contains("answered lexically") && stdout.contains("not a JSON object"),
        "{stdout}"
    );
    assert!(stdout.contains("default:infra.database"), "{stdout}");
}

/// The single-mode prompt of `memoir recall` on a store of more than
/// [`picker::MAX_KEY_CANDIDATES`] memories is exactly the one a plain reading of the store
/// gives: every key with a map from key to value, the lexical hits first and then the other
/// keys in tree order, the first 400 of them each with its record's content on one line.
/// Namespaces and paths are chosen so that printed keys (`ns:path`) do not sort like the
/// tree's encoded keys.
#[test]
fn cli_single_prompt_matches_a_plain_reading_of_the_store() {
    use memoir::prolly::KeyRange;
    use memoir::recall::{synced_index, Query};
    use memoir::repo::Repo;
    use memoir::store::{OpenOptions, Store};

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    let mut jsonl = String::new();
    for i in 0..450 {
        let ns = ["default", "a", "a.b", "a-z", "team:x"][i % 5];
        let path = match i % 4 {
            0 => format!("b-c.k{i:03}"),
            1 => format!("b.c.k{i:03}"),
            2 => format!("b_c.item-{i:03}"),
            _ => format!("réglages.k{i:03}"),
        };
        let content = match i % 6 {
            0 => format!("deploy   notes for {i}\n\twith  tabs and\r\nlines"),
            1 => format!("café ünïcödé • build {i} — {}", "long text ".repeat(30)),
            2 => format!("item {i}: database migration"),
            3 => "x".repeat(170),
            4 => format!("  deploy the build {i}  "),
            _ => format!("nothing special {i}"),
        };
        jsonl.push_str(
            &json!({"key": path, "namespace": ns, "content": content,
                    "confidence": 1.0, "timestamp": 1_700_000_000.0 + i as f64})
            .to_string(),
        );
        jsonl.push('\n');
    }
    let file = dir.path().join("m.jsonl");
    std::fs::write(&file, jsonl).unwrap();
    let (code, v) = memoir(&store, &[], &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = memoir(
        &store,
        &[],
        &["remember", "a later deploy note", "-p", "b-c.k000"],
    );
    assert_eq!(code, 0, "{v}");

    let question = "deploy the build";
    let s = serve(vec![openai(r#"{"keys": ["default:b-c.k000"]}"#)]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["recall", question, "--mode", "single"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["metadata"]["mode"], "single", "{v}");
    assert_eq!(v["memories"][0]["path"], "b-c.k000");
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let got = user_prompt(&reqs[0]);

    let repo = Repo::open(Store::open(&store, &OpenOptions::default()).unwrap()).unwrap();
    let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
    let mut tree_keys: Vec<String> = Vec::new();
    let mut values = BTreeMap::new();
    repo.tree()
        .scan(&root, &KeyRange::all(), &mut |k, v| {
            let (ns, path) = memoir::key::split_encoded(k);
            tree_keys.push(format!("{ns}:{path}"));
            values.insert(format!("{ns}:{path}"), *v);
            true
        })
        .unwrap();
    assert_eq!(tree_keys.len(), 450);
    let mut printed = tree_keys.clone();
    printed.sort();
    assert_ne!(printed, tree_keys, "printed keys sort like encoded ones");
    let (index, _, _) = synced_index(&store, repo.tree(), repo.objects(), &root).unwrap();
    let hits = index.search(&Query {
        text: question,
        limit: picker::MAX_KEY_CANDIDATES,
        ..Default::default()
    });
    assert!(
        !hits.is_empty() && hits.len() < picker::MAX_KEY_CANDIDATES,
        "{} hits",
        hits.len()
    );
    let mut order: Vec<String> = hits
        .iter()
        .map(|h| format!("{}:{}", h.namespace, h.path))
        .collect();
    let rest: Vec<String> = tree_keys
        .iter()
        .filter(|k| !order.contains(k))
        .cloned()
        .collect();
    order.extend(rest);
    assert_ne!(order[..hits.len()], tree_keys[..hits.len()]);
    let mut want = format!("Question: {question}\n\nMemories (key: content sample):\n");
    for k in order.iter().take(picker::MAX_KEY_CANDIDATES) {
        let content = memoir::memory::read_record(repo.objects(), &values[k])
            .unwrap()
            .content();
        let one_line: String = content
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(picker::SAMPLE_CHARS)
            .collect();
        want.push_str(&format!("- {k}: {one_line}\n"));
    }
    want.push_str(
        "\nWhich memories help answer the question? Reply with one JSON object and nothing \
         else: {\"keys\": [\"<key>\", ...]} with at most 10 keys copied exactly from the \
         list, most relevant first, or {\"keys\": []} if none do.",
    );
    assert_eq!(got, want);
    assert!(
        got.contains("a later deploy note"),
        "the updated record is sampled whole"
    );
}

/// `MEMOIR_LLM_TIMEOUT` bounds a command model's whole call, even when the command leaves a
/// helper holding its output: recall answers lexically within the timeout, says why, and no
/// process of the command's group is left.
#[test]
fn cli_recall_command_model_with_a_stray_helper_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    let (code, v) = memoir(
        &store,
        &[],
        &[
            "remember",
            "PostgreSQL 16 is the main database",
            "-p",
            "infra.database",
        ],
    );
    assert_eq!(code, 0, "{v}");
    let script = dir.path().join("model-with-a-stray-helper.sh");
    std::fs::write(&script, "(sleep 30; :) &\nsleep 30\n").unwrap();
    let command = format!("sh {}", script.display());
    let env = [
        ("MEMOIR_LLM_COMMAND", command.as_str()),
        ("MEMOIR_LLM_TIMEOUT", "1"),
    ];
    let t = std::time::Instant::now();
    let (code, v) = memoir(&store, &env, &["recall", "database"]);
    let took = t.elapsed();
    assert_eq!(code, 0, "{v}");
    assert!(took < std::time::Duration::from_secs(4), "{took:?}");
    assert_eq!(v["metadata"]["mode"], "lexical");
    assert_eq!(v["metadata"]["fellback_from"], "single");
    assert!(
        v["metadata"]["fallback_reason"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{v}"
    );
    assert_eq!(v["memories"][0]["path"], "infra.database");
    let left = super::providers::survivors(&script.display().to_string());
    assert!(left.is_empty(), "{left:?}");
}
