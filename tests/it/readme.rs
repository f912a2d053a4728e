//! The README's quickstart, executed line by line with the real binary, so it cannot rot.

use std::process::Command;

/// The shell lines of the README's `## Quickstart` code block.
fn quickstart_lines() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("## Quickstart")
        .nth(1)
        .expect("a Quickstart section");
    let block = section
        .split("```sh")
        .nth(1)
        .expect("a sh block")
        .split("```")
        .next()
        .unwrap();
    block
        .lines()
        .map(|l| l.split("  #").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Splits a shell line into words, honouring single and double quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn readme_quickstart_runs() {
    let dir = tempfile::tempdir().unwrap();
    let lines = quickstart_lines();
    assert!(lines.len() >= 10, "quickstart too short: {lines:?}");
    let mut store_env: Option<String> = None;
    let mut ran = 0;
    for line in &lines {
        let w = words(line);
        if w[0] == "export" {
            let (k, v) = w[1].split_once('=').unwrap();
            assert_eq!(k, "MEMOIR_STORE");
            store_env = Some(v.to_string());
            continue;
        }
        assert_eq!(w[0], "memoir", "unexpected line {line:?}");
        let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
        c.current_dir(dir.path())
            .env_clear()
            .env("MEMOIR_AUTHOR", "Reader <reader@example.org>")
            .args(&w[1..]);
        if let Some(s) = &store_env {
            c.env("MEMOIR_STORE", s);
        }
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "README line {line:?} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10);
}

/// The README's first command ends in `memoir tour`: the tour runs every step with the real
/// binary, each step succeeds, and it removes its throwaway store.
#[test]
fn the_tour_runs_and_cleans_up() {
    let out = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .arg("tour")
        .env_remove("MEMOIR_STORE")
        .env_remove("MEMOIR_JSON")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    for expected in [
        "$ memoir remember 'Production runs PostgreSQL 16' -p infra.database",
        "default:infra.database",
        "$ memoir merge agent-1 --into main",
        "✓ Store is sound",
        "The tour's store was removed",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    let store = stdout
        .lines()
        .find_map(|l| l.strip_prefix("$ memoir new "))
        .expect("the tour creates its store first");
    assert!(
        !std::path::Path::new(store).exists(),
        "{store} was left behind"
    );
}

/// `memoir tour --keep DIR` leaves the store for exploring, sound and with its history.
#[test]
fn the_tour_can_keep_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("kept");
    let out = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .arg("tour")
        .arg("--keep")
        .arg(&store)
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .arg("-s")
        .arg(&store)
        .args(["log", "-n", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8(log.stdout).unwrap();
    assert!(text.contains("Merge branch 'agent-1' into main"), "{text}");
}

/// The README's stdio host configuration is valid JSON with an `env` block (hosts pass a
/// stdio server only a short allowlist of variables), and the `args` it shows start a server
/// on a `~/` store path without a shell.
#[test]
fn readme_host_configuration_has_an_env_block_and_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let block = readme
        .split("```json")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("\"command\": \"memoir\""))
        .expect("a stdio host configuration in the README");
    let config: serde_json::Value = serde_json::from_str(block).expect("valid JSON");
    let server = &config["mcpServers"]["memoir"];
    assert!(server["env"].as_object().is_some_and(|e| !e.is_empty()));
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert!(args.iter().any(|a| a.starts_with("~/")), "{args:?}");

    // Started as a host starts it: no shell, HOME set, only the configured environment (the
    // host here closes stdin at once, after the store is made and served).
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memoir"))
        .args(&args)
        .env_clear()
        .env("HOME", home.path())
        .current_dir(home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("over stdio"), "{stderr}");
    let store = args
        .iter()
        .find(|a| a.starts_with("~/"))
        .unwrap()
        .trim_start_matches("~/");
    assert!(home.path().join(store).join("FORMAT").is_file());
    assert!(!home.path().join("~").exists());
}
