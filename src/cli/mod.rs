//! The command line: global options, one module per command, common context and output.
//!
//! To add a command: write `src/cli/<name>.rs` with a clap `Args` struct (with an example in
//! `after_help`) and `pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError>`; add a
//! line to the table in `commands.rs`. The command never prints: it returns a
//! [`Report`] (JSON object, human lines, exit code) or a [`CliError`], and [`main`] prints it
//! after the store has been closed.

pub mod context;
pub mod output;

mod aws;
mod branch;
mod capture;
mod checkout;
mod commands;
mod config;
mod export;
mod forget;
mod get;
mod graph;
mod history;
mod hook;
mod import;
mod maintenance;
mod mcp;
mod memory_branches;
mod merge;
mod net;
mod new;
mod proof;
mod recall;
mod remember;
mod remote;
mod schema;
mod search;
mod shell;
mod status;
mod summarize;
mod taxonomy;
mod tour;
mod tui;
mod ui;
mod watch;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use memoir::app::Options;
use memoir::Memoir;

use commands::{dispatch, Command};
use context::{env_flag, options_from_env, Ctx};
use output::{color_allowed, error_json, exit, render_json, CliError, Printer, Style};

const MAIN_HELP: &str = "\
Examples:
  memoir new ./mem
  memoir -s ./mem remember \"prefers pytest\" -p preferences.coding.testing
  memoir -s ./mem --json get preferences.coding.testing
  memoir -s ./mem summarize --depth 1

Environment: MEMOIR_STORE, MEMOIR_JSON=1, MEMOIR_QUIET=1, MEMOIR_LOCK_TIMEOUT, MEMOIR_BRANCH,
MEMOIR_AUTHOR, MEMOIR_SOURCE, MEMOIR_ACTOR, MEMOIR_MERGE_POLICY, MEMOIR_FACET_MAX_ENTRIES,
MEMOIR_NOW (fixed unix time, for reproducible ids in tests), NO_COLOR.
Exit codes: 0 ok, 1 error, 2 not found or usage, 3 not a store, 4 conflict, 5 corrupt store,
6 non-fast-forward, 7 store busy.";

/// memoir: git for an AI agent's memory.
#[derive(Debug, Parser)]
#[command(name = "memoir", version, about, after_help = MAIN_HELP)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Options accepted before or after the subcommand (`memoir -s m get a.b` and
/// `memoir get a.b -s m` alike: host configurations and scripts write both).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Global options")]
struct GlobalArgs {
    /// Store directory; a leading `~/` is the home directory [default: in a git repository
    /// its ~/.memoir/<slug>, else the current directory]
    #[arg(short = 's', long = "store", env = "MEMOIR_STORE", value_name = "PATH", global = true, value_parser = parse_store_path)]
    store: Option<PathBuf>,
    /// Print one JSON object on stdout (also MEMOIR_JSON=1)
    #[arg(long, global = true)]
    json: bool,
    /// Print only data and errors (also MEMOIR_QUIET=1)
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Print more detail on stderr
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Seconds to wait for a store another process holds [default: 5]
    #[arg(long, env = "MEMOIR_LOCK_TIMEOUT", value_name = "SECONDS", value_parser = parse_seconds, global = true)]
    lock_timeout: Option<Duration>,
    /// Use the git repository's store, ~/.memoir/<slug> (repo mode); exit 3 outside one
    #[arg(long, global = true)]
    repo: bool,
    /// Print the commands and options as JSON, for agents
    #[arg(
        long = "json-schema",
        visible_alias = "machine-readable",
        global = true
    )]
    json_schema: bool,
}

/// The store a command uses when `-s` and `MEMOIR_STORE` name none: in a git repository
/// (not a store's own directory), the repository's `~/.memoir/<slug>` (repo mode; `--repo`
/// insists on it), else the current directory.
fn found_store(repo: bool) -> Result<PathBuf, CliError> {
    let here = PathBuf::from(".");
    let cwd = std::env::current_dir().unwrap_or_else(|_| here.clone());
    let home = context::env_var("HOME");
    let found = home
        .as_deref()
        .and_then(|h| memoir::app::code_repo::repo_store(std::path::Path::new(h), &cwd));
    match found {
        Some(p) => Ok(p),
        None if repo => Err(CliError::new(
            output::exit::NOT_A_STORE,
            if home.is_none() {
                "--repo: HOME is not set, so there is no ~/.memoir".to_string()
            } else {
                format!(
                    "--repo: {} is not in a git repository (or is a store's own directory)",
                    cwd.display()
                )
            },
        )),
        None => Ok(here),
    }
}

/// A store path with a leading `~` expanded (hosts start servers without a shell).
fn parse_store_path(s: &str) -> Result<PathBuf, String> {
    Ok(context::expand_home(s))
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    memoir::app::parse_seconds(s).ok_or_else(|| format!("{s:?} is not a number of seconds"))
}

fn printer(json: bool, quiet: bool) -> Printer {
    Printer {
        json,
        quiet,
        out: Style::new(!json && color_allowed(std::io::stdout().is_terminal())),
        err: Style::new(color_allowed(std::io::stderr().is_terminal())),
    }
}

/// Parses the command line, runs the command, prints, and returns the exit code. Every store
/// the command opened is closed before this returns.
pub fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os().collect()))
}

/// Parses `args`, first against a tree holding only the command that `args` seems to name:
/// putting the global options into every other command costs a command's start more than
/// all the rest clap does. A parse that succeeds there finds that command at the same place
/// the whole tree would, with the same options, so it gives the same `Cli`. Anything else
/// (no command named, help, version, an error) is parsed against the whole tree, whose
/// messages, help and suggestions know every command. The pruned root must hold every
/// setting of [`Cli`]'s root that can make a parse fail (today: the global options and a
/// required command); the test `parsing_one_command_agrees_with_the_whole_tree` compares the
/// two.
fn parse(args: &[OsString]) -> Result<Cli, clap::Error> {
    use clap::{Args as _, FromArgMatches as _};
    let named = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| <Command as clap::Subcommand>::has_subcommand(a));
    let one = named.and_then(Command::one).map(|command| {
        GlobalArgs::augment_args(clap::Command::new("memoir"))
            .subcommand_required(true)
            .subcommand(command)
    });
    if let Some(mut matches) = one.and_then(|tree| tree.try_get_matches_from(args).ok()) {
        if let Ok(cli) = Cli::from_arg_matches_mut(&mut matches) {
            return Ok(cli);
        }
    }
    Cli::try_parse_from(args)
}

/// The memoir command a user of git or another tool may mean by a word memoir has no command
/// for (`init` is `new`), for clap's "a similar subcommand exists" tip.
fn meant_command(word: &str) -> Option<&'static str> {
    Some(match word {
        "init" | "create" => "new",
        "add" | "save" | "store" | "commit" | "put" => "remember",
        "show" | "cat" | "read" => "get",
        "rm" | "remove" | "delete" | "del" => "forget",
        "find" | "grep" | "query" => "search",
        "ask" => "recall",
        "ls" | "list" | "tree" | "overview" => "summarize",
        "history" => "log",
        "switch" => "checkout",
        "check" => "fsck",
        "clean" | "prune" => "gc",
        _ => return None,
    })
}

/// What `memoir --version` prints: the version and the commit it was built from, the store
/// format it reads and writes, and the optional parts built in.
fn version_text() -> String {
    let features: Vec<&str> = std::iter::once("cli")
        .chain(memoir::FEATURES.iter().copied())
        .collect();
    format!(
        "memoir {} (commit {})\nstore format {}\nfeatures: {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("MEMOIR_COMMIT"),
        memoir::store::FORMAT_VERSION,
        features.join(", ")
    )
}

/// Puts [`meant_command`]'s tip in an unknown command's error, in place of clap's spelling
/// suggestions (`rm` is `forget`, not `remember`).
fn with_meant_command(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return e;
    }
    let meant = match e.get(ContextKind::InvalidSubcommand) {
        Some(ContextValue::String(word)) => meant_command(word),
        _ => None,
    };
    if let Some(cmd) = meant {
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![cmd.to_string()]),
        );
    }
    e
}

/// The subcommand `args` name, if any (the first argument that is one).
fn named_command(args: &[OsString]) -> Option<&str> {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .filter_map(|a| a.to_str())
        .find(|a| <Command as clap::Subcommand>::has_subcommand(a))
}

fn run(args: Vec<OsString>) -> u8 {
    let json_hint = env_flag("MEMOIR_JSON") || args.iter().skip(1).any(|a| a == "--json");
    // `memoir --json-schema` needs no command (one named after it is parsed as usual).
    let command_at = args
        .iter()
        .skip(1)
        .position(|a| {
            a.to_str()
                .is_some_and(<Command as clap::Subcommand>::has_subcommand)
        })
        .map_or(args.len(), |i| i + 1);
    if args[1.min(args.len())..command_at]
        .iter()
        .any(|a| a == "--json-schema" || a == "--machine-readable")
    {
        print!("{}", schema::render());
        return exit::OK;
    }
    // A hook never fails the host's session: exit 0 and print nothing, whatever it is given.
    let is_hook = named_command(&args) == Some("hook");
    let cli = match parse(&args).map_err(with_meant_command) {
        Ok(c) => c,
        Err(_) if is_hook => return exit::OK,
        Err(e) => {
            use clap::error::ErrorKind;
            if e.kind() == ErrorKind::DisplayVersion {
                print!("{}", version_text());
                return exit::OK;
            }
            if e.kind() == ErrorKind::DisplayHelp {
                let _ = e.print();
                return exit::OK;
            }
            if json_hint {
                let text = e.render().to_string();
                // The first paragraph of clap's message, on one line.
                let para: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .collect();
                let mut joined = para.join(" ");
                // And, for an unknown command, the tip naming the one meant.
                let tip = (e.kind() == ErrorKind::InvalidSubcommand)
                    .then(|| text.lines().map(str::trim).find(|l| l.starts_with("tip:")))
                    .flatten();
                if let Some(tip) = tip {
                    joined = format!("{joined} ({tip})");
                }
                let message = joined
                    .strip_prefix("error: ")
                    .unwrap_or(&joined)
                    .to_string();
                let err = CliError::new(exit::USAGE, message);
                print!("{}", render_json(error_json(&err)));
            }
            let _ = e.print();
            return exit::USAGE;
        }
    };
    let g = cli.global;
    let json = g.json || env_flag("MEMOIR_JSON");
    let quiet = g.quiet || env_flag("MEMOIR_QUIET");
    let p = printer(json, quiet);
    if g.json_schema {
        print!("{}", schema::render());
        return exit::OK;
    }
    let store_named = g.store.is_some();
    let store_path = match g.store {
        Some(p) => p,
        None if is_hook => PathBuf::from("."),
        None => match found_store(g.repo) {
            Ok(p) => p,
            Err(e) => return p.emit(Err(e)),
        },
    };
    // `config` reads the files itself, so that it can mend one that does not parse; a hook
    // never fails its host (it reports through its own log).
    if !matches!(cli.command, Command::Config(_)) {
        if let Err(e) = context::load_settings(&store_path) {
            if !is_hook {
                return p.emit(Err(e));
            }
        }
    }
    let lock_timeout = match g.lock_timeout.map(Ok).or_else(|| {
        context::env()
            .lock_timeout()
            .map_err(CliError::from)
            .transpose()
    }) {
        None => Options::default().lock_timeout,
        Some(Ok(t)) => t,
        Some(Err(_)) if is_hook => Options::default().lock_timeout,
        Some(Err(e)) => return p.emit(Err(e)),
    };
    let options = match options_from_env(lock_timeout, &cli.command) {
        Ok(o) => o,
        Err(_) if is_hook => memoir::app::Options::default(),
        Err(e) => return p.emit(Err(e)),
    };
    let app = Arc::new(Memoir::open(&store_path, options));
    let ctx = Ctx {
        store_path,
        store_named,
        json,
        lines_only: !json,
        quiet,
        verbose: g.verbose,
        style: p.out,
        printer: p,
        app,
    };
    if ctx.verbose {
        eprintln!("store: {}", ctx.abs_store_path().display());
        match context::llm_config_from_env() {
            Ok(cfg) => {
                let info = cfg.as_ref().map(memoir::app::LlmInfo::of);
                eprintln!("llm: {}", status::llm_line(info.as_ref()));
            }
            Err(e) => eprintln!("llm: not configured: {}", output::esc(&e.message)),
        }
    }
    // The command's store (if any) is dropped when `dispatch` returns, before printing.
    let result = dispatch(&ctx, cli.command);
    let code = p.emit(result);
    // Nothing is open any more (a held store is closed here, should one be); what the
    // handle keeps is memory, its caches of tree nodes and commits, which the process gives
    // back as it exits without freeing them one by one.
    ctx.app.release();
    std::mem::forget(ctx);
    code
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use clap::CommandFactory;

    /// clap's own consistency checks over every command and option.
    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every command's help carries an example.
    #[test]
    fn every_command_has_an_example() {
        let mut cmd = super::Cli::command();
        // Each command's options and help are built when it is used; clap's own `help`
        // subcommand, which the build adds, is not one of ours.
        cmd.build();
        let ours: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        assert!(ours.len() > 30, "{} commands", ours.len());
        for sub in ours {
            let help = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                help.contains("memoir "),
                "`{}` has no example",
                sub.get_name()
            );
        }
    }

    /// The S3 settings are read for the commands that reach a remote, and only for them.
    #[test]
    fn only_commands_that_reach_remotes_read_the_s3_settings() {
        use clap::Parser;
        let uses = |line: &str| {
            let argv = std::iter::once("memoir").chain(line.split(' '));
            super::Cli::try_parse_from(argv)
                .unwrap()
                .command
                .uses_remotes()
        };
        for line in [
            "push",
            "push origin main",
            "fetch",
            "pull",
            "clone s3://b/p dir",
            "remote list",
            "gc --remote origin",
        ] {
            assert!(uses(line), "{line}");
        }
        for line in [
            "get a.b",
            "status",
            "log",
            "gc",
            "search x",
            "remember x -p a.b",
        ] {
            assert!(!uses(line), "{line}");
        }
    }

    /// Parsing against the one named command gives what the whole tree gives: the same
    /// `Cli` when it parses, the same error (kind and text) when it does not.
    #[test]
    fn parsing_one_command_agrees_with_the_whole_tree() {
        use clap::Parser;
        let lines = [
            "memoir -s m status",
            "memoir status -s m --json",
            "memoir --json -q get a.b c:d.e",
            "memoir -s get get x",
            "memoir -s remember get x",
            "memoir --lock-timeout 2.5 remember hello -p a.b --source s",
            "memoir summarize --depth 2 --keys 'a.*'",
            "memoir remote add origin s3://bucket/p",
            "memoir watch list",
            "memoir taxonomy show preferences",
            "memoir diff HEAD~3 HEAD --stat",
            "memoir log -n 5 --json",
            "memoir time-travel HEAD~1 old",
            "memoir get",
            "memoir get --bogus a",
            "memoir remembr x",
            "memoir",
            "memoir --version",
            "memoir get --help",
            "memoir help get",
            "memoir --lock-timeout x status",
            "memoir status extra",
            "memoir search",
            "memoir hook claude-code stop",
            "memoir hook codex",
            "memoir --repo sync-branch feature/x --yes",
            "memoir branch-match follow",
            "memoir new s --taxonomy-builtin -t a.md -t b.md",
        ];
        for line in lines {
            let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
            let one = super::parse(&args).map(|c| format!("{c:?}"));
            let whole = super::Cli::try_parse_from(&args).map(|c| format!("{c:?}"));
            match (one, whole) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{line}"),
                (Err(a), Err(b)) => {
                    assert_eq!(a.kind(), b.kind(), "{line}");
                    assert_eq!(a.to_string(), b.to_string(), "{line}");
                }
                (a, b) => panic!("{line}: {a:?} against {b:?}"),
            }
        }
    }
}
