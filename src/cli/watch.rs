//! `memoir watch ...`: documents on disk kept as memories, one record per chunk.

use std::path::PathBuf;

use memoir::app::{
    MemoirError, WatchAddRequest, WatchFileReport, WatchOutcome, WatchRemoveRequest,
    WatchScanRequest,
};

use super::context::{read_point, AtArg, BranchArg, Ctx, WriteArgs};
use super::output::{esc_line, CliError, Report};
use super::search::print_notes;

const HELP: &str = "\
Examples:
  memoir watch add docs/runbook.md
  memoir watch add manual.pdf -n manuals
  memoir search 'rollback procedure'
  memoir watch scan
  memoir watch status
  memoir watch remove docs/runbook.md --purge

A watched file's chunks are memories at raw.<slug>.<chunk> in namespace `watch` (or -n NS):
the slug comes from the file name, each chunk's name from its first words and the hash of its
text. Chunks break before headings and at paragraph ends, so an edit changes only the chunks
near it; a scan writes only new chunks and deletes only those gone, and a file whose bytes
did not change commits nothing. The watch list is stored in the store (namespace
memoir:watch), versioned like every memory.

Links: `watch add` resolves a symbolic link once and records its target, the path read from
then on. A read never follows a link: a watched path that changed to a link (or whose
directory did) is not read, and scan reports it (\"changed to a link; not read\", exit 1) as
status does (unreadable), so a link swapped in cannot make another file's text a memory.
Only readable regular files are read: a FIFO, socket or device is refused, never waited on.

Formats: Markdown, plain text, HTML and PDF (`memoir watch formats`). A chunk that looks like
a credential is skipped and reported (--allow-secrets stores it). Exit codes: a missing file
or one that is not watched is 2; a directory, a FIFO, socket or device, a file that cannot be
read, a file over 64 MiB, binary data, text that is not UTF-8, an unreadable PDF or a
document without text is 1, and nothing is stored.";

/// Keep documents (Markdown, text, HTML, PDF) as searchable memories
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(subcommand)]
    pub command: WatchCommand,
}

/// The `watch` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum WatchCommand {
    /// Watch a file: store its chunks (one commit)
    #[command(
        after_help = "Examples:\n  memoir watch add notes.md\n  memoir --json watch add paper.pdf -n papers"
    )]
    Add(AddArgs),
    /// List watched files
    #[command(
        after_help = "Examples:\n  memoir watch list\n  memoir --json watch list --at HEAD~3"
    )]
    List(ListArgs),
    /// Bring watched files up to date (only changed chunks are committed)
    #[command(after_help = "Examples:\n  memoir watch scan\n  memoir --json watch scan notes.md")]
    Scan(ScanArgs),
    /// Stop watching a file and delete its keys (--purge: from all history)
    #[command(
        after_help = "Examples:\n  memoir watch remove notes.md\n  memoir watch remove notes.md --purge"
    )]
    Remove(RemoveArgs),
    /// Compare watched files with the disk (writes nothing)
    #[command(after_help = "Examples:\n  memoir watch status\n  memoir --json watch status")]
    Status(ListArgs),
    /// List the formats watch reads
    #[command(after_help = "Examples:\n  memoir watch formats")]
    Formats,
}

/// `watch add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Namespace of its chunks [default: watch]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Store chunks that look like credentials anyway
    #[arg(long)]
    pub allow_secrets: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// `watch scan`.
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// One watched file (path or slug) [default: every watched file]
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// Store chunks that look like credentials anyway
    #[arg(long)]
    pub allow_secrets: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// `watch remove`.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The watched file (path or slug)
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Erase its keys from the whole history of every branch (rewrites commit ids); works
    /// after a plain remove too
    #[arg(long)]
    pub purge: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// `watch list` and `watch status`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `watch`; an error's message is shown on one line (a path may hold a newline).
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    run_command(ctx, args).map_err(|e| {
        let mut e = CliError::from(e);
        if ctx.lines_only {
            e.message = esc_line(&e.message);
        }
        e
    })
}

fn run_command(ctx: &Ctx, args: Args) -> Result<Report, MemoirError> {
    match args.command {
        WatchCommand::Add(a) => {
            let req = WatchAddRequest {
                file: a.file,
                namespace: a.namespace,
                allow_secrets: a.allow_secrets,
            };
            let out = ctx
                .app
                .watch_add(&req, &ctx.write_as(&a.write, &a.branch))?;
            Ok(render(ctx, &out))
        }
        WatchCommand::Scan(a) => {
            let req = WatchScanRequest {
                file: a.file,
                allow_secrets: a.allow_secrets,
            };
            let out = ctx
                .app
                .watch_scan(&req, &ctx.write_as(&a.write, &a.branch))?;
            Ok(render(ctx, &out))
        }
        WatchCommand::Remove(a) => {
            let req = WatchRemoveRequest {
                file: a.file,
                purge: a.purge,
            };
            let out = ctx
                .app
                .watch_remove(&req, &ctx.write_as(&a.write, &a.branch))?;
            print_notes(ctx, &out.notes);
            let line = if out.purged.is_some() {
                esc_line(&out.message)
            } else {
                format!(
                    "Stopped watching {} ({} deleted, commit {})",
                    esc_line(&out.path),
                    count(out.removed, "key"),
                    esc_line(&out.commit_hash[..8])
                )
            };
            Ok(ctx.report(&out).line(ctx.style.ok(&line)))
        }
        WatchCommand::List(a) => {
            let out = ctx.app.watch_list(&read_point(&a.at, &a.branch))?;
            let mut r = ctx.report(&out);
            for f in &out.files {
                r = r.line(format!(
                    "{}  {} ({}, {})",
                    ctx.style.info(&esc_line(&f.prefix)),
                    esc_line(&f.path),
                    f.format.as_str(),
                    count(f.chunks, "chunk")
                ));
            }
            if out.files.is_empty() {
                r = r.line(ctx.style.warn("no files are watched"));
            }
            r.data = true;
            Ok(r)
        }
        WatchCommand::Status(a) => {
            let out = ctx.app.watch_status(&read_point(&a.at, &a.branch))?;
            let mut r = ctx.report(&out);
            for f in &out.files {
                let state = match f.state {
                    "unchanged" => ctx.style.ok(f.state),
                    _ => ctx.style.warn(f.state),
                };
                let why = f
                    .error
                    .as_ref()
                    .map(|e| format!(": {}", esc_line(e)))
                    .unwrap_or_default();
                r = r.line(format!("{state}  {}{why}", esc_line(&f.path)));
            }
            if out.files.is_empty() {
                r = r.line(ctx.style.warn("no files are watched"));
            }
            r.data = true;
            Ok(r)
        }
        WatchCommand::Formats => {
            let out = ctx.app.watch_formats();
            let mut r = ctx.report(&out);
            for f in &out.formats {
                r = r.line(format!(
                    "{:<9} .{}  {}",
                    f.name.as_str(),
                    f.extensions.join(" ."),
                    f.description
                ));
            }
            r.data = true;
            Ok(r)
        }
    }
}

/// The report of an add or a scan: a line per file, then what was committed.
fn render(ctx: &Ctx, out: &WatchOutcome) -> Report {
    let mut r = ctx.report(out);
    for f in &out.files {
        r = r.line(file_line(ctx, f));
        if let Some(link) = &f.link {
            r.warnings.push(ctx.printer.err.warn(&format!(
                "{} is a link: watching {}, the file it names now (a link is resolved only at \
                 add, never followed after)",
                esc_line(link),
                esc_line(&f.path)
            )));
        }
        if !f.skipped.is_empty() {
            let which: Vec<String> = f
                .skipped
                .iter()
                .map(|s| format!("chunk {} ({})", s.chunk, s.rule))
                .collect();
            r.warnings.push(ctx.printer.err.warn(&format!(
                "{}: skipped {} that look like credentials; pass --allow-secrets to store them",
                esc_line(&f.path),
                which.join(", ")
            )));
        }
    }
    if out.files.is_empty() {
        r = r.line(ctx.style.warn("no files are watched"));
    }
    let last = match &out.commit {
        Some(id) => ctx.style.ok(&format!(
            "{} (commit {})",
            esc_line(&out.message),
            id.short(8)
        )),
        None => ctx.style.info("Nothing changed; nothing committed"),
    };
    r.line(last)
}

fn file_line(ctx: &Ctx, f: &WatchFileReport) -> String {
    let what = match f.state {
        "added" => count(f.chunks, "chunk"),
        "changed" => format!("{}, +{} -{}", count(f.chunks, "chunk"), f.added, f.removed),
        "unchanged" => "unchanged".to_string(),
        "missing" => "missing from disk; its keys are kept".to_string(),
        _ => format!("not read: {}", esc_line(f.error.as_deref().unwrap_or("?"))),
    };
    let line = format!("{} → {what} ({})", esc_line(&f.path), esc_line(&f.prefix));
    match f.state {
        "error" => ctx.style.err(&line),
        "missing" => ctx.style.warn(&line),
        _ => ctx.style.ok(&line),
    }
}

/// `1 chunk`, `3 chunks`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
