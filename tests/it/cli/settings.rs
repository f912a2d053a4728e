//! Settings files: `memoir config`, and the order flag > environment > store file > user file.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::{assert_error, cmd, Fixture};

/// The environment of a user whose home is `home`, with no author variable set.
fn user(home: &str) -> Vec<(&str, &str)> {
    vec![("HOME", home), ("MEMOIR_AUTHOR", "")]
}

fn last_author(f: &Fixture, env: &[(&str, &str)]) -> String {
    let o = f.run_env(env, true, &["log", "-n", "1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.json()["commits"][0]["author"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_flag_wins_then_the_environment_then_the_store_then_the_user() {
    let f = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    let env = user(home.path().to_str().unwrap());
    let o = f.run_env(
        &env,
        true,
        &["config", "set", "author", "User <u@x>", "--user"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let user_file = home.path().join(".config/memoir/config.toml");
    assert_eq!(o.json()["path"], user_file.to_str().unwrap());
    assert_eq!(
        fs::metadata(&user_file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let write = |n: &str, extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["remember", n, "-p", n];
        args.extend_from_slice(extra);
        let o = f.run_env(env, true, &args);
        assert_eq!(o.code, 0, "{}", o.stderr);
    };
    write("a.one", &[], &env);
    assert_eq!(last_author(&f, &env), "User <u@x>");

    f.ok(&["config", "set", "author", "Store <s@x>"]);
    assert!(fs::read_to_string(f.store.join("config.toml"))
        .unwrap()
        .contains("author = \"Store <s@x>\""));
    write("a.two", &[], &env);
    assert_eq!(last_author(&f, &env), "Store <s@x>");

    let mut with_env = env.clone();
    with_env.push(("MEMOIR_AUTHOR", "Env <e@x>"));
    write("a.three", &[], &with_env);
    assert_eq!(last_author(&f, &env), "Env <e@x>");
    write("a.four", &["--author", "Flag <f@x>"], &with_env);
    assert_eq!(last_author(&f, &env), "Flag <f@x>");

    // `config get` and `list` say where each value comes from.
    let o = f.run_env(&with_env, true, &["config", "get", "author"]);
    let v = o.json();
    assert_eq!(
        (v["value"].as_str(), v["origin"].as_str()),
        (Some("Env <e@x>"), Some("env:MEMOIR_AUTHOR"))
    );
    let o = f.run_env(&env, false, &["config", "list"]);
    let store_file = f.store.join("config.toml");
    assert_eq!(
        o.stdout,
        format!("store:{}\tauthor=Store <s@x>\n", store_file.display())
    );
    let o = f.run_env(&env, false, &["config", "list", "--user"]);
    assert_eq!(
        o.stdout,
        format!("user:{}\tauthor=User <u@x>\n", user_file.display())
    );

    // Unset in the store: the user's value is back.
    f.ok(&["config", "unset", "author"]);
    let o = f.run_env(&env, false, &["config", "get", "author"]);
    assert_eq!(o.stdout, "User <u@x>\n");
}

#[test]
fn the_model_and_the_lock_wait_come_from_the_files() {
    let f = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    let env = user(home.path().to_str().unwrap());
    for (k, v) in [
        ("llm.provider", "command"),
        ("llm.command", "cat"),
        ("llm.model", "user-model"),
    ] {
        let o = f.run_env(&env, true, &["config", "set", k, v, "--user"]);
        assert_eq!(o.code, 0, "{}", o.stderr);
    }
    f.ok(&["config", "set", "llm.model", "store-model"]);
    let o = f.run_env(&env, true, &["status"]);
    let llm = &o.json()["llm"];
    assert_eq!(
        (llm["provider"].as_str(), llm["model"].as_str()),
        (Some("command"), Some("store-model"))
    );

    // A malformed lock wait in a file is an error naming the file and the setting.
    fs::write(f.store.join("config.toml"), "lock_timeout = -2\n").unwrap();
    let msg = assert_error(&f.run_env(&env, true, &["get", "a.b"]), 1);
    assert!(
        msg.starts_with("lock_timeout = \"-2\": not a number of seconds (in "),
        "{msg}"
    );
    assert!(msg.contains("config.toml"), "{msg}");
}

#[test]
fn secrets_stay_out_of_stores_and_out_of_files_others_can_read() {
    let f = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    let env = user(home.path().to_str().unwrap());
    let msg = assert_error(
        &f.run_env(&env, true, &["config", "set", "openai.api_key", "sk-test"]),
        1,
    );
    assert!(msg.contains("never kept in a store's settings"), "{msg}");
    assert!(!f.store.join("config.toml").exists());

    let o = f.run_env(
        &env,
        true,
        &["config", "set", "openai.api_key", "sk-test", "--user"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["value"], "<secret>");
    let o = f.run_env(&env, false, &["config", "list"]);
    assert!(
        o.stdout.contains("openai.api_key=<secret>") && !o.stdout.contains("sk-test"),
        "{}",
        o.stdout
    );
    let o = f.run_env(&env, true, &["status"]);
    assert_eq!(o.json()["llm"]["provider"], "openai");

    // Readable by others: refused, with the fix.
    let user_file = home.path().join(".config/memoir/config.toml");
    fs::set_permissions(&user_file, fs::Permissions::from_mode(0o644)).unwrap();
    let msg = assert_error(&f.run_env(&env, true, &["status"]), 1);
    assert!(
        msg.ends_with(&format!("run: chmod 600 {}", user_file.display())),
        "{msg}"
    );

    // A secret put in a store's file by hand is refused, and no command uses it.
    fs::set_permissions(&user_file, fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(
        f.store.join("config.toml"),
        "[anthropic]\napi_key = \"sk-ant\"\n",
    )
    .unwrap();
    let msg = assert_error(&f.run_env(&env, true, &["get", "a"]), 1);
    assert!(msg.contains("anthropic.api_key is a secret"), "{msg}");
}

#[test]
fn mistakes_get_clear_errors_and_a_broken_file_can_be_mended() {
    let f = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    let env = user(home.path().to_str().unwrap());
    let msg = assert_error(
        &f.run_env(&env, true, &["config", "set", "llm.modle", "x"]),
        1,
    );
    assert!(msg.contains("did you mean \"llm.model\"?"), "{msg}");
    let msg = assert_error(
        &f.run_env(&env, true, &["config", "set", "merge_policy", "bogus"]),
        1,
    );
    assert!(msg.starts_with("merge_policy = \"bogus\""), "{msg}");
    let msg = assert_error(&f.run_env(&env, true, &["config", "get", "llm.model"]), 2);
    assert!(msg.contains("is not set"), "{msg}");

    // A file that does not parse stops every command with its line, but `config` still
    // works on the other file, and the broken one can be rewritten by hand.
    fs::write(f.store.join("config.toml"), "author = \"A\"\n[llm\n").unwrap();
    let msg = assert_error(&f.run_env(&env, true, &["status"]), 1);
    assert!(msg.contains("config.toml: line 2:"), "{msg}");
    let o = f.run_env(&env, true, &["config", "set", "llm.model", "m", "--user"]);
    assert_eq!(o.code, 0, "{}", o.stderr);

    // Outside a store there is no store file to write, and a config.toml there is not read.
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("config.toml"), "not toml [").unwrap();
    let d = dir.path().to_str().unwrap();
    let mut args = env.clone();
    args.push(("MEMOIR_STORE", d));
    let o = cmd(&args, &["--json", "config", "set", "author", "A"], None);
    let msg = assert_error(&o, 3);
    assert!(msg.contains("use --user"), "{msg}");
    let o = cmd(&args, &["--json", "status"], None);
    assert_eq!(o.code, 3, "{}", o.stdout);
}
