//! The command line: global options, one module per command, common context and output.
//!
//! To add a command: write `src/cli/<name>.rs` with a clap `Args` struct (with an example in
//! `after_help`) and `pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError>`; add a
//! variant to [`Command`] and a line to [`dispatch`]. The command never prints: it returns a
//! [`Report`] (JSON object, human lines, exit code) or a [`CliError`], and [`main`] prints it
//! after the store has been closed.

pub mod context;
pub mod output;

mod aws;
mod branch;
mod capture;
mod checkout;
mod export;
mod forget;
mod get;
mod history;
mod import;
mod maintenance;
mod mcp;
mod merge;
mod net;
mod new;
mod proof;
mod recall;
mod remember;
mod remote;
mod search;
mod status;
mod summarize;
mod taxonomy;
mod tour;
mod ui;
mod watch;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};

use memoir::Memoir;

use context::{clock_from_env, env_flag, options_from_env, Ctx};
use output::{color_allowed, error_json, exit, render_json, CliError, Printer, Report, Style};

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
struct GlobalArgs {
    /// Store directory; a leading `~/` is the home directory [default: the current directory]
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
    /// Seconds to wait for a store another process holds
    #[arg(long, env = "MEMOIR_LOCK_TIMEOUT", value_name = "SECONDS", default_value = "5", value_parser = parse_seconds, global = true)]
    lock_timeout: Duration,
}

/// A store path with a leading `~` expanded (hosts start servers without a shell).
fn parse_store_path(s: &str) -> Result<PathBuf, String> {
    Ok(context::expand_home(s))
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0 && *x < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("{s:?} is not a number of seconds"))
}

/// The commands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Create a store
    New(new::Args),
    /// Show the store's state
    Status(status::Args),
    /// Store a memory under one or more keys
    Remember(remember::Args),
    /// Read memories by key
    Get(get::Args),
    /// Remove a memory
    Forget(forget::Args),
    /// Count memories by namespace and key prefix
    Summarize(summarize::Args),
    /// List, create or delete branches
    Branch(branch::Args),
    /// Switch HEAD to a branch or commit
    Checkout(checkout::Args),
    /// Write every memory as JSON Lines
    Export(export::Args),
    /// Read memories from JSON Lines (one commit, all or nothing)
    Import(import::Args),
    /// Ranked lexical search over keys and contents
    Search(search::Args),
    /// Find the memories that answer a question (LLM picker or lexical)
    Recall(recall::Args),
    /// Merge a branch into another
    Merge(merge::Args),
    /// Manage remotes: add, list, remove
    Remote(remote::RemoteArgs),
    /// Upload a branch to a remote
    Push(remote::PushArgs),
    /// Download a remote's branches as REMOTE/BRANCH
    Fetch(remote::FetchArgs),
    /// Fetch, then merge the remote branch into the current branch
    Pull(remote::PullArgs),
    /// Make a new store from a remote
    Clone(remote::CloneArgs),
    /// Check the whole store for damage
    Fsck(maintenance::FsckArgs),
    /// Remove unreachable objects
    Gc(maintenance::GcArgs),
    /// Where branches and HEAD have pointed, newest first
    Reflog(maintenance::ReflogArgs),
    /// Show commits, newest first
    Log(history::LogArgs),
    /// Who changed a memory, and when
    Blame(history::BlameArgs),
    /// What changed between two revisions
    Diff(history::DiffArgs),
    /// Check out a past revision on a new branch
    TimeTravel(history::TimeTravelArgs),
    /// Print a Merkle proof of a key's value
    Proof(proof::ProofArgs),
    /// Check a Merkle proof
    Verify(proof::VerifyArgs),
    /// Store the durable facts of one conversation turn read on stdin
    Capture(capture::Args),
    /// The store's taxonomy: init, load FILE, list, show ID, prompt-snippet
    Taxonomy(taxonomy::Args),
    /// Serve the store to an agent host over MCP (stdio, or HTTP on loopback)
    Mcp(mcp::Args),
    /// Browse memories, history and provenance in a web browser (loopback)
    Ui(ui::Args),
    /// Walk through memoir on a throwaway store
    Tour(tour::Args),
    /// Keep documents (Markdown, text, HTML, PDF) as searchable memories
    Watch(watch::Args),
}

fn dispatch(ctx: &Ctx, cmd: Command) -> Result<Report, CliError> {
    match cmd {
        Command::New(a) => new::run(ctx, a),
        Command::Status(a) => status::run(ctx, a),
        Command::Remember(a) => remember::run(ctx, a),
        Command::Get(a) => get::run(ctx, a),
        Command::Forget(a) => forget::run(ctx, a),
        Command::Summarize(a) => summarize::run(ctx, a),
        Command::Branch(a) => branch::run(ctx, a),
        Command::Checkout(a) => checkout::run(ctx, a),
        Command::Export(a) => export::run(ctx, a),
        Command::Import(a) => import::run(ctx, a),
        Command::Search(a) => search::run(ctx, a),
        Command::Recall(a) => recall::run(ctx, a),
        Command::Merge(a) => merge::run(ctx, a),
        Command::Remote(a) => remote::remote(ctx, a),
        Command::Push(a) => remote::push(ctx, a),
        Command::Fetch(a) => remote::fetch(ctx, a),
        Command::Pull(a) => remote::pull(ctx, a),
        Command::Clone(a) => remote::clone(ctx, a),
        Command::Fsck(a) => maintenance::fsck(ctx, a),
        Command::Gc(a) => maintenance::gc(ctx, a),
        Command::Reflog(a) => maintenance::reflog(ctx, a),
        Command::Log(a) => history::log(ctx, a),
        Command::Blame(a) => history::blame(ctx, a),
        Command::Diff(a) => history::diff(ctx, a),
        Command::TimeTravel(a) => history::time_travel(ctx, a),
        Command::Proof(a) => proof::proof(ctx, a),
        Command::Verify(a) => proof::verify(ctx, a),
        Command::Capture(a) => capture::run(ctx, a),
        Command::Taxonomy(a) => taxonomy::run(ctx, a),
        Command::Mcp(a) => mcp::run(ctx, a),
        Command::Ui(a) => ui::run(ctx, a),
        Command::Tour(a) => tour::run(ctx, a),
        Command::Watch(a) => watch::run(ctx, a),
    }
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

fn run(args: Vec<OsString>) -> u8 {
    let json_hint = env_flag("MEMOIR_JSON") || args.iter().skip(1).any(|a| a == "--json");
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let informational =
                matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            if informational {
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
                let joined = para.join(" ");
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
    let clock = match clock_from_env() {
        Ok(c) => c,
        Err(e) => return p.emit(Err(e)),
    };
    let store_path = g.store.unwrap_or_else(|| PathBuf::from("."));
    let app = Arc::new(Memoir::open(
        &store_path,
        options_from_env(g.lock_timeout, clock),
    ));
    let ctx = Ctx {
        store_path,
        json,
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
    p.emit(result)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own consistency checks over every command and option.
    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every command's help carries an example.
    #[test]
    fn every_command_has_an_example() {
        let cmd = super::Cli::command();
        for sub in cmd.get_subcommands() {
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
}
