//! LLM providers and the picker against a scripted model behind a real HTTP server on
//! 127.0.0.1 (OpenAI and Anthropic wire formats), and the command provider.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use memoir::llm::{provider, Llm, LlmError, ProviderConfig, ProviderKind};
use memoir::recall::picker::{self, Inventory, Mode};
use serde_json::{json, Value};

/// One scripted answer: status, body, delay before answering.
#[derive(Clone)]
struct Answer {
    status: u16,
    body: String,
    delay: Duration,
}

fn openai(text: &str) -> Answer {
    Answer {
        status: 200,
        body: json!({"choices": [{"message": {"role": "assistant", "content": text}}]}).to_string(),
        delay: Duration::ZERO,
    }
}

fn anthropic(text: &str) -> Answer {
    Answer {
        status: 200,
        body: json!({"content": [{"type": "text", "text": text}]}).to_string(),
        delay: Duration::ZERO,
    }
}

fn raw(status: u16, body: &str) -> Answer {
    Answer {
        status,
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

#[derive(Debug, Clone)]
struct Request {
    line: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    _thread: JoinHandle<()>,
}

impl Server {
    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Serves the answers in order, one per request, then 500 for anything unscripted.
fn serve(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    let thread = std::thread::spawn(move || {
        let mut script = answers.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let mut headers = BTreeMap::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            let len: usize = headers
                .get("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            log.lock().unwrap().push(Request {
                line: line.trim_end().to_string(),
                headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let a = script.next().unwrap_or_else(|| raw(500, "unscripted"));
            std::thread::sleep(a.delay);
            let resp = format!(
                "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                a.status,
                a.body.len(),
                a.body
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    Server {
        url,
        requests,
        _thread: thread,
    }
}

fn cfg(kind: ProviderKind, url: &str, timeout_ms: u64) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url: url.to_string(),
        api_key: Some("test-key".into()),
        model: "scripted".into(),
        timeout: Duration::from_millis(timeout_ms),
        max_tokens: 64,
    }
}

#[test]
fn openai_wire_format() {
    let s = serve(vec![openai("default:a.b")]);
    let llm = provider(cfg(ProviderKind::OpenAi, &format!("{}/v1", s.url), 5000));
    assert_eq!(llm.complete("sys", "the prompt").unwrap(), "default:a.b");
    let r = &s.requests()[0];
    assert_eq!(r.line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(r.headers["authorization"], "Bearer test-key");
    assert_eq!(r.body["model"], "scripted");
    assert_eq!(r.body["messages"][0]["content"], "sys");
    assert_eq!(r.body["messages"][1]["role"], "user");
    assert_eq!(r.body["messages"][1]["content"], "the prompt");
}

#[test]
fn anthropic_wire_format() {
    let s = serve(vec![anthropic("work:x.y")]);
    let llm = provider(cfg(ProviderKind::Anthropic, &s.url, 5000));
    assert_eq!(llm.complete("sys", "question?").unwrap(), "work:x.y");
    let r = &s.requests()[0];
    assert_eq!(r.line, "POST /v1/messages HTTP/1.1");
    assert_eq!(r.headers["x-api-key"], "test-key");
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");
    assert_eq!(r.body["system"], "sys");
    assert_eq!(r.body["messages"][0]["content"], "question?");
    assert_eq!(r.body["max_tokens"], 64);
}

#[test]
fn provider_failures_are_typed() {
    let s = serve(vec![
        raw(429, "{\"error\": \"rate limited\"}"),
        raw(500, "boom"),
        raw(200, "{not json"),
        raw(200, "{\"choices\": []}"),
        Answer {
            delay: Duration::from_millis(1500),
            ..openai("late")
        },
    ]);
    let llm = provider(cfg(ProviderKind::OpenAi, &s.url, 400));
    assert!(matches!(
        llm.complete("", "p"),
        Err(LlmError::Status { status: 429, .. })
    ));
    assert!(matches!(
        llm.complete("", "p"),
        Err(LlmError::Status { status: 500, .. })
    ));
    assert!(matches!(llm.complete("", "p"), Err(LlmError::Malformed(_))));
    assert!(matches!(llm.complete("", "p"), Err(LlmError::Malformed(_))));
    assert!(matches!(llm.complete("", "p"), Err(LlmError::Timeout(_))));
    // Nothing listens here any more once the server is gone: a transport error.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let llm = provider(cfg(ProviderKind::OpenAi, &dead, 1000));
    assert!(matches!(
        llm.complete("", "p"),
        Err(LlmError::Transport { .. })
    ));
}

#[test]
fn command_provider() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("model.sh");
    let seen = dir.path().join("prompt.txt");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat > {}\necho default:a.b\n", seen.display()),
    )
    .unwrap();
    let fail = dir.path().join("fail.sh");
    std::fs::write(&fail, "#!/bin/sh\necho oops >&2\nexit 3\n").unwrap();
    let slow = dir.path().join("slow.sh");
    std::fs::write(&slow, "#!/bin/sh\nsleep 5\n").unwrap();
    for f in [&script, &fail, &slow] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mk = |p: &std::path::Path, ms| {
        provider(cfg(
            ProviderKind::Command(vec![p.display().to_string()]),
            "",
            ms,
        ))
    };
    assert_eq!(
        mk(&script, 5000).complete("sys", "prompt").unwrap().trim(),
        "default:a.b"
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "sys\n\nprompt");
    match mk(&fail, 5000).complete("", "p") {
        Err(LlmError::Command(m)) => assert!(m.contains("oops"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        mk(&slow, 300).complete("", "p"),
        Err(LlmError::Timeout(_))
    ));
}

struct Fixed {
    keys: Vec<String>,
}

impl Inventory for Fixed {
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn sample(&self, key: &str) -> Result<String, picker::SampleError> {
        Ok(format!("content of {key}"))
    }
}

fn inventory(groups: &[(&str, usize)]) -> Fixed {
    let mut keys = Vec::new();
    for (p, n) in groups {
        for i in 0..*n {
            keys.push(format!("default:{p}.k{i:03}"));
        }
    }
    keys.sort();
    Fixed { keys }
}

fn llm_at(s: &Server) -> Box<dyn Llm> {
    provider(cfg(ProviderKind::OpenAi, &s.url, 5000))
}

#[test]
fn single_mode_is_one_call_over_every_key() {
    let inv = inventory(&[("a", 3), ("b", 2)]);
    let s = serve(vec![openai(
        "- default:b.k001\n- default:zz.k000\n- default:a.k000",
    )]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Single, "q?", &inv, 10).unwrap();
    assert_eq!(p.keys, ["default:b.k001", "default:a.k000"]);
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = reqs[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    for k in &inv.keys {
        assert!(
            prompt.contains(&format!("- {k}: content of {k}")),
            "{k} missing"
        );
    }
    assert_eq!(p.prompts.len(), 1);
    assert!(p.step_timings.contains_key("single"));
}

#[test]
fn tiered_escalates_exactly_above_forty_keys() {
    // 40 keys under `a`: no second step.
    let inv = inventory(&[("a", 40), ("b", 3)]);
    let s = serve(vec![openai("default:a"), openai("default:a.k007")]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert_eq!(p.keys, ["default:a.k007"]);
    assert_eq!(s.requests().len(), 2);
    // 41 keys under `a`: a second step over its depth-2 prefixes (the keys themselves here).
    let inv = inventory(&[("a", 41), ("b", 3)]);
    let s = serve(vec![
        openai("default:a\ndefault:b"),
        openai("default:a.k040"),
        openai("default:a.k040\ndefault:b.k002"),
    ]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert_eq!(p.keys, ["default:a.k040", "default:b.k002"]);
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3);
    let l1 = reqs[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(l1.contains("- default:a: 41") && l1.contains("- default:b: 3"));
    let keys = reqs[2].body["messages"][1]["content"].as_str().unwrap();
    assert!(keys.contains("default:a.k040") && keys.contains("default:b.k000"));
    assert!(!keys.contains("default:a.k039"));
    let steps: Vec<&str> = p.prompts.iter().map(|l| l.step.as_str()).collect();
    assert_eq!(steps, ["l1", "l2:default:a", "keys"]);
}

#[test]
fn tiered_fallbacks_and_none() {
    // Garbage at the first step: the three largest prefixes are descended.
    let inv = inventory(&[("a", 5), ("b", 4), ("c", 3), ("d", 2)]);
    let s = serve(vec![openai("I think the answer is 42"), openai("NONE")]);
    let p = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap();
    assert!(p.keys.is_empty());
    assert_eq!(p.fallbacks, ["l1"]);
    let keys = s.requests()[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(keys.contains("default:a.k000") && keys.contains("default:c.k002"));
    assert!(!keys.contains("default:d."));
    // Garbage at the key step is an error carrying what was done.
    let s = serve(vec![openai("default:a"), openai("no idea")]);
    let e = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap_err();
    assert_eq!(e.step, "keys");
    assert_eq!(e.partial.prompts.len(), 2);
    // A failing model is an error naming the step.
    let s = serve(vec![raw(500, "down")]);
    let e = picker::pick(llm_at(&s).as_ref(), Mode::Tiered, "q?", &inv, 5).unwrap_err();
    assert_eq!(e.step, "l1");
    assert!(matches!(e.llm, Some(LlmError::Status { status: 500, .. })));
}

fn memoir(store: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (i32, Value) {
    let (code, v, _) = memoir_full(store, env, args);
    (code, v)
}

/// Runs the binary with a clean LLM environment: exit code, JSON stdout, stderr.
fn memoir_full(
    store: &std::path::Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (i32, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"));
    for (k, _) in std::env::vars() {
        if k.starts_with("MEMOIR_") || k.ends_with("_API_KEY") || k == "ANTHROPIC_BASE_URL" {
            cmd.env_remove(k);
        }
    }
    cmd.env("MEMOIR_NOW", "1700000000")
        .env("MEMOIR_AUTHOR", "Tester <t@example.org>");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .arg("-s")
        .arg(store)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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
    let s = serve(vec![openai(
        "default:ops.deploy.strategy\n../../etc/passwd",
    )]);
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

/// A new store holding `memories` (content, path) written with -p.
fn store_with(dir: &std::path::Path, memories: &[(&str, &str)]) -> std::path::PathBuf {
    let store = dir.join("s");
    assert_eq!(memoir(&store, &[], &["new", store.to_str().unwrap()]).0, 0);
    for (c, p) in memories {
        let (code, v) = memoir(&store, &[], &["remember", c, "-p", p]);
        assert_eq!(code, 0, "{v}");
    }
    store
}

fn commit_count(store: &std::path::Path) -> u64 {
    let (code, v) = memoir(store, &[], &["status"]);
    assert_eq!(code, 0, "{v}");
    v["commit_count"].as_u64().unwrap()
}

fn record(store: &std::path::Path, key: &str) -> Value {
    let (code, v) = memoir(store, &[], &["get", key]);
    assert_eq!(code, 0, "{v}");
    v["items"][0]["value"].clone()
}

/// The user prompt of a recorded request, in either wire format.
fn user_prompt(r: &Request) -> String {
    let m = &r.body["messages"];
    let last = m.as_array().map(|a| a.len()).unwrap_or(1) - 1;
    m[last]["content"].as_str().unwrap_or_default().to_string()
}

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
    assert_eq!(v["classification"]["confidence"], 0.82);
    assert_eq!(v["classification"]["rejected"], json!([]));
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
        "Here you go:\n{\"paths\": [\"preferences.coding.testing\", \"Tools.Testing.Pytest\"], \
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
    // Injected and malformed paths are dropped; the valid one is used, in -n's namespace.
    let s = serve(vec![openai(
        r#"{"paths": ["../x", "default:evil.path.here", "a.b.c; rm -rf /", "notes.misc",
            "work:notes.team.standup"], "confidence": 0.7, "reasoning": "team notes"}"#,
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
    let rejected = v["classification"]["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 4, "{rejected:?}");
    assert!(rejected
        .iter()
        .any(|r| r.as_str().unwrap().contains("namespace")));

    // Nothing valid: exit 1, nothing written.
    let before = commit_count(&store);
    let s = serve(vec![openai(
        "- ../../etc/passwd\n- rm -rf /\n- a.b\n- x.y.z.w\n- other:q.r.s",
    )]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, v) = memoir(&store, &env, &["remember", "Something else"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["success"], false);
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("no valid three-level path"), "{e}");
    assert!(e.contains("nothing was stored"), "{e}");
    assert_eq!(commit_count(&store), before);
    // Garbage: the same.
    let s = serve(vec![openai("I am not sure where this goes.")]);
    let base = format!("{}/v1", s.url);
    let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
    let (code, _) = memoir(&store, &env, &["remember", "Something else"]);
    assert_eq!(code, 1);
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

#[test]
fn llm_merge_asks_the_model_once_and_stores_its_merge() {
    let dir = tempfile::tempdir().unwrap();
    // Written without an LLM: a new memory (workflow.* defaults to llm_merge).
    let store = store_with(
        dir.path(),
        &[("Deploy with make release", "workflow.deploy.steps")],
    );
    let s = serve(vec![openai(
        "Deploy with make release, then run the smoke tests.",
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
    let s = serve(vec![anthropic("Prefers pytest; runs it with -x.")]);
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
        openai("Deploy with make release; tag the release first."),
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
    let mut want = String::from("Deploy with make release");
    for (i, (answer, cause)) in [
        (raw(500, "model is down"), "500"),
        (truncated, "token limit"),
        (openai("   "), "empty"),
    ]
    .into_iter()
    .enumerate()
    {
        let s = serve(vec![answer]);
        let base = format!("{}/v1", s.url);
        let env = [("MEMOIR_LLM_BASE_URL", base.as_str())];
        let content = format!("Step {i}");
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
    let s = serve(vec![openai("default:b-c.k000")]);
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
        "\nWhich memories help answer the question? Reply with at most 10 keys from the list, \
         one per line, most relevant first, or NONE if none do.",
    );
    assert_eq!(got, want);
    assert!(
        got.contains("a later deploy note"),
        "the updated record is sampled whole"
    );
}
