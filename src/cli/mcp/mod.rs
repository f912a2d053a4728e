//! `memoir mcp`: serve the store to an agent host over the Model Context Protocol (stdio).
//!
//! [`tools`] maps each tool onto a command's `Args` and `run`, free of any protocol library;
//! [`adapter`] is the one file that speaks `rmcp`. Each tool call runs like one CLI
//! invocation, except that the store stays open while calls keep coming (warm caches, no
//! reopen per call). The LOCK is released between calls: the server closes the store once
//! no call ran for 50 ms, and after 1 s of continuous holding it steps away for 25 ms, so CLI
//! calls from other processes (which wait up to `--lock-timeout`) are never starved, and the
//! next tool call reopens the store and sees their writes. Calls of one server are
//! serialised; a call that meets a store held by another process waits up to
//! `--lock-timeout` and then fails with code 7 (store busy).
//!
//! stdout carries only protocol messages; the server's own messages go to stderr.

mod adapter;
pub mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use memoir::store::{Store, StoreError};

use super::context::{Ctx, WriteArgs};
use super::output::{CliError, Report, Style};

const HELP: &str = "\
Examples:
  memoir -s ./mem mcp
  memoir mcp --store ./mem --init        # create the store on first start

Host configuration (Claude Desktop / Claude Code / Cursor `mcpServers`):
  {\"mcpServers\": {\"memoir\": {\"command\": \"memoir\", \"args\": [\"mcp\", \"--store\", \"/path/to/mem\"]}}}

The store stays open while calls keep coming and its lock is released after 50 ms without a
call (or 1 s of continuous use), so CLI calls from other processes are never starved; the
next tool call sees their writes.";

/// Serve the store over MCP (stdio)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Store directory (overrides -s and MEMOIR_STORE)
    #[arg(long = "store", value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Create the store if it does not exist yet
    #[arg(long)]
    pub init: bool,
}

/// Runs the server until the host closes stdin.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let mut ctx = ctx.clone();
    if let Some(p) = args.store {
        ctx.store_path = p;
    }
    // Tool answers carry plain text, never terminal colours.
    ctx.style = Style::new(false);
    ctx.printer.out = Style::new(false);
    ctx.printer.err = Style::new(false);
    let exists = match Store::open(&ctx.store_path, &ctx.open_options()) {
        Ok(_) => true,
        Err(StoreError::NotAStore { .. }) if args.init => false,
        Err(e) => return Err(e.into()),
    };
    if !exists {
        super::new::run(
            &ctx,
            super::new::Args {
                path: ctx.store_path.clone(),
                write: WriteArgs::default(),
            },
        )?;
        if !ctx.quiet {
            eprintln!(
                "memoir mcp: created store at {}",
                ctx.abs_store_path().display()
            );
        }
    } else {
        // Opened only to check; a store that is not initialised is reported as the CLI does.
        drop(ctx.open_repo()?);
    }
    if !ctx.quiet {
        eprintln!(
            "memoir mcp: serving {} over stdio",
            ctx.abs_store_path().display()
        );
    }
    let tools = Arc::new(tools::Tools::new(ctx));
    let served = adapter::serve_stdio(Arc::clone(&tools));
    tools.close();
    served.map_err(CliError::invalid)?;
    // Nothing more goes to stdout: it belonged to the protocol.
    Ok(Report {
        raw: Some(String::new()),
        ..Report::default()
    })
}
