//! `memoir import FILE|-`: read JSON Lines of records and store them in one commit, all or
//! nothing (see [`memoir::Memoir::import`]); this reads the file or stdin and shows progress on
//! a terminal.

use std::io::Read;

use memoir::app::ImportRequest;

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{stderr_is_terminal, CliError, Report};

/// Import memories from JSON Lines (one commit; a bad line commits nothing)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir import memories.jsonl\n  memoir export | memoir -s ./copy import -\n  memoir import old.jsonl -n legacy   # namespace for lines without one\n\nA record whose content looks like a credential (an API key or token, a private key,\npassword=...) is refused with exit 1, naming its line and the rule that matched, and nothing\nis imported. --allow-secrets imports it on purpose."
)]
pub struct Args {
    /// File of JSON Lines, or - for stdin
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Namespace of records that name none [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Import records even if their content looks like a credential (refused by default)
    #[arg(long)]
    pub allow_secrets: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `import`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let mut req = ImportRequest {
        lines: String::new(),
        namespace: args.namespace,
        allow_secrets: args.allow_secrets,
    };
    req.validate()?;
    if args.file == "-" {
        std::io::stdin()
            .read_to_string(&mut req.lines)
            .map_err(|e| CliError::invalid(format!("cannot read stdin: {e}")))?;
    } else {
        req.lines = std::fs::read_to_string(&args.file)
            .map_err(|e| CliError::invalid(format!("cannot read {}: {e}", args.file)))?;
    }
    let show = stderr_is_terminal() && !ctx.quiet;
    let mut progress = |done: usize, total: usize| {
        if show && ((done - 1).is_multiple_of(256) || done == total) {
            let width = 30;
            let filled = done * width / total;
            eprint!(
                "\r[{}{}] {done}/{total}",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let out = ctx.app.import_with_progress(
        &req,
        &ctx.write_as(&args.write, &args.branch),
        &mut progress,
    )?;
    let line = match &out.commit {
        Some(id) => ctx.style.ok(&format!(
            "Imported {} memories (commit {})",
            out.imported,
            id.short(8)
        )),
        None => ctx.style.info("Nothing to import"),
    };
    Ok(Report::of(&out).line(line))
}
