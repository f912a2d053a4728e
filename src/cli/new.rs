//! `memoir new PATH`: create a store and its first commit.

use std::path::PathBuf;

use serde_json::json;

use memoir::repo::Repo;
use memoir::store::{Store, StoreError};

use super::context::{absolute, Ctx, WriteArgs};
use super::output::{CliError, Report};

/// Message of a store's first commit.
pub const INIT_MESSAGE: &str = "Initialize memoir store";

/// Create a store (refuses a non-empty directory that is not a store)
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir new ./memory\n  memoir --json new ~/.memoir/agent-1")]
pub struct Args {
    /// Directory to create the store in (created if missing; must be empty)
    pub path: PathBuf,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `new`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let store = Store::create(&args.path, &ctx.open_options()).map_err(|e| match e {
        StoreError::NotEmpty { .. } | StoreError::AlreadyExists { .. } => {
            CliError::invalid(e.to_string())
        }
        other => other.into(),
    })?;
    let sig = ctx.signature(&args.write);
    let repo = Repo::init(store, &sig, INIT_MESSAGE)?;
    let head = repo.head_commit()?;
    drop(repo);
    let abs = absolute(&args.path);
    let shown = abs.display().to_string();
    let message = format!("Created store at {shown}");
    Ok(
        Report::new(json!({"success": true, "message": message, "path": shown})).line(
            ctx.style
                .ok(&format!("{message} (commit {})", head.short(8))),
        ),
    )
}
