//! Bad remote names, URLs and requests: a clear error, a documented exit code, nothing
//! changed, and no credential written to the store.

use serde_json::Value;

use super::{ok, remember, run};
use crate::common::{memoir, new_store, Out};

#[test]
fn bad_names_and_urls_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = new_store(dir.path());
    let remote = dir.path().join("remote");
    let r = remote.to_str().unwrap();
    for (args, code, says) in [
        (vec!["remote", "add", ".bad", r], 1, "invalid remote name"),
        (vec!["remote", "add", "a/b", r], 1, "invalid remote name"),
        (
            vec!["remote", "add", "x", "s3://KEY:SECRET@bucket/p"],
            1,
            "credentials",
        ),
        (
            vec!["remote", "add", "x", "https://example.org/m"],
            1,
            "unsupported scheme",
        ),
        (vec!["remote", "add", "x", "file://relative"], 1, "absolute"),
        (vec!["remote", "add", "x", "s3:///p"], 1, "no bucket"),
        (
            vec!["remote", "add", "x", a.to_str().unwrap()],
            1,
            "cannot be its own remote",
        ),
        (vec!["push"], 2, "no remote"),
        (vec!["fetch", "nowhere"], 2, "no remote named"),
        (vec!["remote", "remove", "nowhere"], 2, "no remote named"),
    ] {
        let o = run(&a, &[], &args);
        assert_eq!(o.code, code, "{args:?}: {} {}", o.stdout, o.stderr);
        let j = o.json();
        assert_eq!(j["code"], code, "{args:?}");
        assert!(j["error"].as_str().unwrap().contains(says), "{args:?}: {j}");
    }
    assert!(!a.join("remotes.json").exists(), "nothing was recorded");

    ok(&a, &[], &["remote", "add", "origin", r], 0);
    let again = run(&a, &[], &["remote", "add", "origin", "/elsewhere"]);
    assert_eq!(again.code, 1);
    let saved = std::fs::read_to_string(a.join("remotes.json")).unwrap();
    assert!(saved.contains(r) && !saved.contains("elsewhere"), "{saved}");

    // Fetching from a directory that does not exist (nothing pushed yet) is an error that
    // names it; a directory holding something else is not a remote.
    let missing = run(&a, &[], &["fetch"]);
    assert_eq!(missing.code, 1, "{}", missing.stdout);
    std::fs::create_dir_all(remote.join("packs")).unwrap();
    std::fs::write(remote.join("packs/x.pack"), b"not ours").unwrap();
    let foreign = run(&a, &[], &["push"]);
    assert_eq!(foreign.code, 1, "{}", foreign.stdout);
    assert!(foreign.json()["error"]
        .as_str()
        .unwrap()
        .contains("memoir-remote.json"));

    // A branch that does not exist, a detached HEAD, a revision naming nothing.
    std::fs::remove_dir_all(&remote).unwrap();
    let nob = run(&a, &[], &["push", "origin", "no-such-branch"]);
    assert_eq!(nob.code, 2, "{}", nob.stdout);
    let rev = run(&a, &[], &["get", "--at", "origin/main", "x.y"]);
    assert_eq!(rev.code, 2, "no tracking branch before a fetch");

    // Removing the remote drops its tracking branches.
    remember(&a, "k.v", "value");
    ok(&a, &[], &["push"], 0);
    ok(&a, &[], &["get", "--at", "origin/main", "k.v"], 0);
    ok(&a, &[], &["remote", "remove", "origin"], 0);
    assert_eq!(run(&a, &[], &["get", "--at", "origin/main", "k.v"]).code, 2);
    assert_eq!(ok(&a, &[], &["fsck"], 0)["clean"], true);
}

#[test]
fn s3_credentials_come_from_the_environment_or_a_profile_and_are_never_stored() {
    let Some(place) = super::Place::s3("memoir-creds") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = new_store(&dir.path().join("a"));
    ok(&a, &[], &["remote", "add", "origin", &place.url()], 0);
    // With a profile file only (the endpoint from the environment).
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "[team]\naws_access_key_id = testing\naws_secret_access_key = profile-secret-123\n",
    )
    .unwrap();
    let super::Place::S3 { moto, .. } = &place else {
        unreachable!()
    };
    let env = vec![
        ("HOME".to_string(), home.display().to_string()),
        ("AWS_PROFILE".to_string(), "team".to_string()),
        ("AWS_ENDPOINT_URL".to_string(), moto.endpoint.clone()),
    ];
    let pushed = ok(&a, &env, &["push"], 0);
    assert_eq!(pushed["status"], "created");
    // A key id without its secret is refused before any request.
    let half = vec![
        ("AWS_ACCESS_KEY_ID".to_string(), "testing".to_string()),
        ("AWS_ENDPOINT_URL".to_string(), moto.endpoint.clone()),
    ];
    let o = run(&a, &half, &["fetch"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.json()["error"]
        .as_str()
        .unwrap()
        .contains("secret access key"));
    // A plain-http endpoint that is not loopback is refused unless allowed.
    let remote_http = vec![
        ("AWS_ACCESS_KEY_ID".to_string(), "k".to_string()),
        ("AWS_SECRET_ACCESS_KEY".to_string(), "s".to_string()),
        (
            "AWS_ENDPOINT_URL".to_string(),
            "http://10.9.9.9:9000".to_string(),
        ),
    ];
    let o = run(&a, &remote_http, &["fetch"]);
    assert_eq!(o.code, 1);
    assert!(o.json()["error"]
        .as_str()
        .unwrap()
        .contains("AWS_ALLOW_HTTP"));
    // No file of the store holds a secret.
    for entry in crate::common::files_below(&a) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !bytes.windows(18).any(|w| w == b"profile-secret-123"),
            "{} holds the secret",
            entry.display()
        );
    }
}

#[test]
fn a_relative_remote_path_is_stored_absolute_and_a_push_into_a_store_is_logged_now() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let a = new_store(&root.join("a"));
    remember(&a, "k.v", "value");
    // Added from inside the store, through `..` and `.`, before the directory exists.
    let add = |name: &str, path: &str| -> Value {
        let o: Out = memoir()
            .current_dir(&a)
            .args(["--json", "remote", "add", name, path])
            .output()
            .unwrap()
            .into();
        assert_eq!(o.code, 0, "{} {}", o.stdout, o.stderr);
        o.json()
    };
    let added = add("origin", "../x/../remote/.");
    let up = a.parent().unwrap();
    let want = up.join("remote").display().to_string();
    assert_eq!(added["url"], want.as_str());
    let saved = std::fs::read_to_string(a.join("remotes.json")).unwrap();
    assert!(saved.contains(&want) && !saved.contains(".."), "{saved}");
    ok(&a, &[], &["push"], 0);
    let fetched = ok(&a, &[], &["fetch"], 0);
    assert_eq!(fetched["url"], want.as_str());

    // A remote that is not there is named in a message without empty words.
    add("gone", "../gone");
    let o = run(&a, &[], &["fetch", "gone"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    let error = o.json()["error"].as_str().unwrap().to_string();
    assert!(error.contains(&format!("{}/gone", up.display())), "{error}");
    assert!(
        error.contains("no such directory") && !error.contains("  "),
        "{error}"
    );

    // A push into another store logs the move there at the pusher's time.
    let b = new_store(&root.join("b"));
    ok(&a, &[], &["remote", "add", "st", b.to_str().unwrap()], 0);
    let now = vec![("MEMOIR_NOW".to_string(), "1767225600".to_string())];
    ok(&a, &now, &["push", "st", "--force"], 0);
    let log = ok(&b, &[], &["reflog"], 0);
    let entry = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["message"].as_str().unwrap().starts_with("push: from"))
        .cloned()
        .expect("the push is logged");
    assert_eq!(entry["timestamp"], 1767225600, "{entry}");
}
