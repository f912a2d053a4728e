//! `memoir capture` against a scripted model behind a real HTTP server: the valid facts of a
//! reply are stored in one commit, nothing for an empty, silent or malformed reply or a turn
//! holding a credential, duplicates are skipped, a dry run commits nothing, no model is
//! exit 1; the model is shown the taxonomy in effect (stored, else built in), and the
//! classifier is shown the stored one.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::{json, Value};

use super::{commit_count, memoir, openai, raw, record, serve, store_with, user_prompt};

const TURN: &str =
    "[Human] From now on use pytest, never unittest. Production is on PostgreSQL 16.\n\
[Assistant] Understood: pytest for every test; the database is PostgreSQL 16.";

/// `memoir --json capture ARGS` with `stdin` and `env` (a clean model environment, fixed
/// clock and author): exit code, JSON stdout, stderr.
pub(super) fn capture(
    store: &Path,
    env: &[(&str, &str)],
    args: &[&str],
    stdin: &str,
) -> (i32, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"));
    for (k, _) in std::env::vars() {
        if k.starts_with("MEMOIR_") || k.ends_with("_API_KEY") || k.ends_with("_BASE_URL") {
            cmd.env_remove(k);
        }
    }
    cmd.env("MEMOIR_NOW", "1700000000")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>")
        .envs(env.iter().copied())
        .arg("-s")
        .arg(store)
        .arg("--json")
        .arg("capture")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // A command refused before it reads stdin closes it: the write may fail.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn base_of(s: &super::Server) -> String {
    format!("{}/v1", s.url)
}

fn keys(v: &Value, member: &str) -> Vec<String> {
    v[member]
        .as_array()
        .unwrap_or_else(|| panic!("{member} in {v}"))
        .iter()
        .map(|f| f["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn capture_stores_exactly_the_valid_facts_in_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        dir.path(),
        &[("Deploys are blue-green", "workflow.release.strategy")],
    );
    let before = commit_count(&store);
    let s = serve(vec![openai(
        "preferences.testing.framework\tThe user wants pytest for every test, never unittest.\n\
         project.infra.database\tProduction runs PostgreSQL 16.\n\
         tools.db.engine\tThe database engine is PostgreSQL.\n\
         knowledge.misc.note\tpytest\n\
         Workflow.Release.Strategy\tReleases need a green CI run before the blue-green switch.",
    )]);
    let base = base_of(&s);
    let env = [
        ("MEMOIR_LLM_BASE_URL", base.as_str()),
        ("MEMOIR_ACTOR", "agent-7"),
    ];
    let (code, v, err) = capture(&store, &env, &[], TURN);
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(
        v["captured"],
        json!([
            {"key": "preferences.testing.framework", "content": "The user wants pytest for every test, never unittest."},
            {"key": "project.infra.database", "content": "Production runs PostgreSQL 16."},
            {"key": "workflow.release.strategy", "content": "Releases need a green CI run before the blue-green switch."},
        ])
    );
    let dropped: Vec<&str> = v["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    assert_eq!(dropped.len(), 2, "{v}");
    assert!(
        dropped[0].contains("not a category of the taxonomy"),
        "{dropped:?}"
    );
    assert!(dropped[1].contains("fragment"), "{dropped:?}");
    assert!(err.contains("Dropped tools.db.engine"), "{err}");
    assert_eq!(
        (v["taxonomy"].as_str(), v["taxonomy_stored"].as_bool()),
        (Some("general"), Some(false))
    );
    assert_eq!(v["dry_run"], false);
    assert!(v["timings"]["overhead_ms"].is_number());
    // One commit, source capture, the actor.
    assert_eq!(commit_count(&store), before + 1);
    let (_, log) = memoir(&store, &[], &["log", "-n", "1"]);
    let c = &log["commits"][0];
    assert_eq!(c["hash"], v["commit_hash"]);
    assert_eq!(
        c["message"],
        "Capture preferences.testing.framework, project.infra.database, workflow.release.strategy in default"
    );
    assert_eq!(
        c["metadata"],
        json!({"actor": "agent-7", "source": "capture"})
    );
    let r = record(&store, "project.infra.database");
    assert_eq!(r["confidence"], 0.8);
    assert_eq!(r["entries"][0]["source"], "capture");
    assert_eq!(r["entries"][0]["actor"], "agent-7");
    // An existing key gets the fact as a new entry.
    let r = record(&store, "workflow.release.strategy");
    assert_eq!(
        r["content"],
        "Deploys are blue-green\n\n[update] Releases need a green CI run before the blue-green switch."
    );
    // One call; its prompt shows the built-in taxonomy, the existing paths and the turn.
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = user_prompt(&reqs[0]);
    let (_, snippet) = memoir(&store, &[], &["taxonomy", "prompt-snippet"]);
    assert!(
        prompt.contains(snippet["snippet"].as_str().unwrap()),
        "{prompt}"
    );
    assert!(
        prompt.contains("- workflow.release.strategy: 1\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains("[Human] From now on use pytest"),
        "{prompt}"
    );
    assert!(prompt.contains("[Assistant] Understood"), "{prompt}");
    assert_eq!(v["llm_prompts"][0]["prompt"], prompt.as_str());
}

#[test]
fn silence_stores_nothing_and_a_malformed_reply_fails() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    let before = commit_count(&store);
    for reply in ["NONE", "", "```\nnone\n```"] {
        let s = serve(vec![openai(reply)]);
        let base = base_of(&s);
        let (code, v, _) = capture(&store, &[("MEMOIR_LLM_BASE_URL", &base)], &[], TURN);
        assert_eq!(code, 0, "{reply:?}: {v}");
        assert_eq!(v["captured"], json!([]));
        assert!(v["commit_hash"].is_null());
    }
    for (reply, why) in [
        (
            "Sure! Here are the facts:\npreferences.testing.framework\tUses pytest for all tests.",
            "line 1 of the reply is not 'path<TAB>fact'",
        ),
        (
            "- preferences.testing.framework: Uses pytest for all tests.",
            "line 1",
        ),
        (
            "preferences.testing.framework\tUses pytest for all tests.\nNONE",
            "line 2",
        ),
        ("{\"facts\": []}", "not 'path<TAB>fact'"),
    ] {
        let s = serve(vec![openai(reply)]);
        let base = base_of(&s);
        let (code, v, _) = capture(&store, &[("MEMOIR_LLM_BASE_URL", &base)], &[], TURN);
        assert_eq!(code, 1, "{reply:?}: {v}");
        assert_eq!(
            (v["success"].as_bool(), v["code"].as_u64()),
            (Some(false), Some(1))
        );
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(why) && e.contains("nothing was stored"), "{e}");
    }
    // A failing model is a failed capture too.
    let s = serve(vec![raw(500, "down")]);
    let base = base_of(&s);
    let (code, v, _) = capture(&store, &[("MEMOIR_LLM_BASE_URL", &base)], &[], TURN);
    assert_eq!(code, 1, "{v}");
    assert!(v["error"].as_str().unwrap().contains("500"), "{v}");
    assert_eq!(commit_count(&store), before);
}

#[test]
fn duplicates_are_skipped_and_a_dry_run_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        dir.path(),
        &[(
            "The project uses pytest for all of its tests",
            "preferences.testing.framework",
        )],
    );
    let reply = "preferences.testing.tool\tThe project uses pytest for its tests.\n\
                 project.infra.database\tProduction runs PostgreSQL 16.\n\
                 knowledge.database.version\tProduction runs on PostgreSQL 16.\n\
                 project.infra.cache\tThe cache is Redis 7 on the database host.";
    let s = serve(vec![openai(reply), openai(reply)]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let before = commit_count(&store);
    let (code, dry, _) = capture(&store, &env, &["--dry-run"], TURN);
    assert_eq!(code, 0, "{dry}");
    assert_eq!(dry["dry_run"], true);
    assert!(dry["commit_hash"].is_null());
    assert_eq!(
        keys(&dry, "captured"),
        ["project.infra.database", "project.infra.cache"]
    );
    assert_eq!(
        keys(&dry, "skipped"),
        ["preferences.testing.tool", "knowledge.database.version"]
    );
    assert_eq!(
        dry["skipped"][0]["duplicate_of"],
        "preferences.testing.framework"
    );
    assert_eq!(dry["skipped"][1]["duplicate_of"], "project.infra.database");
    assert_eq!(commit_count(&store), before);
    let (_, got) = memoir(&store, &[], &["get", "project.infra.database"]);
    assert_eq!(got["items"][0]["found"], false);

    let (code, v, _) = capture(&store, &env, &[], TURN);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["captured"], dry["captured"]);
    assert_eq!(v["skipped"], dry["skipped"]);
    assert_eq!(commit_count(&store), before + 1);
    // The same turn again: everything is known, no commit.
    let s = serve(vec![openai(reply)]);
    let base = base_of(&s);
    let (code, v, _) = capture(&store, &[("MEMOIR_LLM_BASE_URL", &base)], &[], TURN);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["captured"], json!([]));
    assert_eq!(v["skipped"].as_array().unwrap().len(), 4);
    assert!(v["commit_hash"].is_null());
    assert_eq!(commit_count(&store), before + 1);
}

#[test]
fn no_model_bad_input_and_credentials_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    let before = commit_count(&store);
    let (code, v, _) = capture(&store, &[], &[], TURN);
    assert_eq!(code, 1, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("none is configured") && e.contains("nothing was stored"),
        "{e}"
    );

    let s = serve(vec![]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    for (input, why) in [
        ("just words", "neither a speaker marker nor JSON"),
        ("{\"text\": \"hi\"}", "no \"role\""),
        ("", "empty"),
        (
            "[Human] my key is sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 [Assistant] ok",
            "credential",
        ),
    ] {
        let (code, v, _) = capture(&store, &env, &[], input);
        assert_eq!(code, 1, "{input:?}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(why), "{input:?}: {e}");
    }
    assert!(s.requests().is_empty(), "the model is not asked");
    let (code, v, _) = capture(&store, &env, &["--profile", "robot"], TURN);
    assert_eq!(code, 2, "{v}");
    assert_eq!(commit_count(&store), before);
}

#[test]
fn json_turns_and_the_assistant_profile() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    let s = serve(vec![openai(
        "profile.schedule.timezone\tThe user works from Lisbon, in the mornings.",
    )]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let turn = r#"[{"role": "user", "content": "I work from Lisbon, mornings only"}, {"role": "assistant", "content": [{"type": "text", "text": "Got it."}, {"type": "tool_use", "id": "t1", "name": "x", "input": {}}]}]"#;
    let (code, v, _) = capture(&store, &env, &["--profile", "assistant", "-n", "me"], turn);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["namespace"], "me");
    assert_eq!(v["profile"], "assistant");
    assert_eq!(keys(&v, "captured"), ["profile.schedule.timezone"]);
    let prompt = user_prompt(&s.requests()[0]);
    assert!(prompt.contains("personal assistant"), "{prompt}");
    assert!(
        prompt.contains("[Human] I work from Lisbon, mornings only\n[Assistant] Got it.\n>>>"),
        "{prompt}"
    );
}

#[test]
fn the_stored_taxonomy_grounds_capture_and_the_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &[]);
    // Without a stored taxonomy the classifier's prompt is as it always was.
    let s = serve(vec![openai(
        r#"{"paths": ["runbook.db.restore"], "confidence": 0.9, "reasoning": "ops"}"#,
    )]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    assert_eq!(
        memoir(&store, &env, &["remember", "Restore from the nightly dump"]).0,
        0
    );
    let p = user_prompt(&s.requests()[0]);
    assert!(p.starts_with("Namespace: default\n\nExisting paths"), "{p}");
    assert!(!p.contains("Taxonomy"), "{p}");

    let doc = dir.path().join("team.md");
    std::fs::write(
        &doc,
        "---\nname: team\n---\n## runbook\nWhat to do when something breaks.\n\nTopics:\n- db: databases\n",
    )
    .unwrap();
    assert_eq!(
        memoir(&store, &[], &["taxonomy", "load", doc.to_str().unwrap()]).0,
        0
    );
    let (_, snip) = memoir(&store, &[], &["taxonomy", "prompt-snippet"]);
    let snippet = snip["snippet"].as_str().unwrap();
    assert!(snippet.contains("- runbook: What to do when something breaks. Topics: db."));

    let s = serve(vec![openai(
        r#"{"paths": ["runbook.db.failover"], "confidence": 0.9, "reasoning": "ops"}"#,
    )]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    assert_eq!(
        memoir(
            &store,
            &env,
            &["remember", "Fail over with the switch script"]
        )
        .0,
        0
    );
    let p = user_prompt(&s.requests()[0]);
    assert!(
        p.starts_with(&format!("Namespace: default\n\n{snippet}")),
        "{p}"
    );
    assert!(
        p.contains("Begin a new path with a category of the taxonomy above."),
        "{p}"
    );

    // capture uses the stored taxonomy: a built-in category is not one of it.
    let s = serve(vec![openai(
        "runbook.db.restore_time\tA full restore from the nightly dump takes forty minutes.\n\
         debugging.db.restore\tThe restore failed until the dump was decompressed first.",
    )]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v, _) = capture(&store, &env, &[], TURN);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (v["taxonomy"].as_str(), v["taxonomy_stored"].as_bool()),
        (Some("team"), Some(true))
    );
    assert_eq!(keys(&v, "captured"), ["runbook.db.restore_time"]);
    assert!(v["dropped"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("not a category"));
    assert!(user_prompt(&s.requests()[0]).contains(snippet));

    // The capture left the search index at the new commit: the next one reads the taxonomy
    // and the paths from it, without opening the store first, and sees the same.
    let s = serve(vec![openai(
        "runbook.db.restore_time\tRestores need the read replica stopped first.\n\
         debugging.db.restore\tThe restore failed until the dump was decompressed first.",
    )]);
    let base = base_of(&s);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v, _) = capture(&store, &env, &[], TURN);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["taxonomy_stored"], true);
    assert_eq!(keys(&v, "captured"), ["runbook.db.restore_time"]);
    assert_eq!(v["dropped"].as_array().unwrap().len(), 1);
    let p = user_prompt(&s.requests()[0]);
    assert!(p.contains(snippet), "{p}");
    assert!(
        p.contains(
            "- runbook.db.failover: 1\n- runbook.db.restore: 1\n- runbook.db.restore_time: 1\n"
        ),
        "{p}"
    );
    let r = record(&store, "runbook.db.restore_time");
    assert_eq!(r["entries"].as_array().unwrap().len(), 2);
}
