//! Content that looks like a credential, through the real binary: `remember` and `import`
//! refuse it with exit 1, naming the rule that matched and never repeating the secret, and
//! commit nothing; `--allow-secrets` stores it on purpose.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::common::{cli, memoir, new_store, Out};

/// A fake AWS access key id (the documented example).
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";

fn sk_key() -> String {
    format!("sk-proj-{}", "Ab3dEf6h".repeat(4))
}

/// `memoir -s STORE [--json] ARGS` with `stdin`, at a fixed time, with `env` added.
fn run(store: &Path, json: bool, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Out {
    let mut c = memoir();
    c.env("MEMOIR_NOW", "1767225600").envs(env.iter().copied());
    c.arg("-s").arg(store);
    if json {
        c.arg("--json");
    }
    c.args(args);
    if stdin.is_some() {
        c.stdin(Stdio::piped());
    }
    let mut child = c.spawn().expect("run memoir");
    if let Some(text) = stdin {
        let mut i = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = i.write_all(text.as_bytes());
        });
    }
    child.wait_with_output().unwrap().into()
}

/// The store's history and memories, to show that nothing changed.
fn state(store: &Path) -> (Value, Value) {
    let (code, log) = cli(store, &["log"]);
    assert_eq!(code, 0, "{log}");
    let (code, status) = cli(store, &["status"]);
    assert_eq!(code, 0, "{status}");
    (log, status)
}

/// Expects a JSON refusal (exit 1) naming `rule`, without `secret`; returns the message.
fn refused(o: &Out, rule: &str, secret: &str) -> String {
    assert_eq!(o.code, 1, "{} / {}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(v["success"], false);
    assert_eq!(v["code"], 1);
    let msg = v["error"].as_str().unwrap().to_string();
    assert!(msg.contains("credential"), "{msg}");
    assert!(msg.contains(rule), "the rule {rule} is not named: {msg}");
    assert!(
        msg.contains("--allow-secrets"),
        "the way to store it anyway is not named: {msg}"
    );
    assert!(
        !msg.contains(secret),
        "the message repeats the secret: {msg}"
    );
    assert!(!o.stdout.contains(secret) && !o.stderr.contains(secret));
    msg
}

#[test]
fn remember_refuses_credentials_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    run(
        &store,
        false,
        &["remember", "seed", "-p", "seed.key"],
        None,
        &[],
    );
    let before = state(&store);
    let sk = sk_key();
    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----";
    let cases = [
        (format!("the openai key is {sk}"), "sk_api_key", sk.clone()),
        (
            format!("deploy with {AWS}"),
            "aws_access_key",
            AWS.to_string(),
        ),
        (
            "db password=hunter2hunter2".to_string(),
            "secret_assignment",
            "hunter2hunter2".to_string(),
        ),
        (pem.to_string(), "private_key", "b3Blbn".to_string()),
    ];
    // (`--` before the content: the private key block starts with dashes.)
    for (content, rule, secret) in &cases {
        let o = run(
            &store,
            true,
            &["remember", "-p", "infra.keys", "--", content],
            None,
            &[],
        );
        refused(&o, rule, secret);
        // The same refusal in human form, on stderr only.
        let o = run(
            &store,
            false,
            &["remember", "-p", "infra.keys", "--", content],
            None,
            &[],
        );
        assert_eq!(o.code, 1);
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert!(o.stderr.contains(rule) && !o.stderr.contains(secret.as_str()));
    }
    // From stdin, under several keys, or with any policy: refused all the same.
    let content = format!("deploy with {AWS}");
    let o = run(
        &store,
        true,
        &["remember", "-", "-p", "a.b", "-p", "c.d", "--replace"],
        Some(&content),
        &[],
    );
    refused(&o, "aws_access_key", AWS);
    assert_eq!(
        state(&store),
        before,
        "a refused remember changed the store"
    );
}

#[test]
fn remember_refuses_before_asking_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    // A model that leaves a mark when it is asked anything.
    let mark = dir.path().join("asked");
    let script = dir.path().join("model.sh");
    std::fs::write(
        &script,
        format!(
            "touch '{}'\necho '{{\"paths\": [\"infra.cloud.keys\"], \"confidence\": 0.9}}'\n",
            mark.display()
        ),
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let env = [("MEMOIR_LLM_COMMAND", command.as_str())];
    let before = state(&store);
    let content = format!("the cloud key is {AWS}");
    // Without -p the model would choose the key; under llm_merge it would merge.
    let o = run(&store, true, &["remember", &content], None, &env);
    refused(&o, "aws_access_key", AWS);
    let o = run(
        &store,
        true,
        &["remember", &content, "-p", "workflow.keys"],
        None,
        &env,
    );
    refused(&o, "aws_access_key", AWS);
    assert!(!mark.exists(), "the model was shown the secret");
    assert_eq!(state(&store), before);
}

#[test]
fn remember_allow_secrets_stores_on_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let content = format!("test fixture key {AWS}");
    let o = run(
        &store,
        true,
        &[
            "remember",
            &content,
            "-p",
            "fixtures.aws",
            "--allow-secrets",
        ],
        None,
        &[],
    );
    assert_eq!(o.code, 0, "{} / {}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(v["success"], true);
    assert!(v["commit_hash"].is_string());
    let (code, got) = cli(&store, &["get", "fixtures.aws"]);
    assert_eq!(code, 0);
    assert_eq!(got["items"][0]["value"]["content"], content.as_str());
}

#[test]
fn import_refuses_credentials_and_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let before = state(&store);
    let sk = sk_key();
    let lines = format!(
        "{{\"key\": \"notes.fine\", \"content\": \"prefers pytest\"}}\n\
         {{\"key\": \"notes.key\", \"content\": \"the openai key is {sk}\"}}\n"
    );
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, &lines).unwrap();
    let o = run(&store, true, &["import", file.to_str().unwrap()], None, &[]);
    let msg = refused(&o, "sk_api_key", &sk);
    assert!(msg.starts_with("line 2:"), "{msg}");
    let o = run(&store, true, &["import", "-"], Some(&lines), &[]);
    refused(&o, "sk_api_key", &sk);
    // A credential in a superseded entry of a schema 2 record is stored all the same: refused.
    let old = serde_json::json!({
        "key": "notes.old",
        "namespace": "default",
        "entries": [
            {"content": "db password=hunter2hunter2", "confidence": 1.0, "timestamp": 1.0,
             "status": "superseded"},
            {"content": "rotated", "confidence": 1.0, "timestamp": 2.0, "status": "active"},
        ],
    })
    .to_string();
    let o = run(&store, true, &["import", "-"], Some(&old), &[]);
    refused(&o, "secret_assignment", "hunter2hunter2");
    assert_eq!(state(&store), before, "a refused import changed the store");

    // On purpose: everything is imported.
    let o = run(
        &store,
        true,
        &["import", "-", "--allow-secrets"],
        Some(&lines),
        &[],
    );
    assert_eq!(o.code, 0, "{} / {}", o.stdout, o.stderr);
    assert_eq!(o.json()["imported"], 2);
    let (code, got) = cli(&store, &["get", "notes.key"]);
    assert_eq!(code, 0);
    assert!(got["items"][0]["value"]["content"]
        .as_str()
        .unwrap()
        .contains(&sk));
}

/// Each newer rule, through `remember`: refused with exit 1, naming its rule and never the
/// secret; the near misses beside them are stored.
#[test]
fn newer_rules_refuse_and_near_misses_pass() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.\
               SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    let stripe = format!("sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc");
    // A private key's body without its header (synthetic, PKCS#8 RSA shape).
    let body = format!(
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Q2hhbmdlTWVQbGVhc2U\n{}",
        "A".repeat(64)
    );
    let cases: Vec<(String, &str, String)> = vec![
        (
            format!("aws_secret_access_key = {aws_secret}"),
            "aws_secret_key",
            aws_secret.to_string(),
        ),
        (
            "the db is postgres://app:Tr0ub4dor@db.internal/app".to_string(),
            "url_password",
            "Tr0ub4dor".to_string(),
        ),
        (format!("session token {jwt}"), "jwt", jwt.to_string()),
        (
            format!("billing uses {stripe}"),
            "stripe_key",
            stripe.clone(),
        ),
        (body.clone(), "private_key_body", body[..40].to_string()),
    ];
    let before = state(&store);
    for (content, rule, secret) in &cases {
        let o = run(
            &store,
            true,
            &["remember", "-p", "infra.keys", "--", content],
            None,
            &[],
        );
        refused(&o, rule, secret);
    }
    assert_eq!(state(&store), before);
    // Tokens in a path or a namespace: refused the same way, the key never echoed.
    let token = format!("ghp_{}", "x9".repeat(18));
    let path = format!("tokens.{token}");
    let o = run(&store, true, &["remember", "x", "-p", &path], None, &[]);
    let msg = refused(&o, "github_token", &token);
    assert!(msg.contains("key"), "{msg}");
    let ns = format!("{stripe}:a.b");
    let o = run(&store, true, &["remember", "x", "-p", &ns], None, &[]);
    refused(&o, "stripe_key", &stripe);
    let o = run(
        &store,
        true,
        &["remember", "x", "-p", "a.b", "-n", &stripe],
        None,
        &[],
    );
    refused(&o, "stripe_key", &stripe);
    assert_eq!(state(&store), before);

    for (i, ok) in [
        "connect to postgres://host/db",
        "postgres://app@db.internal:5432/app",
        "https://app:${DB_PASSWORD}@db.internal/app",
        "the password is in the vault",
        "reset the password: rotate monthly",
        "fixed in 3f2a9c1 (see 3f2a9c1e8b7d)",
        "sk_live_ keys belong in the vault",
        "a JWT begins with eyJ",
        "the aws_secret_access_key setting is read from the environment",
    ]
    .iter()
    .enumerate()
    {
        let path = format!("notes.n{i}");
        let o = run(&store, true, &["remember", ok, "-p", &path], None, &[]);
        assert_eq!(o.code, 0, "{ok}: {}", o.stdout);
    }
}
