//! What a new user trips over gets a hint: the nearest key, branch or command, and why a
//! revision names nothing.

use super::{assert_error, cmd, Fixture};

#[test]
fn typos_get_the_nearest_name_and_revisions_say_why() {
    let f = Fixture::new();
    f.ok(&[
        "remember",
        "pytest with fixtures",
        "-p",
        "preferences.testing",
    ]);
    f.ok(&["remember", "tabs", "-p", "preferences.style"]);
    f.ok(&["branch", "side"]);

    // A missing key's failure keeps `items` (COMPAT), so its error is read directly.
    let get_error = |key: &str| {
        let o = f.run(true, &["get", key]);
        assert_eq!(o.code, 2, "{}", o.stdout);
        o.json()["error"].as_str().unwrap().to_string()
    };
    let msg = get_error("preferences.tesing");
    assert!(
        msg.ends_with("did you mean 'default:preferences.testing'?"),
        "{msg}"
    );
    let msg = get_error("nothing.like.it");
    assert!(!msg.contains("did you mean"), "{msg}");

    let msg = assert_error(&f.run(true, &["checkout", "sied"]), 2);
    assert_eq!(msg, "unknown revision 'sied': did you mean 'side'?");
    let msg = assert_error(
        &f.run(true, &["get", "preferences.style", "--branch", "maim"]),
        2,
    );
    assert!(msg.ends_with("did you mean 'main'?"), "{msg}");
    let msg = assert_error(&f.run(true, &["branch", "-d", "sidee"]), 2);
    assert!(msg.ends_with("did you mean 'side'?"), "{msg}");

    let msg = assert_error(&f.run(true, &["diff", "HEAD~50"]), 2);
    assert_eq!(
        msg,
        "unknown revision 'HEAD~50': the history has 3 commits (following first parents)"
    );
    let msg = assert_error(
        &f.run(true, &["get", "preferences.style", "--at", "HEAD^2"]),
        2,
    );
    assert!(msg.ends_with("has 1 parent"), "{msg}");
    let msg = assert_error(
        &f.run(
            true,
            &["get", "preferences.style", "--at", "HEAD@{2001-01-01}"],
        ),
        2,
    );
    assert!(
        msg.contains("the oldest commit there is from 2026-01-01"),
        "{msg}"
    );

    // Every command that limits takes --limit (log keeps git's -n/--max-count).
    assert_eq!(f.ok(&["log", "--limit", "1"])["count"], 1);
    assert_eq!(f.ok(&["log", "-n", "2"])["count"], 2);

    // Commands memoir names otherwise.
    for (word, meant) in [("init", "new"), ("rm", "forget"), ("ls", "summarize")] {
        let o = cmd(&[], &[word], None);
        assert_eq!(o.code, 2);
        assert!(
            o.stderr
                .contains(&format!("a similar subcommand exists: '{meant}'")),
            "{word}: {}",
            o.stderr
        );
    }

    // Outside a store: how to make one.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let o = cmd(&[], &["-s", missing.to_str().unwrap(), "status"], None);
    assert_eq!(o.code, 3);
    assert!(o.stderr.contains("`memoir new "), "{}", o.stderr);
    let o = cmd(&[], &["-s", dir.path().to_str().unwrap(), "status"], None);
    assert_eq!(o.code, 3);
    assert!(
        o.stderr.contains("`memoir new PATH` makes one"),
        "{}",
        o.stderr
    );
}
