//! Golden output of the `memoir` binary: for every command, in JSON and human form, the exact
//! exit code, stdout and stderr, compared with one file per case under `tests/golden/cli/`.
//!
//! The cases run in order, sharing a few stores made in one temporary directory, each with a
//! fixed environment: the variables are cleared, then `PATH` (the temporary `bin/` holding the
//! scripted models, then `/usr/bin:/bin`), `HOME` (a directory in the temporary one),
//! `MEMOIR_NOW` (a fixed time, moved on by [`Golden::later`] when ids must differ),
//! `MEMOIR_AUTHOR` and `NO_COLOR=1` are set, plus what a case adds (`MEMOIR_LLM_COMMAND`
//! naming a scripted model, `MEMOIR_MERGE_POLICY`, ...). A scripted model is a shell script
//! that reads the prompt and prints a fixed reply.
//!
//! The one normalisation: the temporary directory's absolute path (in `new`, `status`, `-v`,
//! and error messages naming a path) is replaced by `<TMP>` in the output; it differs on every
//! run and says nothing about the command. Arguments may name `<TMP>` too.
//!
//! `MEMOIR_BLESS=1 cargo test --test golden` writes the files from the current binary (and
//! removes the files of cases that no longer exist); without it, every mismatch is reported
//! with a diff naming its case.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;

use common::{Out, AUTHOR};

/// 2026-01-01T00:00:00Z, the time of the first case.
const BASE: u64 = 1_767_225_600;

/// Where the temporary directory's path is in the expectation files.
const TMP: &str = "<TMP>";

/// Every subcommand but `mcp`, whose `--help` is pinned here.
const SUBCOMMANDS: [&str; 21] = [
    "new",
    "status",
    "remember",
    "get",
    "forget",
    "summarize",
    "branch",
    "checkout",
    "export",
    "import",
    "search",
    "recall",
    "merge",
    "fsck",
    "gc",
    "log",
    "blame",
    "diff",
    "time-travel",
    "proof",
    "verify",
];

/// The cases run so far, their expectation files, and the mismatches found.
struct Golden {
    tmp: tempfile::TempDir,
    /// The temporary directory's paths as the binary may print them (canonical first).
    roots: Vec<String>,
    /// `tests/golden/cli`.
    dir: PathBuf,
    bless: bool,
    now: u64,
    /// The store (`-s`) of the cases run with [`Golden::run`], as `<TMP>/name`.
    store: Option<String>,
    names: BTreeSet<String>,
    failures: Vec<String>,
}

impl Golden {
    fn new() -> Golden {
        let tmp = tempfile::tempdir().unwrap();
        let raw = tmp.path().display().to_string();
        let canonical = tmp.path().canonicalize().unwrap().display().to_string();
        let mut roots = vec![canonical];
        if roots[0] != raw {
            roots.push(raw);
        }
        std::fs::create_dir(tmp.path().join("bin")).unwrap();
        std::fs::create_dir(tmp.path().join("home")).unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cli");
        let bless = std::env::var("MEMOIR_BLESS").is_ok_and(|v| v == "1");
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
        }
        Golden {
            tmp,
            roots,
            dir,
            bless,
            now: BASE,
            store: None,
            names: BTreeSet::new(),
            failures: Vec::new(),
        }
    }

    /// The real path of `<TMP>/rel`.
    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// `text` with `<TMP>` standing for the temporary directory.
    fn expand(&self, text: &str) -> String {
        text.replace(TMP, &self.roots[0])
    }

    /// `text` with the temporary directory's paths replaced by `<TMP>`.
    fn normalise(&self, text: &str) -> String {
        self.roots
            .iter()
            .fold(text.to_string(), |t, root| t.replace(root.as_str(), TMP))
    }

    /// A scripted model `bin/NAME`: reads the prompt, prints `reply`.
    fn model(&self, name: &str, reply: &str) {
        self.script(
            name,
            &format!("#!/bin/sh\ncat > /dev/null\ncat <<'REPLY'\n{reply}\nREPLY\n"),
        );
    }

    /// A scripted model `bin/NAME` that fails: reads the prompt, complains, exits 3.
    fn failing_model(&self, name: &str) {
        self.script(
            name,
            "#!/bin/sh\ncat > /dev/null\necho 'model is down' >&2\nexit 3\n",
        );
    }

    fn script(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path("bin").join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Moves the clock on by a minute: the next writes get new times and ids.
    fn later(&mut self) {
        self.now += 60;
    }

    /// Runs the following [`Golden::run`] cases on `<TMP>/name`.
    fn on(&mut self, name: &str) {
        self.store = Some(format!("{TMP}/{name}"));
    }

    /// `memoir -s STORE args...`
    fn run(&mut self, name: &str, args: &[&str]) -> Out {
        self.case(name, args, &[], None)
    }

    /// `memoir -s STORE args...` with `env` added.
    fn run_env(&mut self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
        self.case(name, args, env, None)
    }

    /// `memoir -s STORE args...` reading `stdin`.
    fn run_stdin(&mut self, name: &str, args: &[&str], stdin: &str) -> Out {
        self.case(name, args, &[], Some(stdin))
    }

    /// `NAME-json` (`memoir -s STORE --json args...`) and `NAME-human` (without `--json`).
    fn both(&mut self, name: &str, args: &[&str]) {
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        self.run(&format!("{name}-json"), &json);
        self.run(&format!("{name}-human"), args);
    }

    /// `memoir args...` (no store option).
    fn bare(&mut self, name: &str, args: &[&str]) -> Out {
        let store = self.store.take();
        let out = self.case(name, args, &[], None);
        self.store = store;
        out
    }

    /// `memoir args...` (no store option) with `env` added.
    fn bare_env(&mut self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
        let store = self.store.take();
        let out = self.case(name, args, env, None);
        self.store = store;
        out
    }

    /// Runs one case and compares (or writes) its expectation file. Returns the normalised
    /// output.
    fn case(
        &mut self,
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Out {
        assert!(
            self.names.insert(name.to_string()),
            "two cases are named {name}"
        );
        let mut argv: Vec<String> = Vec::new();
        if let Some(s) = &self.store {
            argv.push("-s".into());
            argv.push(s.clone());
        }
        argv.extend(args.iter().map(|a| a.to_string()));

        let root = &self.roots[0];
        let mut c = Command::new(env!("CARGO_BIN_EXE_memoir"));
        c.env_clear()
            .env("PATH", format!("{root}/bin:/usr/bin:/bin"))
            .env("HOME", format!("{root}/home"))
            .env("MEMOIR_NOW", self.now.to_string())
            .env("MEMOIR_AUTHOR", AUTHOR)
            .env("NO_COLOR", "1")
            .current_dir(root)
            .args(argv.iter().map(|a| self.expand(a)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        for (k, v) in env {
            c.env(k, self.expand(v));
        }
        let mut child = c.spawn().expect("run memoir");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
        let raw = Out::from(child.wait_with_output().unwrap());
        let out = Out {
            code: raw.code,
            stdout: self.normalise(&raw.stdout),
            stderr: self.normalise(&raw.stderr),
        };

        let mut text = format!("$ memoir{}\n", shell_words(&argv));
        for (k, v) in env {
            text.push_str(&format!("env: {k}={v}\n"));
        }
        if let Some(s) = stdin {
            text.push_str(&format!("stdin: {s:?}\n"));
        }
        text.push_str(&format!("exit: {}\n--- stdout\n", out.code));
        push_stream(&mut text, &out.stdout);
        text.push_str("--- stderr\n");
        push_stream(&mut text, &out.stderr);

        let file = self.dir.join(format!("{name}.txt"));
        if self.bless {
            std::fs::write(&file, &text).unwrap();
        } else {
            match std::fs::read_to_string(&file) {
                Ok(expected) if expected == text => {}
                Ok(expected) => {
                    let diff = similar::TextDiff::from_lines(&expected, &text)
                        .unified_diff()
                        .header(&format!("tests/golden/cli/{name}.txt"), "actual")
                        .to_string();
                    self.failures
                        .push(format!("case {name}: the output changed\n{diff}"));
                }
                Err(e) => self.failures.push(format!(
                    "case {name}: no expectation file {} ({e}); MEMOIR_BLESS=1 writes it",
                    file.display()
                )),
            }
        }
        out
    }

    /// Checks that every expectation file belongs to a case (blessing removes the others),
    /// then fails with every mismatch.
    fn finish(self) {
        let mut failures = self.failures;
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let path = entry.unwrap().path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.extension().is_some_and(|e| e == "txt") && !self.names.contains(stem) {
                if self.bless {
                    std::fs::remove_file(&path).unwrap();
                } else {
                    failures.push(format!(
                        "{}: no case has this name; MEMOIR_BLESS=1 removes it",
                        path.display()
                    ));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases differ from tests/golden/cli (MEMOIR_BLESS=1 rewrites them):\n\n{}",
            failures.len(),
            self.names.len(),
            failures.join("\n")
        );
    }
}

/// The arguments as a shell would need them, each after a space, for the expectation
/// file's first line.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+<>%^~".contains(c));
            if plain {
                format!(" {a}")
            } else {
                format!(" '{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect()
}

/// A stream, exactly: a missing final newline is marked as `diff` does.
fn push_stream(text: &mut String, stream: &str) {
    text.push_str(stream);
    if !stream.is_empty() && !stream.ends_with('\n') {
        text.push_str("\n\\ no newline at end\n");
    }
}

/// A string member of a JSON output.
fn field(out: &Out, name: &str) -> String {
    let v: Value = out.json();
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} in {v}"))
        .to_string()
}

#[test]
fn every_command_prints_what_it_printed() {
    let mut g = Golden::new();
    g.model(
        "model-classify",
        r#"{"paths": ["tools.testing.hypothesis"], "confidence": 0.82, "reasoning": "A testing tool preference."}"#,
    );
    g.model("model-classify-garbage", "I am not sure where this goes.");
    g.model(
        "model-merge",
        "Deploy with make release, run the smoke tests, then tag the release.",
    );
    g.model(
        "model-pick",
        "default:infra\ndefault:ops\ndefault:infra.database\ndefault:ops.release",
    );
    g.failing_model("model-down");

    no_store(&mut g);
    writes(&mut g);
    reads(&mut g);
    history(&mut g);
    proofs_and_transfer(&mut g);
    removal(&mut g);
    branches_and_merges(&mut g);
    corruption(&mut g);
    g.finish();
}

/// Help, version, usage errors, paths that are not stores, and `new`.
fn no_store(g: &mut Golden) {
    g.bare("version", &["--version"]);
    g.bare("help", &["--help"]);
    for sub in SUBCOMMANDS {
        g.bare(&format!("help-{sub}"), &[sub, "--help"]);
    }
    g.bare("usage-no-command", &[]);
    g.bare("usage-unknown-command-human", &["frobnicate"]);
    g.bare("usage-unknown-command-json", &["--json", "frobnicate"]);
    g.bare(
        "usage-unknown-option-json",
        &["--json", "get", "a", "--frob"],
    );
    g.bare("usage-missing-argument-json", &["--json", "get"]);
    g.bare("usage-missing-argument-human", &["remember"]);
    g.bare(
        "usage-bad-value-human",
        &["status", "--lock-timeout", "soon"],
    );
    g.bare_env(
        "env-bad-now-json",
        &["--json", "-s", "<TMP>/nowhere", "status"],
        &[("MEMOIR_NOW", "soon")],
    );

    // The current directory (the temporary one) is not a store.
    g.bare("not-a-store-cwd-human", &["status"]);
    g.bare("not-a-store-cwd-json", &["--json", "log"]);
    g.bare(
        "not-a-store-json",
        &["-s", "<TMP>/nowhere", "--json", "get", "a.b"],
    );
    g.bare(
        "not-a-store-human",
        &["-s", "<TMP>/nowhere", "remember", "x", "-p", "a.b"],
    );
    g.bare(
        "not-a-store-classifier-json",
        &["-s", "<TMP>/nowhere", "--json", "remember", "x"],
    );

    g.bare("new-json", &["--json", "new", "<TMP>/a"]);
    g.bare("new-human", &["new", "<TMP>/m"]);
    g.bare("new-quiet-human", &["-q", "new", "<TMP>/c"]);
    g.bare("new-existing-store-json", &["--json", "new", "<TMP>/a"]);
    g.bare("new-existing-store-human", &["new", "<TMP>/a"]);
    std::fs::create_dir(g.path("full")).unwrap();
    std::fs::write(g.path("full/notes.txt"), "hi").unwrap();
    g.bare("new-non-empty-dir-json", &["--json", "new", "<TMP>/full"]);
    g.bare("new-non-empty-dir-human", &["new", "<TMP>/full"]);
    // A leading `~/` is taken literally: this store is `<TMP>/~/mem`.
    g.bare("new-tilde-json", &["--json", "new", "~/mem"]);
    g.bare("status-tilde-json", &["-s", "~/mem", "--json", "status"]);
    g.bare_env(
        "status-env-store-json",
        &["status"],
        &[("MEMOIR_STORE", "<TMP>/c"), ("MEMOIR_JSON", "1")],
    );
}

/// `remember` in every form, on store `a`.
fn writes(g: &mut Golden) {
    g.on("a");
    g.both("status-empty", &["status"]);
    g.run("status-options-after-json", &["status", "--json"]);
    g.run("status-verbose-human", &["-v", "status"]);

    g.later();
    g.run(
        "remember-one-json",
        &[
            "--json",
            "remember",
            "Prefers pytest with property tests",
            "-p",
            "preferences.coding.testing",
        ],
    );
    g.later();
    g.run(
        "remember-one-human",
        &[
            "remember",
            "Production runs PostgreSQL 16",
            "-p",
            "infra.database",
            "--source",
            "standup",
        ],
    );
    g.later();
    g.run(
        "remember-several-json",
        &[
            "--json",
            "remember",
            "Deploys are blue-green",
            "-p",
            "infra.deploy",
            "-p",
            "ops.release",
            "-p",
            "infra.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-several-human",
        &[
            "remember",
            "Releases ship on Tuesdays",
            "-p",
            "ops.schedule",
            "-p",
            "default:calendar.release",
        ],
    );
    g.later();
    g.run(
        "remember-ns-path-human",
        &["remember", "Standup is at 9:30", "-p", "work:notes.standup"],
    );
    g.later();
    g.run(
        "remember-namespace-json",
        &[
            "--json",
            "remember",
            "Retro every other Friday",
            "-n",
            "work",
            "-p",
            "notes.retro",
            "--actor",
            "agent-7",
        ],
    );
    g.later();
    g.run(
        "remember-confidence-json",
        &[
            "--json",
            "remember",
            "Probably uses Python 3.12",
            "-p",
            "infra.python",
            "-c",
            "0.6",
        ],
    );
    g.later();
    g.run_stdin(
        "remember-stdin-human",
        &["remember", "-", "-p", "notes.multiline"],
        "Line one\nLine two\n\nLine four\n",
    );
    g.later();
    g.run(
        "remember-quiet-human",
        &["-q", "remember", "Uses tabs", "-p", "style.indent"],
    );
    g.later();
    g.run(
        "remember-author-json",
        &[
            "--json",
            "remember",
            "Prefers dark mode",
            "-p",
            "ui.theme",
            "--author",
            "Other <o@example.org>",
        ],
    );

    // Refused: nothing written.
    g.run(
        "remember-mixed-namespaces-json",
        &[
            "--json", "remember", "x", "-p", "work:a.b", "-p", "team:c.d",
        ],
    );
    g.run(
        "remember-prefix-disagrees-human",
        &["remember", "x", "-p", "work:a.b", "-n", "team"],
    );
    g.run(
        "remember-empty-side-json",
        &["--json", "remember", "x", "-p", ":a.b"],
    );
    g.run(
        "remember-invalid-path-json",
        &["--json", "remember", "x", "-p", "a..b"],
    );
    g.run(
        "remember-invalid-path-human",
        &["remember", "x", "-p", "has space"],
    );
    g.run(
        "remember-invalid-namespace-json",
        &["--json", "remember", "x", "-p", "a.b", "-n", "bad ns"],
    );
    g.run(
        "remember-replace-and-policy-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--replace",
            "--merge-policy",
            "append",
        ],
    );
    g.run(
        "remember-unknown-policy-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--merge-policy",
            "sometimes",
        ],
    );
    g.run(
        "remember-bad-confidence-json",
        &["--json", "remember", "x", "-p", "a.b", "-c", "1.5"],
    );
    g.run_env(
        "remember-bad-policy-env-json",
        &["--json", "remember", "x", "-p", "a.b"],
        &[("MEMOIR_MERGE_POLICY", "sometimes")],
    );

    // Merge policies on keys that exist.
    g.later();
    g.run(
        "remember-append-default-json",
        &[
            "--json",
            "remember",
            "Flaky tests come from shared fixtures",
            "-p",
            "experience.testing",
        ],
    );
    g.later();
    g.run(
        "remember-append-default-human",
        &[
            "remember",
            "Retry network tests once",
            "-p",
            "experience.testing",
        ],
    );
    g.later();
    g.run(
        "remember-append-explicit-json",
        &[
            "--json",
            "remember",
            "Also runs mypy",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "append",
        ],
    );
    g.later();
    g.run(
        "remember-replace-json",
        &[
            "--json",
            "remember",
            "Prefers pytest, mypy and ruff",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "replace",
        ],
    );
    g.later();
    g.run(
        "remember-replace-flag-human",
        &[
            "remember",
            "Production runs PostgreSQL 17",
            "-p",
            "infra.database",
            "--replace",
        ],
    );
    g.later();
    g.run(
        "remember-gated-kept-json",
        &[
            "--json",
            "remember",
            "Maybe MySQL",
            "-p",
            "infra.database",
            "-c",
            "0.4",
        ],
    );
    g.run(
        "remember-gated-kept-human",
        &[
            "remember",
            "Maybe MySQL",
            "-p",
            "infra.database",
            "-c",
            "0.4",
        ],
    );
    g.later();
    g.run(
        "remember-gated-written-human",
        &[
            "remember",
            "Python 3.13 in production",
            "-p",
            "infra.python",
            "-c",
            "0.9",
        ],
    );
    g.later();
    g.run(
        "remember-gated-explicit-json",
        &[
            "--json",
            "remember",
            "Prefers light mode",
            "-p",
            "ui.theme",
            "--merge-policy",
            "confidence_gated",
        ],
    );
    g.later();
    g.run(
        "remember-merge-on-read-json",
        &[
            "--json",
            "remember",
            "Deploys need a change ticket",
            "-p",
            "infra.deploy",
            "--merge-policy",
            "merge_on_read",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-new-key-json",
        &[
            "--json",
            "remember",
            "Deploy with make release",
            "-p",
            "workflow.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-no-llm-human",
        &[
            "remember",
            "Run the smoke tests after deploying",
            "-p",
            "workflow.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-behavior-new-key-human",
        &[
            "remember",
            "Avoid deploying on Fridays",
            "-p",
            "behavior.deploys",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-explicit-no-llm-json",
        &[
            "--json",
            "remember",
            "Never deploy on Fridays",
            "-p",
            "behavior.deploys",
            "--merge-policy",
            "llm_merge",
        ],
    );
    g.later();
    g.run_env(
        "remember-llm-merge-model-json",
        &[
            "--json",
            "remember",
            "Tag the release after the smoke tests",
            "-p",
            "workflow.deploy",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-merge")],
    );
    g.later();
    g.run_env(
        "remember-llm-merge-model-down-human",
        &[
            "remember",
            "Announce the release in chat",
            "-p",
            "workflow.deploy",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.later();
    g.run_env(
        "remember-policy-env-json",
        &[
            "--json",
            "remember",
            "Releases need two approvals",
            "-p",
            "ops.release",
        ],
        &[("MEMOIR_MERGE_POLICY", "append")],
    );
    g.later();
    g.run_env(
        "remember-facet-cap-json",
        &[
            "--json",
            "remember",
            "Quarantine flaky tests",
            "-p",
            "experience.testing",
        ],
        &[("MEMOIR_FACET_MAX_ENTRIES", "2")],
    );
    g.later();
    g.run(
        "remember-reject-conflict-json",
        &[
            "--json",
            "remember",
            "Prefers nose",
            "-p",
            "preferences.coding.testing",
            "-p",
            "preferences.coding.linting",
            "--merge-policy",
            "reject",
        ],
    );
    g.run(
        "remember-reject-conflict-human",
        &[
            "remember",
            "Prefers nose",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "reject",
        ],
    );
    g.later();
    g.run(
        "remember-reject-free-human",
        &[
            "remember",
            "Uses ruff",
            "-p",
            "preferences.coding.format",
            "--merge-policy",
            "reject",
        ],
    );
    g.later();
    g.run(
        "remember-branch-json",
        &[
            "--json",
            "remember",
            "Try Playwright",
            "-p",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.later();
    g.run(
        "remember-branch-human",
        &[
            "remember",
            "Playwright works well",
            "-p",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
            "--replace",
        ],
    );
    g.later();
    g.run_env(
        "remember-branch-env-json",
        &[
            "--json",
            "remember",
            "Cypress was slower",
            "-p",
            "experience.ui",
        ],
        &[("MEMOIR_BRANCH", "agent-1")],
    );
    g.run(
        "remember-branch-invalid-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--branch",
            "bad..name",
        ],
    );

    // The classifier (no -p).
    g.run(
        "remember-classify-no-llm-json",
        &["--json", "remember", "Uses hypothesis for property tests"],
    );
    g.run(
        "remember-classify-no-llm-human",
        &["remember", "Uses hypothesis for property tests"],
    );
    g.later();
    g.run_env(
        "remember-classify-model-json",
        &["--json", "remember", "Uses hypothesis for property tests"],
        &[("MEMOIR_LLM_COMMAND", "model-classify")],
    );
    g.later();
    g.run_env(
        "remember-classify-model-human",
        &[
            "remember",
            "Hypothesis strategies live in conftest",
            "-n",
            "work",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-classify")],
    );
    g.run_env(
        "remember-classify-garbage-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-classify-garbage")],
    );
    g.run_env(
        "remember-classify-model-down-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "remember-classify-model-down-human",
        &["remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "remember-classify-bad-provider-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_PROVIDER", "oracle")],
    );
}

/// `status`, `get`, `summarize`, `search` and `recall` on store `a`.
fn reads(g: &mut Golden) {
    g.both("status", &["status"]);

    g.both("get-one", &["get", "preferences.coding.testing"]);
    g.both(
        "get-several",
        &[
            "get",
            "infra.database",
            "nope.missing",
            "work:notes.standup",
            "experience.testing",
            "infra.deploy",
            "workflow.deploy",
        ],
    );
    g.both("get-missing", &["get", "nope.missing"]);
    g.both(
        "get-namespace",
        &["get", "-n", "work", "notes.retro", "notes.standup"],
    );
    g.both("get-at", &["get", "infra.database", "--at", "HEAD~20"]);
    g.run(
        "get-at-date-json",
        &[
            "--json",
            "get",
            "infra.database",
            "--at",
            "main@{2026-01-01T00:03}",
        ],
    );
    g.both(
        "get-branch",
        &["get", "preferences.coding.ui", "--branch", "agent-1"],
    );
    g.run(
        "get-branch-at-json",
        &[
            "--json",
            "get",
            "preferences.coding.ui",
            "--at",
            "agent-1~1",
        ],
    );
    g.both("get-branch-missing", &["get", "a.b", "--branch", "ghost"]);
    g.both("get-invalid-key", &["get", "bad key"]);
    g.both(
        "get-unknown-revision",
        &["get", "infra.database", "--at", "nosuch"],
    );
    g.run(
        "get-revision-too-far-json",
        &["--json", "get", "infra.database", "--at", "HEAD~999"],
    );
    g.run(
        "get-bad-revision-syntax-json",
        &["--json", "get", "infra.database", "--at", "HEAD@{someday}"],
    );
    g.run("get-quiet-human", &["-q", "get", "ui.theme"]);
    g.run_env(
        "get-json-env-human",
        &["get", "ui.theme"],
        &[("MEMOIR_JSON", "1")],
    );

    g.both("summarize", &["summarize"]);
    g.both("summarize-taxonomy", &["summarize", "taxonomy"]);
    g.both("summarize-timeline", &["summarize", "timeline"]);
    g.both("summarize-places", &["summarize", "places"]);
    g.both("summarize-depth-1", &["summarize", "--depth", "1"]);
    g.both(
        "summarize-depth-2-namespace",
        &["summarize", "--depth", "2", "-n", "default"],
    );
    g.both("summarize-keys", &["summarize", "--keys", "infra.*"]);
    g.both(
        "summarize-keys-union-depth",
        &[
            "summarize",
            "--keys",
            "infra.*",
            "--keys",
            "notes.?etro",
            "--depth",
            "1",
        ],
    );
    g.run(
        "summarize-keys-classes-json",
        &[
            "--json",
            "summarize",
            "--keys",
            "[io]*.d*",
            "--keys",
            "[!a-o]*",
        ],
    );
    g.run(
        "summarize-keys-no-match-json",
        &["--json", "summarize", "--keys", "nothing.*"],
    );
    g.both(
        "summarize-unknown-namespace",
        &["summarize", "-n", "nosuch"],
    );
    g.both(
        "summarize-invalid-glob",
        &["summarize", "--keys", "infra.[db"],
    );
    g.both("summarize-depth-0", &["summarize", "--depth", "0"]);
    g.run(
        "summarize-at-json",
        &["--json", "summarize", "--at", "HEAD~15", "--depth", "1"],
    );
    g.run(
        "summarize-branch-human",
        &["summarize", "--branch", "agent-1", "--depth", "3"],
    );
    g.run(
        "summarize-bad-kind-json",
        &["--json", "summarize", "everything"],
    );

    g.both("search", &["search", "postgres"]);
    g.both("search-namespace", &["search", "standup", "-n", "work"]);
    g.run(
        "search-keys-json",
        &["--json", "search", "deploy", "--keys", "infra.*"],
    );
    g.run(
        "search-since-until-json",
        &[
            "--json",
            "search",
            "tests",
            "--since",
            "2026-01-01T00:05",
            "--until",
            "2026-01-01T00:20",
        ],
    );
    g.run(
        "search-since-relative-human",
        &["search", "tests", "--since", "10.minutes.ago"],
    );
    g.both("search-recency", &["search", "tests", "--sort", "recency"]);
    g.run(
        "search-top-json",
        &["--json", "search", "deploy", "-k", "1"],
    );
    g.run(
        "search-top-alias-human",
        &["search", "deploy", "--top", "2"],
    );
    g.both("search-no-hits", &["search", "kubernetes"]);
    g.run("search-month-json", &["--json", "search", "january"]);
    g.run(
        "search-at-human",
        &["search", "postgres", "--at", "HEAD~20"],
    );
    g.run(
        "search-branch-json",
        &["--json", "search", "playwright", "--branch", "agent-1"],
    );
    g.both("search-bad-date", &["search", "x", "--since", "someday"]);
    g.run(
        "search-invalid-glob-json",
        &["--json", "search", "x", "--keys", "a.[b"],
    );

    g.both("recall-lexical", &["recall", "database"]);
    g.run(
        "recall-lexical-limit-json",
        &["--json", "recall", "deploy", "-l", "2", "-n", "default"],
    );
    g.run(
        "recall-threshold-human",
        &["recall", "deploy", "--threshold", "0.5"],
    );
    g.both("recall-no-hits", &["recall", "kubernetes"]);
    g.both(
        "recall-single-no-llm",
        &["recall", "database", "--mode", "single"],
    );
    g.run(
        "recall-tiered-no-llm-json",
        &["--json", "recall", "database", "--mode", "tiered"],
    );
    let pick = [("MEMOIR_LLM_COMMAND", "model-pick")];
    g.run_env(
        "recall-single-model-json",
        &["--json", "recall", "how do we ship?"],
        &pick,
    );
    g.run_env(
        "recall-single-model-human",
        &["recall", "how do we ship?", "--mode", "single"],
        &pick,
    );
    g.run_env(
        "recall-tiered-model-json",
        &[
            "--json",
            "recall",
            "where is the database?",
            "--mode",
            "tiered",
        ],
        &pick,
    );
    g.run_env(
        "recall-tiered-model-human",
        &[
            "recall",
            "where is the database?",
            "--mode",
            "tiered",
            "-l",
            "1",
        ],
        &pick,
    );
    g.run_env(
        "recall-model-flag-json",
        &[
            "--json", "recall", "release", "--model", "tiny", "-n", "default", "-l", "1",
        ],
        &pick,
    );
    g.run_env(
        "recall-lexical-with-model-json",
        &["--json", "recall", "database", "--mode", "lexical"],
        &pick,
    );
    g.run_env(
        "recall-model-down-json",
        &["--json", "recall", "database"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "recall-model-down-human",
        &["recall", "database", "--mode", "tiered"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "recall-model-garbage-json",
        &["--json", "recall", "database"],
        &[("MEMOIR_LLM_COMMAND", "model-classify-garbage")],
    );
    g.run(
        "recall-branch-human",
        &["recall", "playwright", "--branch", "agent-1"],
    );
    g.run(
        "recall-invalid-namespace-json",
        &["--json", "recall", "x", "-n", "bad ns"],
    );
}

/// `log`, `blame` and `diff` on store `a`.
fn history(g: &mut Golden) {
    g.both("log", &["log"]);
    g.both("log-n", &["log", "-n", "3"]);
    g.both("log-range", &["log", "HEAD~5..HEAD~2"]);
    g.run("log-branch-range-human", &["log", "main..agent-1"]);
    g.run("log-rev-json", &["--json", "log", "agent-1", "-n", "4"]);
    g.both("log-keys", &["log", "--keys", "infra.*"]);
    g.run(
        "log-namespace-json",
        &["--json", "log", "--namespace", "work"],
    );
    g.run(
        "log-branch-json",
        &["--json", "log", "--branch", "agent-1", "-n", "2"],
    );
    g.both("log-unknown-revision", &["log", "nosuch"]);
    g.run("log-invalid-glob-human", &["log", "--keys", "a.[b"]);
    g.run("log-bad-range-json", &["--json", "log", "main..."]);

    g.both("blame", &["blame", "infra.database"]);
    g.both("blame-lines", &["blame", "workflow.deploy", "--lines"]);
    g.run(
        "blame-lines-multiline-human",
        &["blame", "notes.multiline", "--lines"],
    );
    g.both(
        "blame-limit",
        &["blame", "preferences.coding.testing", "-l", "2"],
    );
    g.both("blame-never-written", &["blame", "nope.never"]);
    g.run(
        "blame-namespace-human",
        &["blame", "-n", "work", "notes.standup"],
    );
    g.run(
        "blame-at-json",
        &["--json", "blame", "infra.database", "--at", "HEAD~20"],
    );
    g.run(
        "blame-branch-json",
        &[
            "--json",
            "blame",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.both("blame-invalid-key", &["blame", "a..b"]);

    g.both("diff-last", &["diff"]);
    g.both("diff-one", &["diff", "HEAD~4"]);
    g.both("diff-two", &["diff", "HEAD~12", "HEAD~8"]);
    g.both("diff-stat", &["diff", "HEAD~12", "HEAD", "--stat"]);
    g.both("diff-patch", &["diff", "HEAD~12", "HEAD~8", "--patch"]);
    g.both(
        "diff-stat-patch",
        &["diff", "HEAD~3", "HEAD", "--stat", "--patch"],
    );
    g.both("diff-range", &["diff", "HEAD~3..HEAD"]);
    g.run(
        "diff-namespace-json",
        &["--json", "diff", "HEAD~30", "-n", "work"],
    );
    g.run(
        "diff-keys-human",
        &["diff", "HEAD~30", "--keys", "infra.*", "--patch"],
    );
    g.both("diff-branches", &["diff", "main", "agent-1"]);
    g.both("diff-same", &["diff", "HEAD", "HEAD"]);
    g.both("diff-unknown-revision", &["diff", "nosuch"]);
    g.run(
        "diff-invalid-glob-json",
        &["--json", "diff", "--keys", "[x"],
    );
}

/// `proof`, `verify`, `export`, `import`, `fsck` and `gc`: stores `a` and `c`.
fn proofs_and_transfer(g: &mut Golden) {
    let proof = g.run("proof-json", &["--json", "proof", "infra.database"]);
    g.run("proof-human", &["proof", "infra.database"]);
    g.both("proof-absent", &["proof", "nope.missing"]);
    g.run(
        "proof-at-json",
        &["--json", "proof", "work:notes.standup", "--at", "HEAD~3"],
    );
    g.run("proof-invalid-key-json", &["--json", "proof", "a..b"]);
    let hex = field(&proof, "proof");
    let root = field(&proof, "root");
    g.both("verify", &["verify", "infra.database", "-p", &hex]);
    std::fs::write(g.path("proof.hex"), &hex).unwrap();
    g.bare(
        "verify-file-root-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            "@<TMP>/proof.hex",
            "--root",
            &root,
        ],
    );
    g.both("verify-wrong-key", &["verify", "infra.deploy", "-p", &hex]);
    g.run(
        "verify-old-root-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            &hex,
            "--at",
            "HEAD~3",
        ],
    );
    g.both("verify-bad-hex", &["verify", "infra.database", "-p", "zz"]);
    g.run(
        "verify-missing-file-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            "@<TMP>/nope.hex",
        ],
    );

    g.both("export", &["export"]);
    g.run(
        "export-namespace-at-human",
        &["export", "-n", "work", "--at", "HEAD~2"],
    );
    g.run(
        "export-file-json",
        &["--json", "export", "-o", "<TMP>/all.jsonl"],
    );
    g.run(
        "export-branch-file-human",
        &["export", "--branch", "agent-1", "-o", "<TMP>/agent.jsonl"],
    );
    g.run(
        "export-at-and-branch-json",
        &["--json", "export", "--at", "HEAD", "--branch", "agent-1"],
    );
    g.run(
        "export-unknown-namespace-json",
        &["--json", "export", "-n", "nosuch"],
    );

    g.on("c");
    g.later();
    g.run("import-file-json", &["--json", "import", "<TMP>/all.jsonl"]);
    g.later();
    g.run_stdin(
        "import-stdin-human",
        &["import", "-", "-n", "legacy"],
        concat!(
            "{\"key\": \"old.style\", \"content\": \"schema 1 record\", \"confidence\": 0.9, ",
            "\"timestamp\": 1700000000}\n",
            "\n",
            "{\"key\": \"old.other\", \"content\": \"first\"}\n",
            "{\"key\": \"old.other\", \"content\": \"last line wins\"}\n",
        ),
    );
    g.later();
    g.run(
        "import-branch-json",
        &[
            "--json",
            "import",
            "<TMP>/agent.jsonl",
            "--branch",
            "agent-1",
        ],
    );
    g.run_stdin(
        "import-bad-line-json",
        &["--json", "import", "-"],
        "{\"key\": \"a.b\", \"content\": \"x\"}\nnot json\n",
    );
    g.run_stdin(
        "import-bad-key-human",
        &["import", "-"],
        "{\"key\": \"a..b\", \"content\": \"x\"}\n",
    );
    g.run_stdin("import-empty-json", &["--json", "import", "-"], "");
    g.run("import-missing-file-human", &["import", "<TMP>/nope.jsonl"]);
    g.both("status-imported", &["status"]);
    g.run("log-imported-human", &["log"]);
    g.run(
        "get-imported-json",
        &["--json", "get", "legacy:old.style", "legacy:old.other"],
    );

    g.on("a");
    g.both("fsck", &["fsck"]);
    g.run("gc-json", &["--json", "gc"]);
    g.run("gc-human", &["gc"]);
}

/// `forget`, with and without `--purge`, on store `a`.
fn removal(g: &mut Golden) {
    g.later();
    g.run("forget-json", &["--json", "forget", "infra.python"]);
    g.later();
    g.run("forget-human", &["forget", "-n", "work", "notes.retro"]);
    g.later();
    g.run(
        "forget-full-key-force-human",
        &["forget", "work:notes.standup", "--force"],
    );
    g.both("forget-missing", &["forget", "nope.missing"]);
    g.run("forget-invalid-key-json", &["--json", "forget", "a..b"]);
    g.later();
    g.run(
        "forget-branch-json",
        &[
            "--json",
            "forget",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.run(
        "forget-branch-missing-human",
        &["forget", "a.b", "--branch", "ghost"],
    );
    g.run(
        "get-forgotten-at-json",
        &["--json", "get", "infra.python", "--at", "HEAD~3"],
    );
    g.run("diff-forgotten-human", &["diff", "HEAD~3", "--patch"]);
    g.later();
    g.run(
        "forget-purge-json",
        &["--json", "forget", "--purge", "notes.multiline"],
    );
    g.later();
    g.run("forget-purge-human", &["forget", "--purge", "style.indent"]);
    g.run(
        "forget-purge-missing-json",
        &["--json", "forget", "--purge", "nope.missing"],
    );
    g.run("log-after-purge-human", &["log", "-n", "3"]);
    g.run(
        "blame-after-purge-json",
        &["--json", "blame", "notes.multiline"],
    );
    g.both("fsck-after-purge", &["fsck"]);
    g.both("status-end", &["status"]);
}

/// `branch`, `checkout`, `merge` and `time-travel` on store `m`.
fn branches_and_merges(g: &mut Golden) {
    g.on("m");
    g.later();
    g.run(
        "m-remember-base-human",
        &[
            "remember",
            "Base fact",
            "-p",
            "facts.base",
            "-p",
            "facts.shared",
        ],
    );
    g.both("branch-list", &["branch"]);
    g.run("branch-create-json", &["--json", "branch", "dev"]);
    g.run("branch-create-human", &["branch", "topic"]);
    g.run(
        "branch-from-json",
        &["--json", "branch", "old", "--from", "HEAD~1"],
    );
    g.both("branch-duplicate", &["branch", "dev"]);
    g.both("branch-from-unknown", &["branch", "x", "--from", "nosuch"]);
    g.both("branch-invalid-name", &["branch", "bad..name"]);
    g.run(
        "branch-from-without-name-json",
        &["--json", "branch", "--from", "HEAD"],
    );

    g.run("checkout-json", &["--json", "checkout", "dev"]);
    g.both("status-on-dev", &["status"]);
    g.later();
    g.run(
        "m-remember-dev-human",
        &["remember", "Dev fact", "-p", "facts.dev"],
    );
    g.run("checkout-human", &["checkout", "main"]);
    g.run("checkout-current-json", &["--json", "checkout", "main"]);
    g.run("merge-ff-json", &["--json", "merge", "dev"]);
    g.run("merge-up-to-date-human", &["merge", "dev"]);
    g.run("merge-up-to-date-json", &["--json", "merge", "dev"]);

    // Three-way without conflicts.
    g.later();
    g.run(
        "m-remember-topic-json",
        &[
            "--json",
            "remember",
            "Topic fact",
            "-p",
            "facts.topic",
            "--branch",
            "topic",
        ],
    );
    g.later();
    g.run(
        "m-remember-main-human",
        &["remember", "Main fact", "-p", "facts.main"],
    );
    g.both("merge-ff-only-refused", &["merge", "topic", "--ff-only"]);
    g.later();
    g.run("merge-three-way-json", &["--json", "merge", "topic"]);
    g.both("log-merge", &["log", "-n", "3"]);
    g.run(
        "blame-through-merge-json",
        &["--json", "blame", "facts.topic"],
    );
    g.run("diff-merge-human", &["diff", "HEAD^1", "HEAD", "--patch"]);
    g.run(
        "diff-merge-second-parent-json",
        &["--json", "diff", "HEAD^2"],
    );
    g.run(
        "merge-ff-only-ok-human",
        &["merge", "main", "--into", "dev", "--ff-only"],
    );

    // Conflicts: `theirs` and main both change facts.shared; each strategy merges `theirs`
    // into its own copy of main.
    g.later();
    g.run(
        "m-remember-theirs-human",
        &[
            "remember",
            "Shared fact, their version",
            "-p",
            "facts.shared",
            "--branch",
            "theirs",
            "--replace",
        ],
    );
    g.later();
    g.run(
        "m-remember-ours-human",
        &[
            "remember",
            "Shared fact, our version",
            "-p",
            "facts.shared",
            "--replace",
        ],
    );
    for s in ["ours", "theirs", "skip", "union"] {
        g.run(
            &format!("m-branch-t-{s}-human"),
            &["branch", &format!("t-{s}")],
        );
    }
    g.both("merge-conflict", &["merge", "theirs"]);
    g.later();
    g.run(
        "merge-ours-json",
        &[
            "--json", "merge", "theirs", "--into", "t-ours", "-S", "ours",
        ],
    );
    g.later();
    g.run(
        "merge-theirs-human",
        &["merge", "theirs", "--into", "t-theirs", "-S", "theirs"],
    );
    g.later();
    g.run(
        "merge-skip-json",
        &[
            "--json", "merge", "theirs", "--into", "t-skip", "-S", "skip",
        ],
    );
    g.later();
    g.run(
        "merge-union-json",
        &[
            "--json", "merge", "theirs", "--into", "t-union", "-S", "union",
        ],
    );
    for s in ["ours", "theirs", "skip", "union"] {
        g.run(
            &format!("get-after-merge-{s}-json"),
            &[
                "--json",
                "get",
                "facts.shared",
                "--branch",
                &format!("t-{s}"),
            ],
        );
    }
    g.later();
    g.run("merge-union-human", &["merge", "theirs", "-S", "union"]);
    g.both("merge-unknown-branch", &["merge", "ghost"]);
    g.run(
        "merge-into-unknown-json",
        &["--json", "merge", "dev", "--into", "ghost"],
    );
    g.run(
        "merge-bad-strategy-json",
        &["--json", "merge", "dev", "-S", "mine"],
    );

    g.run("checkout-b-json", &["--json", "checkout", "-b", "feature"]);
    g.run("checkout-b-existing-human", &["checkout", "-b", "feature"]);
    g.both("checkout-unknown", &["checkout", "ghost"]);
    g.run("checkout-commit-human", &["checkout", "HEAD~1"]);
    g.both("status-detached", &["status"]);
    g.run("branch-list-detached-json", &["--json", "branch"]);
    g.later();
    g.run(
        "remember-detached-json",
        &[
            "--json",
            "remember",
            "Detached fact",
            "-p",
            "facts.detached",
        ],
    );
    g.run("checkout-main-json", &["--json", "checkout", "main"]);

    g.run(
        "branch-delete-merged-json",
        &["--json", "branch", "-d", "dev"],
    );
    g.both("branch-delete-unmerged", &["branch", "-d", "t-ours"]);
    g.run(
        "branch-force-delete-json",
        &["--json", "branch", "-D", "t-ours"],
    );
    g.run("branch-force-delete-human", &["branch", "-D", "t-skip"]);
    g.run(
        "branch-delete-long-json",
        &["--json", "branch", "--delete", "old"],
    );
    g.both("branch-delete-current", &["branch", "-d", "main"]);
    g.both("branch-delete-unknown", &["branch", "-d", "ghost"]);
    g.both("branch-list-after", &["branch"]);

    g.run("time-travel-json", &["--json", "time-travel", "HEAD~2"]);
    g.both("status-time-travel", &["status"]);
    g.run("checkout-back-human", &["checkout", "main"]);
    g.run(
        "time-travel-named-human",
        &["time-travel", "main~1", "-b", "past"],
    );
    g.run("checkout-back-json", &["--json", "checkout", "main"]);
    g.both("time-travel-unknown", &["time-travel", "nosuch"]);
    g.run(
        "time-travel-existing-name-json",
        &["--json", "time-travel", "HEAD", "-b", "past"],
    );

    g.run("gc-after-deletes-json", &["--json", "gc"]);
    g.run("gc-again-human", &["gc"]);
    g.both("fsck-m", &["fsck"]);
    g.both("branch-list-end", &["branch"]);
    g.both("log-end", &["log", "-n", "4"]);
}

/// A store whose object bytes were changed on disk: store `x`.
fn corruption(g: &mut Golden) {
    g.bare("new-x-human", &["new", "<TMP>/x"]);
    g.on("x");
    g.later();
    g.run(
        "x-remember-human",
        &["remember", "Original text", "-p", "a.b"],
    );
    let mut tampered = 0;
    for entry in std::fs::read_dir(g.path("x/packs")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let Some(at) = bytes.windows(8).position(|w| w == b"Original") else {
            continue;
        };
        let mut bytes = bytes;
        bytes[at..at + 8].copy_from_slice(b"Tampered");
        std::fs::write(&path, bytes).unwrap();
        tampered += 1;
    }
    assert_eq!(tampered, 1, "the record's bytes are in one pack file");
    g.both("corrupt-get", &["get", "a.b"]);
    g.both("corrupt-fsck", &["fsck"]);
    g.both("corrupt-gc", &["gc"]);
    g.run("corrupt-status-json", &["--json", "status"]);
    g.run("corrupt-log-human", &["log"]);
}
