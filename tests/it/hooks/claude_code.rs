//! Claude Code's hooks, with the JSON its documentation gives for each event: a session in
//! a git repository that starts, switches code branch, asks, ends a turn (captured by a
//! scripted `claude` command), and comes back to `main` after the branch was merged.

use serde_json::{json, Value};

use super::{answer, context, transcript, Project};

/// The members every Claude Code hook input has.
fn input(p: &Project, event: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": "6f1c0f6e-2b1a-4c55-9a43-1d5b0c7a9e10",
        "transcript_path": p.home.join(".claude/projects/app/session.jsonl"),
        "cwd": p.repo,
        "permission_mode": "default",
        "hook_event_name": event,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// A `claude` that notes its arguments and stdin, waits `delay` seconds (so that the hook,
/// which does not wait for the model, has returned long before), and answers one fact.
fn scripted_claude(p: &Project, delay: &str, fact: &str) {
    let notes = p.bin.join("claude-calls");
    p.script(
        "claude",
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{n}'\nprintf 'CLAUDECODE=%s MEMOIR_NO_CAPTURE=%s\\n' \"$CLAUDECODE\" \"$MEMOIR_NO_CAPTURE\" >> '{n}'\ncat >> '{n}'\nsleep {delay}\nprintf '%s\\n' '{fact}'\n",
            n = notes.display()
        ),
    );
}

#[test]
fn a_session_starts_switches_branch_asks_and_captures_on_the_memory_branch() {
    let p = Project::new();

    // SessionStart: the project's store is created in repo mode and described.
    let start = answer(&p.hook(
        "claude-code",
        "session-start",
        &input(
            &p,
            "SessionStart",
            json!({"source": "startup", "model": "claude-sonnet-4-6"}),
        ),
    ))
    .expect("session-start answers");
    assert_eq!(start["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = context(&Some(start.clone()));
    let store = p.store();
    assert!(
        ctx.contains(&format!("Store: {}", store.display())),
        "{ctx}"
    );
    assert!(
        ctx.contains("Memory branch: main (follows the code branch)"),
        "{ctx}"
    );
    assert_eq!(start["systemMessage"], "[memoir] main · 0 memories");
    assert!(store.join(".git").is_dir(), "the store has its .git");
    assert!(ctx.len() <= 6000);

    // The agent's own calls, from the project directory, find the same store.
    let (code, v) = p.cli(&["status"]);
    assert_eq!((code, v["path"].as_str()), (0, store.to_str()));
    let (code, _) = p.cli(&[
        "remember",
        "Releases go out with make release, on Fridays only",
        "-p",
        "project.release.process",
    ]);
    assert_eq!(code, 0);

    // A code branch: the next prompt follows it, and finds the memory it is about.
    p.git(&["checkout", "-q", "-b", "feature/login"]);
    let prompt = "How do we get a release out to production for this login work?";
    let asked = answer(&p.hook(
        "claude-code",
        "user-prompt-submit",
        &input(&p, "UserPromptSubmit", json!({"prompt": prompt})),
    ))
    .expect("memories for a prompt about releases");
    assert_eq!(
        asked["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let ctx = context(&Some(asked));
    assert!(
        ctx.contains("default:project.release.process: Releases go out with make release"),
        "{ctx}"
    );
    assert!(ctx.len() <= 2000);
    let (_, status) = p.cli(&["status"]);
    assert_eq!(
        status["branch"], "feature/login",
        "the memory branch follows"
    );
    let (_, branches) = p.cli(&["branch"]);
    assert_eq!(branches["branches"], json!(["feature/login", "main"]));

    // A short acknowledgement gets nothing.
    let ack = p.hook(
        "claude-code",
        "user-prompt-submit",
        &input(&p, "UserPromptSubmit", json!({"prompt": "ok thanks"})),
    );
    assert_eq!(answer(&ack), None);

    // Stop: the last turn goes to capture, detached; the model is the `claude` command.
    scripted_claude(
        &p,
        "2",
        "preferences.coding.testing\tThe user wants pytest for every test.",
    );
    let t = p.home.join(".claude/projects/app/session.jsonl");
    std::fs::create_dir_all(t.parent().unwrap()).unwrap();
    transcript(
        &t,
        &[
            json!({"type": "user", "message": {"role": "user", "content": "Old question"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": "Old answer"}}),
            json!({"type": "user", "message": {"role": "user", "content": "Always use pytest here"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}),
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Will do: pytest from now on."}]}}),
        ],
    );
    let stop = p.hook(
        "claude-code",
        "stop",
        &input(
            &p,
            "Stop",
            json!({"stop_hook_active": false,
            "last_assistant_message": "Will do: pytest from now on."}),
        ),
    );
    assert_eq!(answer(&stop), None, "stop prints nothing");
    // The hook is back while the model is still thinking: nothing stored yet.
    let (_, early) = p.cli(&[
        "get",
        "preferences.coding.testing",
        "--branch",
        "feature/login",
    ]);
    assert_eq!(early["items"][0]["found"], false, "{}", p.log_text());
    assert!(p.log_text().contains("capture started"), "{}", p.log_text());

    let fact = p.wait_for("preferences.coding.testing", "feature/login");
    assert_eq!(fact["content"], "The user wants pytest for every test.");
    assert_eq!(fact["entries"][0]["actor"], "claude-code");
    assert_eq!(fact["entries"][0]["source"], "capture");
    let (_, on_main) = p.cli(&["get", "preferences.coding.testing", "--branch", "main"]);
    assert_eq!(
        on_main["items"][0]["found"], false,
        "captured on the code branch's memory branch"
    );
    let calls = std::fs::read_to_string(p.bin.join("claude-calls")).unwrap();
    assert!(calls.starts_with("-p --model claude-haiku-4-5 "), "{calls}");
    assert!(calls.contains("CLAUDECODE= MEMOIR_NO_CAPTURE=1"), "{calls}");
    assert!(calls.contains("[Human] Always use pytest here"), "{calls}");
    assert!(
        !calls.contains("Old question"),
        "only the last turn: {calls}"
    );

    // A Stop that a stop hook caused captures nothing; nor does a nested `claude`.
    std::fs::remove_file(p.bin.join("claude-calls")).unwrap();
    let again = input(&p, "Stop", json!({"stop_hook_active": true}));
    assert_eq!(answer(&p.hook("claude-code", "stop", &again)), None);
    let nested = input(&p, "Stop", json!({"stop_hook_active": false}));
    let o = p.hook_with(
        "claude-code",
        "stop",
        &nested,
        &[("MEMOIR_NO_CAPTURE", "1")],
    );
    assert_eq!(answer(&o), None);
    assert!(p.log_text().contains("stop hook active; nothing captured"));
    assert!(p.log_text().contains("capture is off"));
    assert!(!p.bin.join("claude-calls").exists(), "no model was asked");

    // The code branch is merged into main with a merge commit; back on main, the session
    // start promotes its memories.
    p.git(&["commit", "-q", "--allow-empty", "-m", "login"]);
    p.git(&["checkout", "-q", "main"]);
    p.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge login",
        "feature/login",
    ]);
    let back = answer(&p.hook(
        "claude-code",
        "session-start",
        &input(&p, "SessionStart", json!({"source": "resume"})),
    ))
    .unwrap();
    let ctx = context(&Some(back.clone()));
    assert!(ctx.contains("## Promoted into main"), "{ctx}");
    assert!(ctx.contains("- feature/login: 1 key promoted"), "{ctx}");
    assert!(
        back["systemMessage"]
            .as_str()
            .unwrap()
            .contains("promoted 1 merged branch"),
        "{back}"
    );
    let (_, status) = p.cli(&["status"]);
    assert_eq!(status["branch"], "main");
    let (_, on_main) = p.cli(&["get", "preferences.coding.testing"]);
    assert_eq!(on_main["items"][0]["found"], true);
    let (_, log) = p.cli(&["log", "-n", "1"]);
    assert_eq!(
        log["commits"][0]["message"],
        "Sync branch 'feature/login' into main"
    );

    // PreCompact captures too; SessionEnd answers nothing.
    scripted_claude(
        &p,
        "0",
        "project.build.tool\tThe project builds with cargo.",
    );
    transcript(
        &t,
        &[
            json!({"type": "user", "message": {"role": "user", "content": "How do we build?"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": "With cargo build."}}),
        ],
    );
    let compact = input(
        &p,
        "PreCompact",
        json!({"trigger": "manual", "custom_instructions": ""}),
    );
    assert_eq!(
        answer(&p.hook("claude-code", "pre-compact", &compact)),
        None
    );
    p.wait_for("project.build.tool", "main");
    let end = input(&p, "SessionEnd", json!({"reason": "exit"}));
    assert_eq!(answer(&p.hook("claude-code", "session-end", &end)), None);
}

#[test]
fn a_failing_hook_exits_0_prints_nothing_and_says_why_in_the_log() {
    let p = Project::new();
    let ok = input(&p, "SessionStart", json!({"source": "startup"}));
    for (host, event, stdin) in [
        ("claude-code", "no-such-event", ok.to_string()),
        ("nobody", "stop", ok.to_string()),
        ("codex", "session-end", ok.to_string()),
    ] {
        let mut c = p.memoir();
        c.args(["hook", host, event]);
        let o = crate::common::run_with_stdin(&mut c, stdin.as_bytes());
        assert_eq!(o.status.code(), Some(0), "{host} {event}");
        assert!(o.stdout.is_empty(), "{host} {event}: {:?}", o.stdout);
    }
    let log = p.log_text();
    assert!(
        log.contains("claude-code no-such-event") && log.contains("has no hook event"),
        "{log}"
    );
    // A store that cannot be opened (a file where it should be): exit 0, nothing printed.
    std::fs::create_dir_all(p.home.join(".memoir")).unwrap();
    std::fs::write(p.store(), "not a store").unwrap();
    let o = p.hook("claude-code", "session-start", &ok);
    assert_eq!(answer(&o), None);
    assert!(p.log_text().contains("failed:"), "{}", p.log_text());
    // A malformed setting of the environment does not fail the session either.
    let o = p.hook_with("claude-code", "stop", &ok, &[("MEMOIR_NOW", "soon")]);
    assert_eq!(answer(&o), None);
    // Input that is not JSON is no input: the session is the process's directory's.
    std::fs::remove_file(p.store()).unwrap();
    let mut c = p.memoir();
    c.args(["hook", "claude-code", "session-start"]);
    let o = crate::common::run_with_stdin(&mut c, b"not json {");
    assert!(super::context(&answer(&o)).contains("Memory branch: main"));
}

#[test]
fn the_context_keeps_to_its_budget() {
    let p = Project::new();
    let ok = input(&p, "SessionStart", json!({"source": "startup"}));
    answer(&p.hook("claude-code", "session-start", &ok)).unwrap();
    let lines: String = (0..300)
        .map(|i| {
            json!({"key": format!("area{i}.topic{i}.item"), "content": format!("fact {i}")})
                .to_string()
                + "\n"
        })
        .collect();
    let f = p.home.join("m.jsonl");
    std::fs::write(&f, lines).unwrap();
    let (code, v) = p.cli(&["import", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let whole = context(&answer(&p.hook("claude-code", "session-start", &ok)));
    assert!(whole.len() > 700 && whole.len() <= 6000, "{}", whole.len());
    assert!(whole.contains("- default: area0.topic0 (1), "), "{whole}");
    let env = [("MEMOIR_HOOK_CONTEXT_BYTES", "700")];
    let cut = context(&answer(&p.hook_with(
        "claude-code",
        "session-start",
        &ok,
        &env,
    )));
    assert!(cut.len() <= 700, "{}", cut.len());
    assert!(cut.ends_with("\n[memoir: cut to 700 bytes]"), "{cut}");
    assert!(whole.starts_with(cut.trim_end_matches("\n[memoir: cut to 700 bytes]")));
}
