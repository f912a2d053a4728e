//! `memoir import FILE|-`: read JSON Lines of records and store them in one commit, all or
//! nothing (see [`memoir::Memoir::import`]); this reads the file or stdin and shows progress on
//! a terminal.

use memoir::app::{read_import, ImportRequest};

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{stderr_is_terminal, CliError, Report};

/// Import memories from JSON Lines (one commit; a bad line commits nothing)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir import memories.jsonl\n  memoir export | memoir -s ./copy import -\n  memoir import old.jsonl -n legacy   # namespace for lines without one\n\nEvery line follows the rules of `remember`: valid keys (normalised to NFC), content not blank\nand at most 16 MiB per entry, no member repeated in a line's JSON. A record whose content or\nkey looks like a credential (an API key or token, a private key, password=...) is refused\nwith exit 1, naming its line and the rule that matched, and nothing is imported;\n--allow-secrets imports it on purpose. Input: at most 64 MiB per line, 1 GiB in all.\nRecords already stored as they are are not written again; when nothing changed, nothing is\ncommitted (`changed: 0`)."
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
    req.lines = if args.file == "-" {
        read_import(std::io::stdin(), "stdin")?
    } else {
        let file =
            std::fs::File::open(&args.file).map_err(|e| CliError::input_file(&args.file, &e))?;
        read_import(file, &args.file)?
    };
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
            out.changed,
            id.short(8)
        )),
        None if out.imported > 0 => ctx.style.info(&format!(
            "Nothing changed: the {} memories are already stored as they are",
            out.imported
        )),
        None => ctx.style.info("Nothing to import"),
    };
    Ok(ctx.report(&out).line(line))
}
