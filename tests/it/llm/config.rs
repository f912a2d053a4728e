//! Provider configuration as users have it: `OPENAI_BASE_URL` beside memoir's own
//! `MEMOIR_LLM_BASE_URL` (which wins), base URLs with or without `/v1`, servers that need no
//! key, and the choice between providers stated by `status` and `-v`. Through the binary,
//! against the scripted server.

use serde_json::{json, Value};

use super::{anthropic, memoir, memoir_full, openai, raw, serve, store_with};

/// A single-mode recall answered with the one key of the store.
const PICK: &str = r#"{"keys": ["default:infra.database"]}"#;

fn db_store(dir: &std::path::Path) -> std::path::PathBuf {
    store_with(
        dir,
        &[("PostgreSQL 16 is the main database", "infra.database")],
    )
}

/// `recall --mode single` through whatever `env` configures: the JSON output.
fn recall(store: &std::path::Path, env: &[(&str, &str)]) -> Value {
    let (code, v) = memoir(store, env, &["recall", "database", "--mode", "single"]);
    assert_eq!(code, 0, "{v}");
    v
}

/// Runs the binary without `--json`: exit code, stdout, stderr.
fn human(store: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"));
    cmd.env_clear()
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("-s").arg(store).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn openai_base_url_is_honoured_and_memoir_s_own_wins() {
    let dir = tempfile::tempdir().unwrap();
    let store = db_store(dir.path());
    // OPENAI_BASE_URL alone configures an OpenAI-compatible server.
    let a = serve(vec![openai(PICK)]);
    let env = [("OPENAI_BASE_URL", a.url.as_str())];
    let v = recall(&store, &env);
    assert_eq!(v["metadata"]["mode"], "single", "{v}");
    assert_eq!(v["memories"][0]["path"], "infra.database");
    assert_eq!(a.requests()[0].line, "POST /v1/chat/completions HTTP/1.1");
    // Both set: MEMOIR_LLM_BASE_URL wins, and status says so.
    let a = serve(vec![openai(PICK)]);
    let b = serve(vec![openai(PICK)]);
    let env = [
        ("OPENAI_BASE_URL", a.url.as_str()),
        ("MEMOIR_LLM_BASE_URL", b.url.as_str()),
    ];
    let v = recall(&store, &env);
    assert_eq!(v["metadata"]["mode"], "single", "{v}");
    assert_eq!((a.requests().len(), b.requests().len()), (0, 1));
    let (code, s) = memoir(&store, &env, &["status"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["llm"]["provider"], "openai");
    assert_eq!(
        s["llm"]["endpoint"],
        format!("{}/v1/chat/completions", b.url).as_str()
    );
    let origin = s["llm"]["origin"].as_str().unwrap();
    assert!(
        origin.contains("OPENAI_BASE_URL (MEMOIR_LLM_BASE_URL wins)"),
        "{origin}"
    );
}

#[test]
fn base_urls_work_with_or_without_v1() {
    let dir = tempfile::tempdir().unwrap();
    let store = db_store(dir.path());
    let forms = ["", "/", "/v1", "/v1/"];
    let s = serve(forms.iter().map(|_| openai(PICK)).collect());
    for form in forms {
        let base = format!("{}{form}", s.url);
        let v = recall(&store, &[("MEMOIR_LLM_BASE_URL", base.as_str())]);
        assert_eq!(v["metadata"]["mode"], "single", "{form:?}: {v}");
    }
    let lines: Vec<String> = s.requests().into_iter().map(|r| r.line).collect();
    assert_eq!(
        lines,
        vec!["POST /v1/chat/completions HTTP/1.1"; forms.len()]
    );
    // The same for OPENAI_BASE_URL, and for Anthropic's base URL.
    let s = serve(vec![openai(PICK), openai(PICK)]);
    for form in ["", "/v1"] {
        let base = format!("{}{form}", s.url);
        let v = recall(&store, &[("OPENAI_BASE_URL", base.as_str())]);
        assert_eq!(v["metadata"]["mode"], "single", "{form:?}: {v}");
    }
    let s = serve(forms.iter().map(|_| anthropic(PICK)).collect());
    for form in forms {
        let base = format!("{}{form}", s.url);
        let env = [
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", base.as_str()),
        ];
        let v = recall(&store, &env);
        assert_eq!(v["metadata"]["mode"], "single", "{form:?}: {v}");
        assert_eq!(v["metadata"]["model"], "anthropic:claude-haiku-4-5");
    }
    let lines: Vec<String> = s.requests().into_iter().map(|r| r.line).collect();
    assert_eq!(lines, vec!["POST /v1/messages HTTP/1.1"; forms.len()]);
}

#[test]
fn a_base_url_without_a_key_sends_none_or_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let store = db_store(dir.path());
    // A local server that needs no key: no authorisation header is sent.
    let s = serve(vec![openai(PICK)]);
    let v = recall(&store, &[("OPENAI_BASE_URL", s.url.as_str())]);
    assert_eq!(v["metadata"]["mode"], "single", "{v}");
    let r = &s.requests()[0];
    assert!(!r.headers.contains_key("authorization"), "{:?}", r.headers);
    let s = serve(vec![anthropic(PICK)]);
    let v = recall(&store, &[("ANTHROPIC_BASE_URL", s.url.as_str())]);
    assert_eq!(v["metadata"]["mode"], "single", "{v}");
    assert_eq!(v["metadata"]["model"], "anthropic:claude-haiku-4-5");
    let r = &s.requests()[0];
    assert!(!r.headers.contains_key("x-api-key"), "{:?}", r.headers);
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");

    // A server that needs one: the failure says so, in recall (JSON and terminal) and in
    // remember.
    let unauthorized = r#"{"error": {"message": "missing Authorization header"}}"#;
    let s = serve(vec![raw(401, unauthorized); 3]);
    let env = [("OPENAI_BASE_URL", s.url.as_str())];
    let v = recall(&store, &env);
    assert_eq!(v["metadata"]["fellback_from"], "single");
    let reason = v["metadata"]["fallback_reason"].as_str().unwrap();
    assert!(
        reason.contains("401")
            && reason.contains("no API key was sent")
            && reason.contains("set OPENAI_API_KEY"),
        "{reason}"
    );
    let (code, out, _) = human(&store, &env, &["recall", "database"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("answered lexically") && out.contains("no API key was sent"),
        "{out}"
    );
    let (code, v) = memoir(&store, &env, &["remember", "Likes dark mode"]);
    assert_eq!(code, 1, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("no API key was sent") && e.contains("nothing was stored"),
        "{e}"
    );
    // A wrong path is named as such.
    let s = serve(vec![raw(404, "not found")]);
    let base = format!("{}/api", s.url);
    let v = recall(&store, &[("OPENAI_BASE_URL", base.as_str())]);
    let reason = v["metadata"]["fallback_reason"].as_str().unwrap();
    assert!(
        reason.contains("404") && reason.contains("check the base URL"),
        "{reason}"
    );

    // The public APIs with neither key nor base URL: a configuration error, not a silent
    // fallback.
    for (provider, key) in [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
    ] {
        let env = [("MEMOIR_LLM_PROVIDER", provider)];
        let (code, v) = memoir(&store, &env, &["recall", "database"]);
        assert_eq!(code, 1, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(&format!("needs {key}")), "{e}");
        let (code, v, err) = memoir_full(&store, &env, &["status"]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["llm"], Value::Null);
        assert!(
            err.contains("LLM not configured") && err.contains(key),
            "{err}"
        );
    }
}

#[test]
fn status_and_verbose_state_which_provider_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let store = db_store(dir.path());
    // Nothing configured.
    let (code, v) = memoir(&store, &[], &["status"]);
    assert_eq!(code, 0);
    assert_eq!(v["llm"], Value::Null);
    let (_, out, _) = human(&store, &[], &["status"]);
    assert!(
        out.contains("LLM: none (recall is lexical; remember needs -p)"),
        "{out}"
    );

    // Both keys set: OpenAI is used, and both faces say so and how to choose the other.
    let both = [
        ("OPENAI_API_KEY", "sk-test-openai-0000"),
        ("ANTHROPIC_API_KEY", "sk-ant-test-0000"),
    ];
    let (code, v) = memoir(&store, &both, &["status"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["llm"],
        json!({
            "provider": "openai",
            "model": "gpt-4o-mini",
            "endpoint": "https://api.openai.com/v1/chat/completions",
            "api_key_set": true,
            "origin": "OPENAI_API_KEY is set; also set but unused: ANTHROPIC_API_KEY \
                       (MEMOIR_LLM_PROVIDER=anthropic uses it)",
        })
    );
    let (code, out, err) = human(&store, &both, &["status"]);
    assert_eq!(code, 0, "{err}");
    let line = "LLM: openai gpt-4o-mini at https://api.openai.com/v1/chat/completions, with an \
                API key (OPENAI_API_KEY is set; also set but unused: ANTHROPIC_API_KEY \
                (MEMOIR_LLM_PROVIDER=anthropic uses it))";
    assert!(out.contains(line), "{out}");
    let (code, _, err) = human(&store, &both, &["-v", "get", "infra.database"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("llm: {}", &line[5..])), "{err}");
    for text in [&out, &err] {
        assert!(
            !text.contains("sk-test") && !text.contains("sk-ant"),
            "{text}"
        );
    }

    // MEMOIR_LLM_PROVIDER chooses the other one.
    let mut env = both.to_vec();
    env.push(("MEMOIR_LLM_PROVIDER", "anthropic"));
    let (_, v) = memoir(&store, &env, &["status"]);
    assert_eq!(v["llm"]["provider"], "anthropic");
    assert_eq!(
        v["llm"]["endpoint"],
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        v["llm"]["origin"],
        "MEMOIR_LLM_PROVIDER=anthropic; also set but unused: OPENAI_API_KEY \
         (MEMOIR_LLM_PROVIDER=openai uses it)"
    );
    let (_, _, err) = human(
        &store,
        &env,
        &["-v", "recall", "database", "--mode", "lexical"],
    );
    assert!(
        err.contains("llm: anthropic claude-haiku-4-5 at https://api.anthropic.com/v1/messages"),
        "{err}"
    );

    // A command, and a local server without a key.
    let (_, v) = memoir(
        &store,
        &[("MEMOIR_LLM_COMMAND", "my-model --fast")],
        &["status"],
    );
    assert_eq!(v["llm"]["provider"], "command");
    assert_eq!(v["llm"]["endpoint"], "my-model --fast");
    assert_eq!(v["llm"]["origin"], "MEMOIR_LLM_COMMAND is set");
    let env = [("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")];
    let (_, v) = memoir(&store, &env, &["status"]);
    assert_eq!(v["llm"]["api_key_set"], false);
    assert_eq!(
        v["llm"]["endpoint"],
        "http://127.0.0.1:9/v1/chat/completions"
    );
    let (_, out, _) = human(&store, &env, &["status"]);
    assert!(
        out.contains("without an API key (OPENAI_BASE_URL is set)"),
        "{out}"
    );
}
