//! Codex's hooks, with the JSON of its published hook schemas (codex-rs/hooks/schema:
//! `session-start`, `user-prompt-submit`, `stop` and `pre-compact` command inputs): the same
//! session as Claude Code's, the turn read from Codex's rollout transcript, the model a
//! scripted command (`MEMOIR_LLM_COMMAND`).

use serde_json::{json, Value};

use super::{answer, context, transcript, Project};

fn input(p: &Project, event: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": "0199a2f4-7c1e-7d21-b6a0-3f1e2d4c5b6a",
        "transcript_path": Value::Null,
        "cwd": p.repo,
        "hook_event_name": event,
        "model": "gpt-5.4",
        "permission_mode": "default",
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[test]
fn a_codex_session_follows_the_branch_and_captures_from_its_rollout() {
    let p = Project::new();
    let model = p.script(
        "model",
        &format!(
            "#!/bin/sh\ncat >> '{}'\nprintf 'preferences.coding.style\\tThe user wants small functions.\\n'\n",
            p.bin.join("prompts").display()
        ),
    );
    let env = [("MEMOIR_LLM_COMMAND", model.to_str().unwrap())];

    let start = answer(&p.hook_with(
        "codex",
        "session-start",
        &input(&p, "SessionStart", json!({"source": "startup"})),
        &env,
    ))
    .unwrap();
    assert_eq!(start["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(context(&Some(start)).contains("Memory branch: main"));
    let (code, _) = p.cli(&[
        "remember",
        "Code review needs two approvals before merging",
        "-p",
        "workflow.review.policy",
    ]);
    assert_eq!(code, 0);

    p.git(&["switch", "-q", "-c", "refactor"]);
    let asked = answer(&p.hook_with(
        "codex",
        "user-prompt-submit",
        &input(
            &p,
            "UserPromptSubmit",
            json!({"turn_id": "t1", "prompt": "What does the review policy need before I merge?"}),
        ),
        &env,
    ))
    .unwrap();
    assert_eq!(
        asked["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    assert!(context(&Some(asked)).contains("workflow.review.policy"));
    assert_eq!(p.cli(&["status"]).1["branch"], "refactor");

    let rollout = p.home.join(".codex/sessions/rollout.jsonl");
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    transcript(
        &rollout,
        &[
            json!({"timestamp": "2026-11-29T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": p.repo}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Keep functions small in this code"}]}}),
            json!({"type": "response_item", "payload": {"type": "reasoning", "summary": [], "content": null}}),
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}}),
            json!({"type": "event_msg", "payload": {"type": "agent_message", "message": "Understood."}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Understood: small functions."}]}}),
        ],
    );
    let stop = input(
        &p,
        "Stop",
        json!({"turn_id": "t1", "stop_hook_active": false, "transcript_path": rollout,
               "last_assistant_message": "Understood: small functions."}),
    );
    assert_eq!(answer(&p.hook_with("codex", "stop", &stop, &env)), None);
    let fact = p.wait_for("preferences.coding.style", "refactor");
    assert_eq!(fact["entries"][0]["actor"], "codex");
    let prompts = std::fs::read_to_string(p.bin.join("prompts")).unwrap();
    assert!(
        prompts.contains(
            "[Human] Keep functions small in this code\n[Assistant] Understood: small functions."
        ),
        "{prompts}"
    );

    // Without a transcript, the last answer Codex names is the turn.
    std::fs::remove_file(p.bin.join("prompts")).unwrap();
    let (code, _) = p.cli(&["forget", "preferences.coding.style", "--branch", "refactor"]);
    assert_eq!(code, 0);
    let bare = input(
        &p,
        "Stop",
        json!({"turn_id": "t2", "stop_hook_active": false,
               "last_assistant_message": "From now on functions stay under 40 lines."}),
    );
    assert_eq!(answer(&p.hook_with("codex", "stop", &bare, &env)), None);
    p.wait_for("preferences.coding.style", "refactor");
    let prompts = std::fs::read_to_string(p.bin.join("prompts")).unwrap();
    assert!(prompts.contains("[Assistant] From now on functions stay under 40 lines."));

    // pre-compact is a Codex event; session-end is not (exit 0, nothing, the log says so).
    let compact = input(
        &p,
        "PreCompact",
        json!({"turn_id": "t3", "trigger": "auto", "transcript_path": rollout}),
    );
    assert_eq!(
        answer(&p.hook_with("codex", "pre-compact", &compact, &env)),
        None
    );
    let end = input(&p, "SessionEnd", json!({"reason": "other"}));
    assert_eq!(answer(&p.hook("codex", "session-end", &end)), None);
    assert!(
        p.log_text()
            .contains("codex has no hook event 'session-end'"),
        "{}",
        p.log_text()
    );
}
