//! The `llm_merge` policy: the model is asked once and its merge is stored, also after the
//! classifier in the same command; without a working model the memory is appended.

use std::time::Duration;

use serde_json::json;

use super::{
    anthropic, memoir, memoir_full, openai, raw, record, serve, store_with, user_prompt, Answer,
};

#[test]
fn llm_merge_asks_the_model_once_and_stores_its_merge() {
    let dir = tempfile::tempdir().unwrap();
    // Written without an LLM: a new memory (workflow.* defaults to llm_merge).
    let store = store_with(
        dir.path(),
        &[("Deploy with make release", "workflow.deploy.steps")],
    );
    let s = serve(vec![openai(
        r#"{"content": "Deploy with make release, then run the smoke tests."}"#,
    )]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(
        &store,
        &env,
        &[
            "remember",
            "Run the smoke tests after deploying",
            "-p",
            "workflow.deploy.steps",
            "-c",
            "0.6",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert!(
        v["reasoning"]
            .as_str()
            .unwrap()
            .contains("the model merged"),
        "{v}"
    );
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = user_prompt(&reqs[0]);
    assert!(prompt.contains("Deploy with make release"));
    assert!(prompt.contains("Run the smoke tests after deploying"));
    assert_eq!(
        v["llm_prompts"][0]["step"],
        "merge:default:workflow.deploy.steps"
    );
    let r = record(&store, "workflow.deploy.steps");
    assert_eq!(
        r["content"],
        "Deploy with make release, then run the smoke tests."
    );
    let statuses: Vec<(&str, &str)> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("Deploy with make release", "superseded"),
            ("Run the smoke tests after deploying", "superseded"),
            (
                "Deploy with make release, then run the smoke tests.",
                "active"
            ),
        ]
    );
    // The merge keeps the higher confidence (the existing 1.0).
    assert_eq!(r["confidence"], 1.0);

    // Anthropic format, through an explicit --merge-policy on a key whose default differs.
    let s = serve(vec![anthropic(
        r#"{"content": "Prefers pytest; runs it with -x."}"#,
    )]);
    let env = [
        ("ANTHROPIC_API_KEY", "test-key"),
        ("ANTHROPIC_BASE_URL", s.url.as_str()),
    ];
    let (code, v) = memoir(
        &store,
        &[],
        &["remember", "Prefers pytest", "-p", "prefs.test"],
    );
    assert_eq!(code, 0, "{v}");
    let (code, v) = memoir(
        &store,
        &env,
        &[
            "remember",
            "Runs pytest with -x",
            "-p",
            "prefs.test",
            "--merge-policy",
            "llm_merge",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(s.requests().len(), 1);
    assert_eq!(
        record(&store, "prefs.test")["content"],
        "Prefers pytest; runs it with -x."
    );
}

#[test]
fn classifier_and_merge_in_one_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        dir.path(),
        &[("Deploy with make release", "workflow.deploy.steps")],
    );
    let s = serve(vec![
        openai(
            r#"{"paths": ["workflow.deploy.steps"], "confidence": 0.75, "reasoning": "deploy steps"}"#,
        ),
        openai(r#"{"content": "Deploy with make release; tag the release first."}"#),
    ]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(
        &store,
        &env,
        &["remember", "Tag the release before deploying"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(s.requests().len(), 2);
    let steps: Vec<&str> = v["llm_prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["classify", "merge:default:workflow.deploy.steps"]);
    assert_eq!(
        record(&store, "workflow.deploy.steps")["content"],
        "Deploy with make release; tag the release first."
    );
}

#[test]
fn llm_merge_falls_back_to_append() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        dir.path(),
        &[("Deploy with make release", "workflow.deploy.steps")],
    );
    let truncated = Answer {
        status: 200,
        body:
            json!({"choices": [{"message": {"content": "Deploy with"}, "finish_reason": "length"}]})
                .to_string(),
        delay: Duration::ZERO,
    };
    // What an echo server answers: the prompt, holding both memories.
    let probe = serve(vec![raw(500, "down")]);
    let base = format!("{}/v1", probe.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, _) = memoir(
        &store,
        &env,
        &["remember", "Step 0", "-p", "workflow.deploy.steps"],
    );
    assert_eq!(code, 0);
    let echo = format!(
        "[echo] model=m\nUser: {}",
        user_prompt(&probe.requests()[0])
    );
    assert!(echo.contains("Deploy with make release") && echo.contains("Step 0"));
    let mut want = String::from("Deploy with make release\n\n[update] Step 0");
    for (i, (answer, cause)) in [
        (raw(500, "model is down"), "500"),
        (truncated, "token limit"),
        (openai("   "), "empty"),
        (openai(&echo), "not a JSON object"),
        (
            openai("Deploy with make release, then Step 5."),
            "not a JSON object",
        ),
        (
            openai(r#"{"merged": "Deploy with make release"}"#),
            "\"content\" is missing",
        ),
        (openai(r#"{"content": ["Deploy"]}"#), "not a string"),
        (openai(r#"{"content": "  "}"#), "\"content\" is empty"),
        // The credential rules hold for the model's text too: its merge is not stored.
        (
            openai(&format!(
                r#"{{"content": "Deploy with make release using token ghp_{}"}}"#,
                "x9".repeat(18)
            )),
            "looks like it holds a credential",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let s = serve(vec![answer]);
        let base = format!("{}/v1", s.url);
        let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
        let content = format!("Step {}", i + 1);
        let (code, v, err) = memoir_full(
            &store,
            &env,
            &["remember", &content, "-p", "workflow.deploy.steps"],
        );
        assert_eq!(code, 0, "{v}");
        assert!(v["commit_hash"].is_string());
        let why = v["reasoning"].as_str().unwrap();
        assert!(why.contains("appended") && why.contains(cause), "{why}");
        assert!(err.contains("appended"), "{err}");
        assert_eq!(s.requests().len(), 1);
        want.push_str(&format!("\n\n[update] {content}"));
        assert_eq!(
            record(&store, "workflow.deploy.steps")["content"],
            want.as_str()
        );
    }
    // Without an LLM: appended, and the output says so.
    let (code, v) = memoir(
        &store,
        &[],
        &["remember", "Last", "-p", "workflow.deploy.steps"],
    );
    assert_eq!(code, 0);
    assert!(v["reasoning"]
        .as_str()
        .unwrap()
        .contains("no LLM is configured"));
}
