//! `memoir ui`: a web interface on the store, served by this binary on a loopback address:
//! the page and its assets (embedded at build time) and a JSON API whose answers are the
//! operations' outcome JSON.
//!
//! [`server`] speaks HTTP and holds the store; [`api`] maps routes onto `Memoir`
//! operations; [`params`] reads query strings and bodies; [`security`] checks `Host`,
//! `Origin` and the launch token; [`assets`] holds the page.

mod api;
mod assets;
mod params;
mod security;
mod server;

use std::sync::Arc;

use memoir::Memoir;

use super::context::Ctx;
use super::net;
use super::output::{CliError, Report, Style};

const HELP: &str = "\
Examples:
  memoir -s ./mem ui
  memoir ui --store ./mem --addr 127.0.0.1:8766 --open
  memoir ui --store ./mem --addr 127.0.0.1:0    # any free port; stderr names it

Serves the interface at http://ADDR/ and a JSON API under /api/ (see docs/web-interface.md) on
a loopback address only (127.0.0.1, [::1], localhost); any other address is a usage error
(exit 2) before anything listens. Once listening it prints
`memoir ui: listening on http://HOST:PORT/` to stderr (also with -q) and runs until
interrupted (Ctrl-C, SIGTERM).

Requests must name this machine in Host and, from a browser, come from the served page
(Origin). Writes (POST) also need the token written into the served page, made anew at each
start, so pages of other sites cannot write. Writes are signed like the command line's
(MEMOIR_AUTHOR, MEMOIR_SOURCE, MEMOIR_ACTOR).

The store stays open while requests keep coming and its lock is released after 25 ms
without one (or 1 s of continuous use), so CLI writes from agents proceed; the next request
sees them.";

/// Browse the store's memories, history and provenance in a web browser
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Loopback address to serve on (HOST:PORT; port 0 picks a free one)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8766")]
    pub addr: String,
    /// Open the interface in the default browser once listening
    #[arg(long)]
    pub open: bool,
}

/// Serves the interface until the process is interrupted.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    // Checked before anything else: a refused address never opens the store or a port.
    let addrs = net::loopback_addrs(
        "--addr",
        &args.addr,
        "the interface serves this machine only",
    )?;
    let mut ctx = ctx.clone();
    // Answers carry the JSON of every report.
    ctx.lines_only = false;
    ctx.style = Style::new(false);
    ctx.printer.out = Style::new(false);
    ctx.printer.err = Style::new(false);
    let mut options = ctx.app.options().clone();
    options.keep_open = true;
    ctx.app = Arc::new(Memoir::open(&ctx.store_path, options));
    ctx.app.check()?;
    let listener = net::bind(&args.addr, &addrs)?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::invalid(format!("cannot read the bound address: {e}")))?;
    let url = format!("http://{local}/");
    if !ctx.quiet {
        eprintln!(
            "memoir ui: serving {} (Ctrl-C stops)",
            ctx.abs_store_path().display()
        );
    }
    let shared = Arc::new(server::Shared::new(
        ctx.clone(),
        security::new_token(),
        local.port(),
    ));
    server::serve(shared, listener, || {
        // Always printed: with port 0 it is the only way to learn the port.
        eprintln!("memoir ui: listening on {url}");
        if args.open {
            open_browser(&url);
        }
    })
    .map_err(CliError::invalid)?;
    Ok(Report {
        raw: Some(String::new()),
        ..Report::default()
    })
}

/// Asks the desktop to open `url`; failing that, says so (the URL is printed anyway).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        // Reaped on a thread of its own so it leaves no zombie behind.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("memoir ui: cannot open a browser ({opener}: {e}); open {url}"),
    }
}
