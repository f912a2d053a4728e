//! A damaged remote, and pushes killed part way.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use super::{content, ok, remember, run, Place};
use crate::common::{memoir, new_store};

/// A remote object whose bytes no longer hash to its id is refused by fetch (exit 5), and
/// the fetching store is left as it was: no tracking ref moves, nothing new is readable.
fn damaged_remote_is_refused(place: &Place) {
    let dir = tempfile::tempdir().unwrap();
    let env = place.env();
    let a = new_store(&dir.path().join("a"));
    remember(&a, "facts.one", "first fact");
    ok(&a, &env, &["remote", "add", "origin", &place.url()], 0);
    ok(&a, &env, &["push"], 0);
    let b = dir.path().join("b");
    ok(
        dir.path(),
        &env,
        &["clone", &place.url(), b.to_str().unwrap()],
        0,
    );
    let before = ok(&b, &[], &["remote", "list"], 0);

    remember(
        &a,
        "facts.two",
        "second fact, which will be damaged on the remote",
    );
    ok(&a, &env, &["push"], 0);
    let held: Vec<String> = std::fs::read_to_string(b.join("cache/remote-origin.packs"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let (name, mut bytes) = place
        .objects()
        .into_iter()
        .find(|(n, _)| n.ends_with(".pack") && !held.iter().any(|h| n.contains(h.as_str())))
        .expect("the second push's pack");
    let at = bytes
        .windows(6)
        .position(|w| w == b"second")
        .expect("the content is stored raw");
    bytes[at] = b'S';
    place.overwrite(&name, bytes);

    let refused = run(&b, &env, &["fetch"]);
    assert_eq!(refused.code, 5, "{} {}", refused.stdout, refused.stderr);
    let j = refused.json();
    assert_eq!(j["code"], 5);
    assert!(
        j["error"].as_str().unwrap().contains("does not hash"),
        "{j}"
    );
    assert_eq!(ok(&b, &[], &["remote", "list"], 0), before);
    assert_eq!(content(&b, "facts.two"), None);
    assert!(run(&b, &[], &["get", "--at", "origin/main", "facts.two"]).code == 2);
    assert_eq!(ok(&b, &[], &["fsck"], 0)["clean"], true);
    let pull = run(&b, &env, &["pull"]);
    assert_eq!(pull.code, 5, "pull refuses too");
    assert_eq!(content(&b, "facts.one").as_deref(), Some("first fact"));
}

#[test]
fn damaged_directory_remote_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    damaged_remote_is_refused(&Place::Dir(dir.path().join("remote")));
}

#[test]
fn damaged_s3_remote_is_refused() {
    let Some(place) = Place::s3("memoir-damaged") else {
        return;
    };
    damaged_remote_is_refused(&place);
}

/// After each kill, the remote is valid: it clones, the clone passes fsck, and its main is
/// either the old or the new commit.
fn assert_valid(place: &Place, env: &[(String, String)], allowed: &[String], round: usize) {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    let out = ok(
        dir.path(),
        env,
        &["clone", &place.url(), c.to_str().unwrap()],
        0,
    );
    let commit = out["commit"].as_str().unwrap().to_string();
    assert!(allowed.contains(&commit), "round {round}: main at {commit}");
    assert_eq!(ok(&c, &[], &["fsck"], 0)["clean"], true, "round {round}");
}

/// A push killed at random moments, then run again: the remote is valid after every kill,
/// and the last push completes the transfer, reusing what the killed ones uploaded.
#[test]
fn killed_pushes_leave_s3_valid_and_resume() {
    let Some(place) = Place::s3("memoir-killed") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let env = place.env();
    let a = new_store(&dir.path().join("a"));
    remember(&a, "seed.first", "the first pushed memory");
    ok(&a, &env, &["remote", "add", "origin", &place.url()], 0);
    let first = ok(&a, &env, &["push"], 0)["commit"]
        .as_str()
        .unwrap()
        .to_string();

    // A batch large enough that its push takes a while.
    let lines: String = (0..4000)
        .map(|i| {
            format!(
                "{{\"key\": \"bulk.k{i:05}\", \"content\": \"memory {i}: {}\"}}\n",
                "some words to make it longer ".repeat(8)
            )
        })
        .collect();
    let file = dir.path().join("bulk.jsonl");
    std::fs::write(&file, lines).unwrap();
    ok(&a, &[], &["import", file.to_str().unwrap()], 0);
    let target = ok(&a, &[], &["log", "-n", "1"], 0)["commits"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    let allowed = [first, target.clone()];

    // The scale of the kill delays: how long a whole push to S3 takes, measured once on
    // another prefix of the bucket.
    let scale = place.url().replace("/team/memory", "/scale");
    ok(&a, &env, &["remote", "add", "scale", &scale], 0);
    let started = Instant::now();
    ok(&a, &env, &["push", "scale"], 0);
    let span = started.elapsed().max(Duration::from_millis(50));
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for round in 0..6 {
        let delay = span.mul_f64(rng.gen_range(0.0..1.5));
        let mut c = memoir();
        c.arg("-s")
            .arg(&a)
            .args(["-q", "push"])
            .stdout(Stdio::null());
        for (k, v) in &env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        assert_valid(&place, &env, &allowed, round);
    }
    let done = ok(&a, &env, &["push"], 0);
    assert!(
        done["status"] == "fast_forward" || done["status"] == "up_to_date",
        "{done}"
    );
    assert_valid(&place, &env, &allowed[1..], 99);
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("c");
    ok(
        d.path(),
        &env,
        &["clone", &place.url(), c.to_str().unwrap()],
        0,
    );
    assert_eq!(
        content(&c, "bulk.k03999").map(|s| s.starts_with("memory 3999")),
        Some(true)
    );
}
