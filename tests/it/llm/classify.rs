//! `memoir remember` without paths: the model classifies the memory into one or more paths,
//! which are validated; without a working model nothing is committed.

use std::time::Duration;

use serde_json::json;

use super::{
    anthropic, commit_count, memoir, memoir_full, openai, raw, record, serve, store_with,
    user_prompt, Answer,
};

const TAXONOMY: [(&str, &str); 3] = [
    ("Prefers pytest over unittest", "preferences.coding.testing"),
    ("Production runs PostgreSQL 16", "infra.database.main"),
    ("Uses tabs", "style.indent"),
];

#[test]
fn remember_without_paths_classifies_one_path_openai() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &TAXONOMY);
    let s = serve(vec![openai(
        "```json\n{\"paths\": [\"tools.testing.hypothesis\"], \"confidence\": 0.82, \
         \"reasoning\": \"A testing tool preference.\"}\n```",
    )]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let before = commit_count(&store);
    let (code, v) = memoir(
        &store,
        &env,
        &["remember", "Uses hypothesis for property tests"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["success"], true);
    assert_eq!(v["key"], "tools.testing.hypothesis");
    assert_eq!(v["keys"], json!(["tools.testing.hypothesis"]));
    assert_eq!(v["full_key"], "default:tools.testing.hypothesis");
    assert_eq!(v["confidence"], 0.82);
    let why = v["reasoning"].as_str().unwrap();
    assert!(why.starts_with("A testing tool preference"), "{why}");
    assert!(why.contains("openai:"), "{why}");
    assert_eq!(
        v["classification"],
        json!({"model": "openai:gpt-4o-mini", "paths": ["tools.testing.hypothesis"],
               "confidence": 0.82, "reasoning": "A testing tool preference."})
    );
    assert!(v["commit_hash"].is_string());
    assert_eq!(commit_count(&store), before + 1);
    // The stored record carries the classifier's confidence.
    let r = record(&store, "tools.testing.hypothesis");
    assert_eq!(r["content"], "Uses hypothesis for property tests");
    assert_eq!(r["confidence"], 0.82);
    assert_eq!(r["entries"][0]["confidence"], 0.82);
    // One call, whose prompt lists the existing depth-3 keys with counts and the content.
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = user_prompt(&reqs[0]);
    for k in [
        "preferences.coding.testing",
        "infra.database.main",
        "style.indent",
    ] {
        assert!(
            prompt.contains(&format!("- {k}: 1\n")),
            "{k} missing: {prompt}"
        );
    }
    assert!(prompt.contains("Uses hypothesis for property tests"));
    assert_eq!(v["llm_prompts"][0]["step"], "classify");
    assert_eq!(v["llm_prompts"][0]["prompt"], prompt.as_str());
}

#[test]
fn remember_without_paths_classifies_two_paths_anthropic() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &TAXONOMY);
    let s = serve(vec![anthropic(
        "{\"paths\": [\"preferences.coding.testing\", \"Tools.Testing.Pytest\"], \
         \"confidence\": 0.9, \"reasoning\": \"testing habits\"}",
    )]);
    let env = [
        ("ANTHROPIC_API_KEY", "test-key"),
        ("ANTHROPIC_BASE_URL", s.url.as_str()),
    ];
    let (code, v) = memoir(
        &store,
        &env,
        &[
            "remember",
            "Runs pytest with -x",
            "--merge-policy",
            "append",
            "--model",
            "scripted-claude",
        ],
    );
    assert_eq!(code, 0, "{v}");
    // The existing path is reused; the new one is lower-cased.
    assert_eq!(
        v["keys"],
        json!(["preferences.coding.testing", "tools.testing.pytest"])
    );
    assert_eq!(v["confidence"], 0.9);
    assert_eq!(v["classification"]["model"], "anthropic:scripted-claude");
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].line, "POST /v1/messages HTTP/1.1");
    assert_eq!(reqs[0].body["model"], "scripted-claude");
    assert!(user_prompt(&reqs[0]).contains("- preferences.coding.testing: 1\n"));
    let r = record(&store, "preferences.coding.testing");
    assert_eq!(
        r["content"],
        "Prefers pytest over unittest\n\n[update] Runs pytest with -x"
    );
    assert_eq!(r["related_keys"], json!(["tools.testing.pytest"]));
    let r = record(&store, "tools.testing.pytest");
    assert_eq!(r["confidence"], 0.9);
    assert_eq!(r["related_keys"], json!(["preferences.coding.testing"]));
    let (_, log) = memoir(&store, &[], &["log", "-n", "1"]);
    assert_eq!(
        log["commits"][0]["message"],
        "Store preferences.coding.testing, tools.testing.pytest in default"
    );
}

#[test]
fn classifier_paths_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &TAXONOMY);
    // A path in -n's namespace is taken in it.
    let s = serve(vec![openai(
        r#"{"paths": ["work:notes.team.standup"], "confidence": 0.7, "reasoning": "team notes"}"#,
    )]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(
        &store,
        &env,
        &["remember", "Standup is at 9:30", "-n", "work"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["keys"], json!(["notes.team.standup"]));
    assert_eq!(v["full_key"], "work:notes.team.standup");

    // One injected or malformed path refuses the whole reply: exit 1, nothing written, every
    // refused path named.
    let before = commit_count(&store);
    let s = serve(vec![openai(
        r#"{"paths": ["ok.path.here", "../x", "default:evil.path.here", "a.b.c; rm -rf /",
            "notes.misc"], "confidence": 0.7, "reasoning": "team notes"}"#,
    )]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["remember", "Something else", "-n", "work"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["success"], false);
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("unacceptable path"), "{e}");
    assert!(e.contains("nothing was stored"), "{e}");
    for refused in ["../x", "default:evil.path.here", "rm -rf", "notes.misc"] {
        assert!(e.contains(refused), "{refused} in {e}");
    }
    assert!(e.contains(r#"names namespace "default""#), "{e}");
    assert_eq!(commit_count(&store), before);
}

/// A classifier reply is used only when it is the JSON object the prompt asked for, every
/// field of its type: the prompt repeated (what an echo server answers, naming the existing
/// keys one per line), a list of lines, prose around JSON, a missing field or one of the
/// wrong type is a failed call: exit 1 with the reason, nothing stored.
#[test]
fn classifier_refuses_replies_in_another_form() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &TAXONOMY);
    let before = commit_count(&store);
    let probe = serve(vec![raw(500, "down")]);
    let base = format!("{}/v1", probe.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    assert_eq!(memoir(&store, &env, &["remember", "Likes dark mode"]).0, 1);
    let echo = format!(
        "[echo] model=m\nUser: {}",
        user_prompt(&probe.requests()[0])
    );
    assert!(echo.contains("- preferences.coding.testing: 1\n"), "{echo}");
    for (reply, why) in [
        (echo.as_str(), "not a JSON object"),
        (
            "- preferences.coding.testing\n- style.indent",
            "not a JSON object",
        ),
        (
            "Sure: {\"paths\": [\"ui.theme.dark\"], \"confidence\": 0.8, \"reasoning\": \"ui\"}",
            "not a JSON object",
        ),
        (r#"["ui.theme.dark"]"#, "an array in JSON"),
        (
            r#"{"path": "ui.theme.dark", "confidence": 0.8, "reasoning": "ui"}"#,
            "\"paths\" is missing",
        ),
        (
            r#"{"paths": "ui.theme.dark", "confidence": 0.8, "reasoning": "ui"}"#,
            "not an array",
        ),
        (
            r#"{"paths": ["ui.theme.dark"], "confidence": "high", "reasoning": "ui"}"#,
            "not a number",
        ),
        (
            r#"{"paths": ["ui.theme.dark"], "confidence": 0.8, "reasoning": ["ui"]}"#,
            "not a string",
        ),
        (
            r#"{"paths": [], "confidence": 0.8, "reasoning": "ui"}"#,
            "is empty",
        ),
    ] {
        let s = serve(vec![openai(reply)]);
        let base = format!("{}/v1", s.url);
        let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
        let (code, v, err) = memoir_full(&store, &env, &["remember", "Likes dark mode"]);
        assert_eq!(code, 1, "{reply}: {v}");
        assert_eq!(v["code"], 1);
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(why), "{reply}: {e}");
        assert!(e.contains("nothing was stored"), "{e}");
        assert!(!err.contains("panic"), "{err}");
    }
    assert_eq!(commit_count(&store), before);
}

#[test]
fn classifier_needs_a_working_model() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), &TAXONOMY);
    let before = commit_count(&store);
    // No LLM configured.
    let (code, v, err) = memoir_full(&store, &[], &["remember", "Likes dark mode"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["code"], 1);
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("no LLM is configured") && e.contains("-p PATH"),
        "{e}"
    );
    assert!(!err.contains("panic"), "{err}");
    // A path that is not a store is reported as such first (exit 3), as for every command.
    let nowhere = dir.path().join("nowhere");
    assert_eq!(memoir(&nowhere, &[], &["remember", "Likes dark mode"]).0, 3);
    // HTTP 500, a reply in the wrong format, a timeout: an error naming the cause.
    for (answer, cause) in [
        (raw(500, "model is down"), "500"),
        (raw(200, "{\"unexpected\": true}"), "malformed"),
        (
            Answer {
                delay: Duration::from_millis(3000),
                ..openai("a.b.c")
            },
            "timed out",
        ),
    ] {
        let s = serve(vec![answer]);
        let base = format!("{}/v1", s.url);
        let env = [
            ("MEMOIR_LLM_BASE_URL", base.as_str()),
            ("MEMOIR_LLM_TIMEOUT", "0.5"),
        ];
        let (code, v) = memoir(&store, &env, &["remember", "Likes dark mode"]);
        assert_eq!(code, 1, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(cause) && e.contains("nothing was stored"), "{e}");
    }
    assert_eq!(commit_count(&store), before);
    // With -p no model is needed.
    let (code, _) = memoir(
        &store,
        &[],
        &["remember", "Likes dark mode", "-p", "ui.theme"],
    );
    assert_eq!(code, 0);
}
