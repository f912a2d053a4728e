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
//! `MEMOIR_BLESS=1 cargo test --test it golden::` writes the files from the current binary (and
//! removes the files of cases that no longer exist); without it, every mismatch is reported
//! with a diff naming its case.

mod branches;
mod maintenance;
mod reads;
mod writes;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Out, AUTHOR};

use branches::branches_and_merges;
use maintenance::{corruption, proofs_and_transfer};
use reads::{history, reads};
use writes::{removal, writes};

/// 2026-01-01T00:00:00Z, the time of the first case.
const BASE: u64 = 1_767_225_600;

/// Where the temporary directory's path is in the expectation files.
const TMP: &str = "<TMP>";

/// Every subcommand but `mcp`, whose `--help` is pinned here.
const SUBCOMMANDS: [&str; 23] = [
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
    "taxonomy",
    "capture",
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

    /// `text` with the temporary directory's paths replaced by `<TMP>`, and the commit the
    /// binary was built from (in `--version`) by `<COMMIT>`.
    fn normalise(&self, text: &str) -> String {
        let text = self
            .roots
            .iter()
            .fold(text.to_string(), |t, root| t.replace(root.as_str(), TMP));
        let version = format!("memoir {} (commit ", env!("CARGO_PKG_VERSION"));
        match text.split_once(version.as_str()) {
            Some((before, rest)) => match rest.split_once(')') {
                Some((_, after)) => format!("{before}{version}<COMMIT>){after}"),
                None => text,
            },
            None => text,
        }
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
        r#"{"content": "Deploy with make release, run the smoke tests, then tag the release."}"#,
    );
    // Topics when asked for topics, else keys.
    g.script(
        "model-pick",
        "#!/bin/sh\ncase \"$(cat)\" in\n\
         *'Topics in memory'*) echo '{\"topics\": [\"default:infra\", \"default:ops\"]}' ;;\n\
         *) echo '{\"keys\": [\"default:infra.database\", \"default:ops.release\"]}' ;;\n\
         esac\n",
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
