//! Every `memoir ...` command shown in the code blocks of examples/skills/memoir/SKILL.md is
//! run, through `sh`, against a real store holding the keys the examples use; each must exit
//! 0, or the code its `# exit N` comment documents, and print one JSON object.

use std::path::Path;
use std::process::Command;

/// The commands of the skill's fenced code blocks, with their expected exit codes.
fn commands(skill: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in skill.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block && t.starts_with("memoir ") {
            let (cmd, code) = match t.split_once("# exit ") {
                Some((c, n)) => (c.trim(), n.trim().parse().expect("exit code")),
                None => (t, 0),
            };
            out.push((cmd.to_string(), code));
        }
    }
    out
}

fn run(bin_dir: &Path, store: &Path, line: &str) -> (i32, String, String) {
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(line)
        .env_clear()
        .env("PATH", path)
        .env("MEMOIR_STORE", store)
        .env("MEMOIR_AUTHOR", "Skill Test <s@example.org>")
        .output()
        .expect("run sh");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_command_of_the_skill_runs() {
    let skill_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/memoir/SKILL.md");
    let skill = std::fs::read_to_string(&skill_path).unwrap();
    assert!(skill.starts_with("---\nname: memoir\ndescription: "));
    let cmds = commands(&skill);
    assert!(cmds.len() >= 12, "{cmds:?}");

    let bin = Path::new(env!("CARGO_BIN_EXE_memoir"));
    let bin_dir = bin.parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("mem");
    // The keys the examples read, in two commits (so HEAD~1 exists).
    for setup in [
        format!("memoir new '{}'", store.display()),
        "memoir remember 'we use postgres 16' -p infra.database -p workflow.deploy".into(),
        "memoir remember 'prefers pytest over unittest' -p preferences.coding.testing -p preferences.coding.style".into(),
    ] {
        let (code, _, err) = run(bin_dir, &store, &setup);
        assert_eq!(code, 0, "{setup}: {err}");
    }

    for (cmd, want) in cmds {
        let (code, out, err) = run(bin_dir, &store, &cmd);
        assert_eq!(code, want, "`{cmd}` exited {code}: {out} {err}");
        if cmd.contains("--json") {
            let v: serde_json::Value = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("`{cmd}`: not JSON ({e}): {out}"));
            // Failures say `success: false`; successes say true, or (summarize) nothing.
            let success = v.get("success").cloned();
            if want == 0 {
                assert_ne!(success, Some(serde_json::json!(false)), "`{cmd}`: {v}");
            } else {
                assert_eq!(success, Some(serde_json::json!(false)), "`{cmd}`: {v}");
            }
        }
    }
}
