//! Names and provenance that could mislead: a glob that would match everything, a branch
//! that would hide a commit, an author that would forge a log line, a clock past year 9999.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{cli, new_store};

fn run_env(store: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memoir"))
        .env_clear()
        .envs(env.iter().copied())
        .arg("-s")
        .arg(store)
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
fn a_glob_with_a_slash_is_refused_not_matched_against_everything() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    assert_eq!(cli(&store, &["remember", "x", "-p", "a.b"]).0, 0);
    for args in [
        vec!["summarize", "--keys", "**/**"],
        vec!["log", "--keys", "**/**"],
        vec!["search", "x", "--keys", "a/b"],
    ] {
        let (code, v) = cli(&store, &args);
        assert_eq!(code, 1, "{args:?}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("never contain `/`"),
            "{v}"
        );
    }
}

#[test]
fn a_branch_cannot_be_named_like_a_commit_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let (_, v) = cli(&store, &["remember", "x", "-p", "a.b"]);
    let id = v["commit_hash"].as_str().unwrap().to_string();
    let before = cli(&store, &["branch"]).1;
    for name in [id.as_str(), &id[..8], "cafe"] {
        for args in [
            vec!["branch", name],
            vec!["checkout", "-b", name],
            vec!["remember", "y", "-p", "c.d", "--branch", name],
        ] {
            let (code, v) = cli(&store, &args);
            assert_eq!(code, 1, "{args:?}: {v}");
            assert!(
                v["error"]
                    .as_str()
                    .unwrap()
                    .contains("reads as a commit id"),
                "{v}"
            );
        }
    }
    assert_eq!(cli(&store, &["branch"]).1, before);
    // The commit is still reachable by its id.
    let (code, v) = cli(&store, &["get", "a.b", "--at", &id[..8]]);
    assert_eq!(
        (code, v["items"][0]["found"].clone()),
        (0, Value::Bool(true))
    );
    assert_eq!(cli(&store, &["branch", "cafe-2"]).0, 0);
}

#[test]
fn provenance_is_one_line_and_log_shows_it_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let forged = "mallory\ncbfc09cb Store secrets.ok in default";
    for flag in ["--author", "--source", "--actor"] {
        let (code, v) = cli(&store, &["remember", "x", "-p", "a.b", flag, forged]);
        assert_eq!(code, 1, "{flag}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("control character"),
            "{v}"
        );
    }
    let (code, _, err) = run_env(
        &store,
        &[("MEMOIR_AUTHOR", forged)],
        &["remember", "x", "-p", "a.b"],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        cli(&store, &["log"]).1["commits"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn the_clock_must_be_within_the_calendar() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    for now in ["253402300800", "1e300", "-1", "inf"] {
        let (code, _, err) = run_env(&store, &[("MEMOIR_NOW", now)], &["status"]);
        assert_eq!(code, 1, "{now}: {err}");
        assert!(err.contains("MEMOIR_NOW"), "{err}");
    }
    let (code, _, err) = run_env(&store, &[("MEMOIR_NOW", "253402300799")], &["status"]);
    assert_eq!(code, 0, "{err}");
}
