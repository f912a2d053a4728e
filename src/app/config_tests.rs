use super::*;

fn write(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    path
}

#[test]
fn a_missing_file_is_empty_and_set_then_save_then_read_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("config.toml");
    let mut f = ConfigFile::read(&path, Scope::User).unwrap();
    assert_eq!(f.get("llm.model").unwrap(), None);
    f.set("llm.model", "qwen2.5-7b").unwrap();
    f.set("lock_timeout", "2.5").unwrap();
    f.set("facet_max_entries", "none").unwrap();
    f.set("openai.api_key", "sk-test").unwrap();
    f.save().unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains("lock_timeout = 2.5"), "{text}");
    assert!(text.contains("[llm]\nmodel = \"qwen2.5-7b\""), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let mut back = ConfigFile::read(&path, Scope::User).unwrap();
    assert_eq!(
        back.get("llm.model").unwrap().as_deref(),
        Some("qwen2.5-7b")
    );
    assert_eq!(back.get("lock_timeout").unwrap().as_deref(), Some("2.5"));
    assert!(back.unset("llm.model").unwrap());
    assert!(!back.unset("llm.model").unwrap());
    back.save().unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("[llm]"), "an emptied table goes: {text}");
}

#[test]
fn edits_keep_the_comments_and_the_order_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = "# mine\nauthor = \"Ada\"  # me\n\n[llm]\n# the local one\nmodel = \"a\"\n";
    let path = write(dir.path(), "config.toml", text, 0o644);
    let mut f = ConfigFile::read(&path, Scope::Store).unwrap();
    f.set("llm.model", "b").unwrap();
    f.save().unwrap();
    let after = fs::read_to_string(&path).unwrap();
    assert!(
        after.starts_with("# mine\nauthor = \"Ada\"  # me\n"),
        "{after}"
    );
    assert!(after.contains("# the local one\nmodel = \"b\""), "{after}");
}

#[test]
fn bad_values_unknown_names_and_broken_files_are_refused_with_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.toml", "lock_timeout = \"soon\"\n", 0o644);
    let e = ConfigFile::read(&path, Scope::User).unwrap_err();
    assert!(
        matches!(&e, ConfigError::BadValue { key, path: Some(p), .. } if key == "lock_timeout" && p == &path),
        "{e}"
    );
    let path = write(
        dir.path(),
        "b.toml",
        "author = \"A\"\n[llm\nmodel = 1\n",
        0o644,
    );
    let e = ConfigFile::read(&path, Scope::User).unwrap_err();
    assert!(matches!(e, ConfigError::Parse { line: 2, .. }), "{e}");
    let path = write(dir.path(), "c.toml", "llm = 3\n", 0o644);
    assert!(ConfigFile::read(&path, Scope::User).is_err());

    let mut f = ConfigFile::read(&dir.path().join("none.toml"), Scope::User).unwrap();
    let e = f.set("llm.modle", "x").unwrap_err();
    assert!(
        matches!(&e, ConfigError::UnknownKey { hint: Some(h), .. } if h == "llm.model"),
        "{e}"
    );
    for (key, value) in [
        ("merge_policy", "bogus"),
        ("llm.provider", "nobody"),
        ("llm.base_url", "localhost:8080"),
        ("llm.timeout", "0"),
        ("facet_max_entries", "-3"),
        ("author", "  "),
    ] {
        assert!(
            matches!(f.set(key, value), Err(ConfigError::BadValue { .. })),
            "{key} = {value}"
        );
    }
}

#[test]
fn a_newer_setting_is_kept_and_listed_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "config.toml",
        "colour = true\n[rerank]\nmodel = \"x\"\n",
        0o644,
    );
    let mut f = ConfigFile::read(&path, Scope::User).unwrap();
    assert_eq!(f.unknown(), ["colour", "rerank.model"]);
    f.set("author", "Ada").unwrap();
    f.save().unwrap();
    assert!(fs::read_to_string(&path)
        .unwrap()
        .contains("[rerank]\nmodel = \"x\""));
}

#[test]
fn secrets_never_live_in_a_store_and_only_in_a_private_user_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ConfigFile::read(&dir.path().join("s.toml"), Scope::Store).unwrap();
    assert!(matches!(
        store.set("anthropic.api_key", "sk-ant"),
        Err(ConfigError::SecretInStore { .. })
    ));
    let path = write(dir.path(), "s2.toml", "[openai]\napi_key = \"sk\"\n", 0o600);
    assert!(matches!(
        ConfigFile::read(&path, Scope::Store),
        Err(ConfigError::SecretInStore { .. })
    ));
    #[cfg(unix)]
    {
        let path = write(dir.path(), "u.toml", "[openai]\napi_key = \"sk\"\n", 0o644);
        let e = ConfigFile::read(&path, Scope::User).unwrap_err();
        assert!(
            matches!(e, ConfigError::SecretReadable { mode: 0o644, .. }),
            "{e}"
        );
        let path = write(dir.path(), "u2.toml", "[openai]\napi_key = \"sk\"\n", 0o600);
        let f = ConfigFile::read(&path, Scope::User).unwrap();
        assert_eq!(f.get("openai.api_key").unwrap().as_deref(), Some("sk"));
    }
}

#[test]
fn the_environment_wins_then_the_store_then_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let store = write(
        dir.path(),
        "store.toml",
        "[llm]\nmodel = \"store-model\"\n",
        0o644,
    );
    let user = write(
        dir.path(),
        "user.toml",
        "author = \"Ada\"\n[llm]\nmodel = \"user-model\"\nprovider = \"command\"\ncommand = \"cat\"\n",
        0o600,
    );
    let layers = Layers {
        store: Some(ConfigFile::read(&store, Scope::Store).unwrap()),
        user: Some(ConfigFile::read(&user, Scope::User).unwrap()),
    };
    let env = |name: &str| match name {
        "MEMOIR_AUTHOR" => Some("Env Person".to_string()),
        "MEMOIR_LLM_COMMAND" => Some(String::new()),
        _ => None,
    };
    let look = layers.lookup(env);
    assert_eq!(look("MEMOIR_AUTHOR").as_deref(), Some("Env Person"));
    assert_eq!(look("MEMOIR_LLM_MODEL").as_deref(), Some("store-model"));
    // An empty variable counts as unset, as everywhere.
    assert_eq!(look("MEMOIR_LLM_COMMAND").as_deref(), Some("cat"));
    assert_eq!(look("MEMOIR_NOW"), None);
    let model = setting_named("llm.model").unwrap();
    assert_eq!(
        layers.resolve(model, env),
        Some(("store-model".into(), Origin::File(Scope::Store, store)))
    );
    let options = crate::app::Options::from_env_lookup(layers.lookup(env)).unwrap();
    let llm = options.llm.expect("the files configure a model");
    assert_eq!(llm.model, "store-model");
    assert_eq!(llm.provider_name(), "command");
}
