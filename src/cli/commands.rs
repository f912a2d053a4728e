//! The table of commands: each one's name, argument type, runner and one-line description,
//! written once and expanded into the [`Command`] enum, clap's view of it and [`dispatch`].
//!
//! Each command's options are built only when that command is the one parsed (clap's
//! `Command::defer`): `memoir get` does not build, propagate the global options into and
//! drop the options of the thirty-two other commands, which was most of clap's share of a
//! command's start. The listing in `memoir --help` needs only the names and descriptions,
//! which are set at once.

use clap::error::ErrorKind;
use clap::{ArgMatches, FromArgMatches, Subcommand};

use super::output::{CliError, Report};
use super::{
    branch, capture, checkout, config, export, forget, get, graph, history, hook, import,
    maintenance, mcp, memory_branches, merge, new, proof, recall, remember, remote, search, shell,
    status, summarize, taxonomy, tour, tui, ui, watch, Ctx,
};

/// Expands the table: `"name" Variant(Args) => runner, "description";` for each command.
macro_rules! commands {
    ($($name:literal $variant:ident($args:ty) => $run:path, $about:literal;)*) => {
        /// The commands.
        #[derive(Debug)]
        pub(super) enum Command {
            $(#[doc = $about] $variant($args),)*
        }

        impl Command {
            /// Whether the command talks to remotes (and so needs the S3 settings, which are
            /// read from the AWS profile files only then).
            pub(super) fn uses_remotes(&self) -> bool {
                match self {
                    Command::Remote(_)
                    | Command::Push(_)
                    | Command::Fetch(_)
                    | Command::Pull(_)
                    | Command::Clone(_) => true,
                    Command::Gc(args) => args.remote.is_some(),
                    _ => false,
                }
            }

            /// Whether the command is a read that visits each tree node once, and so keeps
            /// few decoded nodes ([`super::context::ONE_SHOT_NODE_CACHE`]).
            pub(super) fn reads_once(&self) -> bool {
                matches!(
                    self,
                    Command::Status(_)
                        | Command::Get(_)
                        | Command::Summarize(_)
                        | Command::Export(_)
                        | Command::Log(_)
                        | Command::Blame(_)
                        | Command::Diff(_)
                        | Command::Proof(_)
                )
            }

            /// clap's view of the command called `name`, its options deferred until it is
            /// built; `None` when no command has that name.
            pub(super) fn one(name: &str) -> Option<clap::Command> {
                match name {
                    $($name => Some(clap::Command::new($name).about($about).defer(|c| {
                        <$args as clap::Args>::augment_args(c).about($about).long_about(None)
                    })),)*
                    _ => None,
                }
            }
        }

        impl Subcommand for Command {
            fn augment_subcommands(cmd: clap::Command) -> clap::Command {
                cmd.subcommands([$($name),*].into_iter().filter_map(Self::one))
            }

            /// The same tree: memoir parses a command line once and never updates a parsed
            /// `Cli` from another.
            fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
                Self::augment_subcommands(cmd)
            }

            fn has_subcommand(name: &str) -> bool {
                matches!(name, $($name)|*)
            }
        }

        impl FromArgMatches for Command {
            fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
                Self::from_arg_matches_mut(&mut matches.clone())
            }

            fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
                let Some((name, mut sub)) = matches.remove_subcommand() else {
                    return Err(clap::Error::raw(
                        ErrorKind::MissingSubcommand,
                        "a subcommand is required but one was not provided",
                    ));
                };
                match name.as_str() {
                    $($name => Ok(Self::$variant(<$args>::from_arg_matches_mut(&mut sub)?)),)*
                    _ => Err(clap::Error::raw(
                        ErrorKind::InvalidSubcommand,
                        format!("the subcommand '{name}' wasn't recognized"),
                    )),
                }
            }

            fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
                self.update_from_arg_matches_mut(&mut matches.clone())
            }

            fn update_from_arg_matches_mut(
                &mut self,
                matches: &mut ArgMatches,
            ) -> Result<(), clap::Error> {
                if matches.subcommand_name().is_some() {
                    *self = Self::from_arg_matches_mut(matches)?;
                }
                Ok(())
            }
        }

        /// Runs `cmd`.
        pub(super) fn dispatch(ctx: &Ctx, cmd: Command) -> Result<Report, CliError> {
            match cmd {
                $(Command::$variant(a) => $run(ctx, a),)*
            }
        }
    };
}

commands! {
    "new" New(new::Args) => new::run, "Create a store";
    "status" Status(status::Args) => status::run, "Show the store's state";
    "remember" Remember(remember::Args) => remember::run, "Store a memory under one or more keys";
    "get" Get(get::Args) => get::run, "Read memories by key";
    "forget" Forget(forget::Args) => forget::run, "Remove a memory";
    "summarize" Summarize(summarize::Args) => summarize::run,
        "Count memories by namespace and key prefix";
    "branch" Branch(branch::Args) => branch::run, "List, create or delete branches";
    "checkout" Checkout(checkout::Args) => checkout::run, "Switch HEAD to a branch or commit";
    "export" Export(export::Args) => export::run, "Write every memory as JSON Lines";
    "import" Import(import::Args) => import::run,
        "Read memories from JSON Lines (one commit, all or nothing)";
    "search" Search(search::Args) => search::run, "Ranked search over keys and contents, by words or meaning";
    "recall" Recall(recall::Args) => recall::run,
        "Find the memories that answer a question (LLM picker or lexical)";
    "merge" Merge(merge::Args) => merge::run, "Merge a branch into another";
    "sync-branch" SyncBranch(memory_branches::SyncArgs) => memory_branches::sync_branch,
        "Promote a branch's default-namespace memories into main (inserts and updates)";
    "branch-match" BranchMatch(memory_branches::MatchArgs) => memory_branches::branch_match,
        "Make the memory branch follow the code branch: on, off, status, follow";
    "remote" Remote(remote::RemoteArgs) => remote::remote, "Manage remotes: add, list, remove";
    "push" Push(remote::PushArgs) => remote::push, "Upload a branch to a remote";
    "fetch" Fetch(remote::FetchArgs) => remote::fetch, "Download a remote's branches as REMOTE/BRANCH";
    "pull" Pull(remote::PullArgs) => remote::pull,
        "Fetch, then merge the remote branch into the current branch";
    "clone" Clone(remote::CloneArgs) => remote::clone, "Make a new store from a remote";
    "fsck" Fsck(maintenance::FsckArgs) => maintenance::fsck, "Check the whole store for damage";
    "gc" Gc(maintenance::GcArgs) => maintenance::gc, "Remove unreachable objects";
    "reflog" Reflog(maintenance::ReflogArgs) => maintenance::reflog,
        "Where branches and HEAD have pointed, newest first";
    "log" Log(history::LogArgs) => history::log, "Show commits, newest first";
    "blame" Blame(history::BlameArgs) => history::blame, "Who changed a memory, and when";
    "diff" Diff(history::DiffArgs) => history::diff, "What changed between two revisions";
    "time-travel" TimeTravel(history::TimeTravelArgs) => history::time_travel,
        "Check out a past revision on a new branch";
    "graph" Graph(graph::Args) => graph::run,
        "The memory graph around a key: taxonomy and related keys, degrees, groups";
    "proof" Proof(proof::ProofArgs) => proof::proof, "Print a Merkle proof of a key's value";
    "verify" Verify(proof::VerifyArgs) => proof::verify, "Check a Merkle proof";
    "capture" Capture(capture::Args) => capture::run,
        "Store the durable facts of one conversation turn read on stdin";
    "taxonomy" Taxonomy(taxonomy::Args) => taxonomy::run,
        "The store's taxonomy: init, load FILE, list, show ID, prompt-snippet";
    "mcp" Mcp(mcp::Args) => mcp::run,
        "Serve the store to an agent host over MCP (stdio, or HTTP on loopback)";
    "hook" Hook(hook::Args) => hook::run,
        "Run an agent host's hook (Claude Code, Codex): JSON in, the host's JSON out";
    "ui" Ui(ui::Args) => ui::run,
        "Browse memories, history and provenance in a web browser (loopback)";
    "tui" Tui(tui::Args) => tui::run,
        "Explore memories, history and past revisions in the terminal (read only)";
    "tour" Tour(tour::Args) => tour::run, "Walk through memoir on a throwaway store";
    "watch" Watch(watch::Args) => watch::run,
        "Keep documents (Markdown, text, HTML, PDF) as searchable memories";
    "config" Config(config::Args) => config::run,
        "Read and change settings: the store's config.toml and yours";
    "completions" Completions(shell::CompletionsArgs) => shell::completions,
        "Print a shell's completion script (bash, zsh, fish, powershell, elvish)";
    "man" Man(shell::ManArgs) => shell::man, "Print memoir's manual page (roff)";
}
