//! The providers: OpenAI and Anthropic wire formats, typed failures, and the command provider.

use std::net::TcpListener;
use std::time::Duration;

use memoir::llm::{provider, LlmError, ProviderKind};

use super::{anthropic, cfg, openai, raw, serve, Answer};

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

/// A reply past 8 MiB is refused rather than read on without end.
#[test]
fn an_oversized_reply_is_refused() {
    let s = serve(vec![raw(200, &"x".repeat((8 << 20) + 1))]);
    let llm = provider(cfg(ProviderKind::OpenAi, &s.url, 5000));
    match llm.complete("", "p") {
        Err(LlmError::Transport { reason, .. }) => assert!(reason.contains("larger"), "{reason}"),
        other => panic!("{other:?}"),
    }
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

/// Processes whose command line contains `marker` (zombies have none), waiting up to 2 s for
/// killed ones to go.
pub(super) fn survivors(marker: &str) -> Vec<String> {
    let started = std::time::Instant::now();
    loop {
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
                continue;
            };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) {
                found.push(format!("{name}: {cmd}"));
            }
        }
        if found.is_empty() || started.elapsed() > Duration::from_secs(2) {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A command that leaves a helper holding its output does not stretch the call past the
/// timeout: the whole process group is killed and reaped, whether the command itself
/// finished (its answer is used) or not (a timeout).
#[test]
fn command_provider_kills_helpers_holding_its_output() {
    let dir = tempfile::tempdir().unwrap();
    // The helpers' command line is `sh <script>`: the script's path marks them.
    let answers = dir.path().join("answers-then-leaves-a-helper.sh");
    std::fs::write(&answers, "(sleep 30; :) &\necho '{\"keys\": []}'\n").unwrap();
    let hangs = dir.path().join("hangs-with-a-helper.sh");
    std::fs::write(&hangs, "(sleep 30; :) &\nsleep 30\n").unwrap();
    let mk = |p: &std::path::Path| {
        provider(cfg(
            ProviderKind::Command(vec!["sh".into(), p.display().to_string()]),
            "",
            1000,
        ))
    };
    let t = std::time::Instant::now();
    let out = mk(&answers).complete("", "p").unwrap();
    assert_eq!(out.trim(), r#"{"keys": []}"#);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let left = survivors(&answers.display().to_string());
    assert!(left.is_empty(), "{left:?}");
    let t = std::time::Instant::now();
    assert!(matches!(
        mk(&hangs).complete("", "p"),
        Err(LlmError::Timeout(_))
    ));
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let left = survivors(&hangs.display().to_string());
    assert!(left.is_empty(), "{left:?}");
}
