//! `memoir tour`: a guided tour on a throwaway store (remember, summarize, get, search, blame,
//! log, diff, `--at`, branch and merge), each step run by this same binary and printed as a
//! user sees it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::context::Ctx;
use super::output::{CliError, Report};

/// Walk through memoir on a throwaway store
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  memoir tour\n  memoir tour --keep ./tour-store   # keep the store to explore it afterwards"
)]
pub struct Args {
    /// Build the tour's store here (a new or empty directory) and keep it
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// The steps: a line of narration, or a command line.
enum Step {
    Say(&'static str),
    Run(&'static [&'static str]),
}

use Step::{Run, Say};

const STEPS: &[Step] = &[
    Say("Remember facts under dot-path keys (namespace 'default' unless given)."),
    Run(&[
        "remember",
        "Prefers pytest with property-based tests",
        "-p",
        "preferences.coding.testing",
    ]),
    Run(&[
        "remember",
        "Production runs PostgreSQL 16",
        "-p",
        "infra.database",
    ]),
    Run(&[
        "remember",
        "Deploys are blue-green via ArgoCD",
        "-p",
        "infra.deploy",
        "--source",
        "standup",
    ]),
    Say("The cheap recall path: a summary, then one batched get."),
    Run(&["summarize", "--depth", "1"]),
    Run(&["summarize", "--keys", "infra.*"]),
    Run(&["get", "infra.database", "preferences.coding.testing"]),
    Say("Lexical search needs no model: identifiers split, words stem, typos match."),
    Run(&["search", "postgres"]),
    Say("Memories grow: a new fact about a key is appended as a facet."),
    Run(&[
        "remember",
        "Migrating to PostgreSQL 17 in March",
        "-p",
        "infra.database",
        "--merge-policy",
        "append",
    ]),
    Say("Who taught me this, and when?"),
    Run(&["blame", "infra.database"]),
    Run(&["log", "-n", "3"]),
    Run(&["diff", "HEAD~1", "HEAD", "--patch"]),
    Say("Read the past without moving anything."),
    Run(&["get", "infra.database", "--at", "HEAD~1"]),
    Say("An agent experiments on its own branch, then merges back."),
    Run(&[
        "remember",
        "Try Playwright for UI tests",
        "-p",
        "preferences.coding.ui",
        "--branch",
        "agent-1",
    ]),
    Run(&[
        "remember",
        "CI must stay under ten minutes",
        "-p",
        "preferences.ci.duration",
    ]),
    Run(&["branch"]),
    Run(&["merge", "agent-1", "--into", "main"]),
    Run(&["log", "-n", "1"]),
    Run(&["summarize", "--depth", "2"]),
    Run(&["fsck"]),
];

/// The tour's first clock reading: 2026-01-01T00:00:00Z; each step is an hour later.
const START: u64 = 1_767_225_600;

fn shown(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if a.contains(' ') || a.contains('*') {
                format!("'{a}'")
            } else {
                a.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `memoir -s STORE ARGS` with a fixed clock and author; appends what it printed.
fn step(
    bin: &Path,
    store: &Path,
    clock: u64,
    args: &[&str],
    out: &mut String,
) -> Result<(), CliError> {
    out.push_str(&format!("$ memoir {}\n", shown(args)));
    let run = Command::new(bin)
        .arg("-s")
        .arg(store)
        .args(args)
        .env("MEMOIR_NOW", clock.to_string())
        .env("MEMOIR_AUTHOR", "Ada <ada@example.org>")
        .env("NO_COLOR", "1")
        .env_remove("MEMOIR_STORE")
        .env_remove("MEMOIR_JSON")
        .env_remove("MEMOIR_QUIET")
        .env_remove("MEMOIR_BRANCH")
        .env_remove("MEMOIR_MERGE_POLICY")
        .output()
        .map_err(|e| CliError::invalid(format!("cannot run {}: {e}", bin.display())))?;
    out.push_str(&String::from_utf8_lossy(&run.stdout));
    out.push_str(&String::from_utf8_lossy(&run.stderr));
    out.push('\n');
    if !run.status.success() {
        return Err(CliError::invalid(format!(
            "the tour stopped: `memoir {}` exited with {}:\n{out}",
            shown(args),
            run.status.code().unwrap_or(-1)
        )));
    }
    Ok(())
}

/// Runs `tour`.
pub fn run(_ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let bin = std::env::current_exe()
        .map_err(|e| CliError::invalid(format!("cannot find this program's path: {e}")))?;
    let (dir, store) = match &args.keep {
        Some(p) => (None, p.clone()),
        None => {
            let d = std::env::temp_dir().join(format!("memoir-tour-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d)
                .map_err(|e| CliError::invalid(format!("cannot make {}: {e}", d.display())))?;
            (Some(d.clone()), d.join("memory"))
        }
    };
    let mut out = String::from("# A store is a directory. Every change is a commit.\n");
    let mut clock = START;
    let store_arg = store.display().to_string();
    let result = step(&bin, &store, clock, &["new", &store_arg], &mut out).and_then(|()| {
        for s in STEPS {
            match s {
                Say(text) => out.push_str(&format!("# {text}\n")),
                Run(a) => {
                    clock += 3600;
                    step(&bin, &store, clock, a, &mut out)?;
                }
            }
        }
        Ok(())
    });
    if let Some(d) = &dir {
        let _ = std::fs::remove_dir_all(d);
    }
    result?;
    match &args.keep {
        Some(p) => out.push_str(&format!(
            "# The tour's store is at {}. Explore it: memoir -s {} log\n",
            p.display(),
            p.display()
        )),
        None => out
            .push_str("# The tour's store was removed. Start your own with: memoir new ./memory\n"),
    }
    Ok(Report {
        raw: Some(out),
        ..Report::default()
    })
}
