//! `memoir tui`: a read-only, keyboard-driven explorer of a store in the terminal (usable
//! over SSH): the key tree with exact counts, a memory with its entries and blame, the log
//! with a commit's changes and patches, search, and reading any branch or past revision.
//! It is a face like the others: every screen is a `Memoir` call the command line and the
//! web interface make too, and nothing here writes.
//!
//! [`state`] holds what is shown and loads it; [`keys`] maps key presses onto it; [`draw`]
//! draws it with ratatui.

mod draw;
mod keys;
mod state;

use std::io::IsTerminal;

use ratatui::crossterm::event::{self, Event, KeyEventKind};

use super::context::Ctx;
use super::output::{CliError, Report};

const HELP: &str = "\
Examples:
  memoir tui
  memoir -s ./mem tui
  ssh host -t memoir -s /srv/mem tui

Keys: arrows or j/k move, Enter opens, Backspace/Esc go back, 1 tree, 2 log, / search,
r read at a revision (HEAD~3, a commit id, main@{yesterday}), b read a branch, H back to
HEAD, n next namespace, [ ] page a large level, ? all keys, q quit.

Read only: the store is opened for each read and closed again, so agents keep writing while
it runs (press r and Enter, or switch screens, to see their writes). Needs a terminal on
stdin and stdout (exit 1 otherwise). See docs/tui.md.";

/// Explore the store in the terminal (read only)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {}

/// Runs the interface until `q`.
pub fn run(ctx: &Ctx, _args: Args) -> Result<Report, CliError> {
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(CliError::invalid(
            "memoir tui needs a terminal on stdin and stdout",
        ));
    }
    // A store that cannot be read is reported before the screen changes.
    ctx.app.check()?;
    let mut app = state::App::new(&ctx.app);
    let mut terminal = ratatui::try_init().map_err(|e| CliError::invalid(e.to_string()))?;
    let result = (|| -> std::io::Result<()> {
        while !app.quit {
            terminal.draw(|f| draw::draw(f, &app))?;
            if let Event::Key(k) = event::read()? {
                if k.kind == KeyEventKind::Press {
                    keys::press(&mut app, k);
                }
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result.map_err(|e| CliError::invalid(e.to_string()))?;
    Ok(Report {
        raw: Some(String::new()),
        ..Report::default()
    })
}
