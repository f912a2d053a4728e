//! `memoir mcp`: serve the store to an agent host over the Model Context Protocol, on stdio
//! or (`--http ADDR`) over streamable HTTP on a loopback address.
//!
//! [`tools`] maps each tool onto a command's `Args` and `run`, free of any protocol library;
//! [`adapter`] is the one file that speaks `rmcp`. Each tool call runs like one CLI
//! invocation, except that the store stays open while calls keep coming (warm caches, no
//! reopen per call). The LOCK is released between calls: the server closes the store once
//! no call ran for 25 ms, and after 1 s of continuous holding it steps away for 25 ms, so CLI
//! calls from other processes (which wait up to `--lock-timeout`) are never starved, and the
//! next tool call reopens the store and sees their writes. Calls of one server are
//! serialised; a call that meets a store held by another process waits up to
//! `--lock-timeout` and then fails with code 7 (store busy).
//!
//! stdout carries only protocol messages (stdio) or nothing (HTTP); the server's own messages
//! go to stderr. Over HTTP the server binds loopback addresses only: there is no
//! authentication, so anything that can reach the port can read and write the store.

mod adapter;
mod agent_tools;
mod ids;
mod jsonrpc;
mod params;
mod resources;
mod schema;
mod stdio;
pub mod tools;

use std::sync::Arc;

use memoir::Memoir;

use super::context::{Ctx, WriteArgs};
use super::net;
use super::output::{CliError, Report, Style};

const HELP: &str = "\
Examples:
  memoir -s ./mem mcp
  memoir mcp --store ~/.memoir --init    # create the store on first start
  memoir mcp --store ./mem --http 127.0.0.1:8765
  memoir mcp --store ./mem --http 127.0.0.1:0    # any free port; stderr names it

Host configuration (Claude Desktop / Claude Code / Cursor `mcpServers`):
  {\"mcpServers\": {\"memoir\": {\"command\": \"memoir\", \"args\": [\"mcp\", \"--store\", \"/path/to/mem\"]}}}
Over HTTP (server started separately with --http 127.0.0.1:8765):
  {\"mcpServers\": {\"memoir\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:8765/mcp\"}}}

--http serves streamable HTTP at /mcp and accepts loopback addresses only (127.0.0.1, [::1],
localhost): there is no authentication. Once listening it prints
`memoir mcp: listening on http://HOST:PORT/mcp` to stderr (also with -q) and runs until
interrupted (Ctrl-C, SIGTERM). A non-loopback address is a usage error (exit 2).

The store stays open while calls keep coming and its lock is released after 25 ms without a
call (or 1 s of continuous use), so CLI calls from other processes are never starved; the
next tool call sees their writes.";

/// Serve the store over MCP (stdio, or streamable HTTP with --http)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Create the store if it does not exist yet
    #[arg(long)]
    pub init: bool,
    /// Serve streamable HTTP on this loopback address (HOST:PORT; port 0 picks a free one)
    /// instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

/// Runs the server until the host closes stdin (stdio) or the process is interrupted (HTTP).
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    // Checked before anything else: a refused address never opens the store or a port.
    let http = match &args.http {
        Some(addr) => Some((
            addr.as_str(),
            net::loopback_addrs(
                "--http",
                addr,
                "the MCP server has no authentication, so it only serves this machine",
            )?,
        )),
        None => None,
    };
    let mut ctx = ctx.clone();
    // Tool answers carry the JSON of every report, and plain text, never terminal colours.
    ctx.lines_only = false;
    ctx.style = Style::new(false);
    ctx.printer.out = Style::new(false);
    ctx.printer.err = Style::new(false);
    ctx.app = Arc::new(Memoir::open(&ctx.store_path, ctx.app.options().clone()));
    let exists = match ctx.app.check() {
        Ok(()) => true,
        Err(e) if args.init && e.is_not_a_store() => false,
        Err(e) => return Err(e.into()),
    };
    if !exists {
        super::new::run(
            &ctx,
            super::new::Args {
                path: ctx.store_path.clone(),
                taxonomy_builtin: false,
                taxonomy: Vec::new(),
                write: WriteArgs::default(),
            },
        )?;
        if !ctx.quiet {
            eprintln!(
                "memoir mcp: created store at {}",
                ctx.abs_store_path().display()
            );
        }
    }
    let listener = match &http {
        Some((addr, addrs)) => Some(net::bind(addr, addrs)?),
        None => None,
    };
    let store = ctx.abs_store_path();
    let tools = Arc::new(tools::Tools::new(ctx.clone()));
    let served = match listener {
        None => {
            if !ctx.quiet {
                eprintln!("memoir mcp: serving {} over stdio", store.display());
            }
            adapter::serve_stdio(Arc::clone(&tools))
        }
        Some(listener) => {
            let local = listener
                .local_addr()
                .map_err(|e| CliError::invalid(format!("cannot read the bound address: {e}")))?;
            if !ctx.quiet {
                eprintln!("memoir mcp: serving {} over HTTP", store.display());
            }
            // Always printed: with port 0 it is the only way to learn the port.
            adapter::serve_http(Arc::clone(&tools), listener, || {
                eprintln!(
                    "memoir mcp: listening on http://{local}{}",
                    adapter::HTTP_PATH
                );
            })
        }
    };
    tools.close();
    served.map_err(CliError::invalid)?;
    // Nothing more goes to stdout: it belonged to the protocol.
    Ok(Report {
        raw: Some(String::new()),
        ..Report::default()
    })
}
