//! `memoir completions SHELL` and `memoir man`: the command line described for shells and
//! for `man`, generated from the same definitions the parser uses, so they cannot drift.

use clap::CommandFactory;

use super::context::Ctx;
use super::output::{CliError, Report};

/// Print a shell's completion script for memoir
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir completions bash > ~/.local/share/bash-completion/completions/memoir\n  memoir completions zsh > \"${fpath[1]}/_memoir\"\n  memoir completions fish > ~/.config/fish/completions/memoir.fish\n  memoir completions powershell >> $PROFILE"
)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Print memoir's manual page (roff; `memoir man | man -l -`)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir man | man -l -\n  memoir man > ~/.local/share/man/man1/memoir.1"
)]
pub struct ManArgs {}

/// Runs `completions`.
pub fn completions(_ctx: &Ctx, args: CompletionsArgs) -> Result<Report, CliError> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "memoir", &mut out);
    Ok(raw(out))
}

/// Runs `man`.
pub fn man(_ctx: &Ctx, _args: ManArgs) -> Result<Report, CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::Cli::command())
        .render(&mut out)
        .map_err(|e| CliError::new(1, format!("cannot write the manual page: {e}")))?;
    Ok(raw(out))
}

/// A report that prints `bytes` as they are, in both modes.
fn raw(bytes: Vec<u8>) -> Report {
    Report {
        raw: Some(String::from_utf8_lossy(&bytes).into_owned()),
        data: true,
        ..Default::default()
    }
}
