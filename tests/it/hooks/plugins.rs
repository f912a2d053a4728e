//! The plugins in `plugins/`: their manifests parse, every hook they install is `memoir hook
//! HOST EVENT` for an event the binary handles (run here as the host runs it), and the
//! Claude Code status line prints the project's branch and count.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{answer, Project};

fn plugin(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_hook_the_plugins_install_is_the_binary_and_answers() {
    let p = Project::new();
    for (host, manifest, hooks) in [
        (
            "claude-code",
            "plugins/claude-code/.claude-plugin/plugin.json",
            "plugins/claude-code/hooks/hooks.json",
        ),
        (
            "codex",
            "plugins/codex/.codex-plugin/plugin.json",
            "plugins/codex/hooks/hooks.json",
        ),
    ] {
        assert_eq!(read_json(&plugin(manifest))["name"], "memoir");
        let events = read_json(&plugin(hooks));
        let events = events["hooks"].as_object().unwrap();
        assert!(events.contains_key("SessionStart") && events.contains_key("Stop"));
        for (event, groups) in events {
            for h in groups[0]["hooks"].as_array().unwrap() {
                let command = h["command"].as_str().unwrap();
                let words: Vec<&str> = command.split(' ').collect();
                assert_eq!(&words[..2], ["memoir", "hook"], "{command}");
                assert_eq!(words[2], host, "{command}");
                let input = json!({"session_id": "s", "cwd": p.repo, "hook_event_name": event,
                                   "source": "startup", "prompt": "How is the release made?",
                                   "stop_hook_active": false, "transcript_path": null});
                let o = p.hook(host, words[3], &input);
                answer(&o);
                assert!(
                    !p.log_text()
                        .contains(&format!("no hook event '{}'", words[3])),
                    "{command}: {}",
                    p.log_text()
                );
            }
        }
    }
    for market in [
        ".claude-plugin/marketplace.json",
        ".agents/plugins/marketplace.json",
    ] {
        let m = read_json(&plugin(market));
        assert_eq!(m["plugins"][0]["name"], "memoir");
    }
    let commands: Vec<String> = std::fs::read_dir(plugin("plugins/claude-code/commands"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for c in ["remember.md", "recall.md", "status.md", "sync.md", "ui.md"] {
        assert!(commands.contains(&c.to_string()), "{c}");
    }
}

#[test]
fn the_status_line_shows_the_projects_branch_and_count() {
    let Some(sh) = crate::common::require(crate::common::on_path(&["sh"]), "no sh on PATH") else {
        return;
    };
    let p = Project::new();
    let start = json!({"cwd": p.repo, "hook_event_name": "SessionStart", "source": "startup"});
    answer(&p.hook("claude-code", "session-start", &start));
    assert_eq!(p.cli(&["remember", "fact", "-p", "project.a.b"]).0, 0);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_memoir")).parent().unwrap();
    let mut c = std::process::Command::new(sh);
    c.arg(plugin("plugins/claude-code/scripts/statusline.sh"))
        .env_clear()
        .env("HOME", &p.home)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .stdout(std::process::Stdio::piped());
    let input =
        json!({"session_id": "s", "workspace": {"current_dir": p.repo}, "model": {"id": "m"}});
    let o = crate::common::run_with_stdin(&mut c, input.to_string().as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "memoir main · 1 memories\n"
    );
}
