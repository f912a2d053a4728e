//! `memoir import FILE|-`: read JSON Lines of records and store them in one commit, all or
//! nothing. Each line is a record in the schema 2 shape (as `export` writes) or the older
//! schema 1 shape (`content`, `confidence`, `timestamp`); an imported record replaces the
//! one at its key; when a key appears on several lines, the last line wins.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::{json, Value};

use memoir::key::{validate_namespace, Key, DEFAULT_NAMESPACE};
use memoir::memory::Record;
use memoir::prolly::Edit;

use super::context::{commit_to, write_target, BranchArg, Ctx, WriteArgs};
use super::output::{stderr_is_terminal, CliError, Report};

/// Import memories from JSON Lines (one commit; a bad line commits nothing)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir import memories.jsonl\n  memoir export | memoir -s ./copy import -\n  memoir import old.jsonl -n legacy   # namespace for lines without one"
)]
pub struct Args {
    /// File of JSON Lines, or - for stdin
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Namespace of records that name none [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Parses JSON Lines into records keyed by encoded key (last line wins). Blank lines are
/// skipped; any other bad line is an error naming its number.
pub fn parse_lines(
    text: &str,
    default_ns: &str,
    now: f64,
) -> Result<BTreeMap<Vec<u8>, Record>, CliError> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            CliError::invalid(format!("line {n}: invalid JSON: {e}; nothing imported"))
        })?;
        let rec = Record::from_json(&v, default_ns, now)
            .map_err(|e| CliError::invalid(format!("line {n}: {e}; nothing imported")))?;
        let key = Key::new(&rec.namespace, &rec.key)?;
        out.insert(key.encode(), rec);
    }
    Ok(out)
}

/// Runs `import`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let ns = args.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    validate_namespace(ns)?;
    let mut text = String::new();
    if args.file == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::invalid(format!("cannot read stdin: {e}")))?;
    } else {
        text = std::fs::read_to_string(&args.file)
            .map_err(|e| CliError::invalid(format!("cannot read {}: {e}", args.file)))?;
    }
    let records = parse_lines(&text, ns, ctx.clock.now())?;
    let count = records.len();

    let repo = ctx.open_repo()?;
    let target = write_target(&repo, args.branch.branch.as_deref())?;
    let progress = stderr_is_terminal() && !ctx.quiet && count > 0;
    let mut edits = Vec::with_capacity(count);
    for (i, (key, rec)) in records.iter().enumerate() {
        let id = repo.objects().write(&rec.to_blob()?)?;
        edits.push(Edit::Put(key.clone(), id));
        if progress && (i % 256 == 0 || i + 1 == count) {
            let width = 30;
            let done = (i + 1) * width / count;
            eprint!(
                "\r[{}{}] {}/{count}",
                "#".repeat(done),
                " ".repeat(width - done),
                i + 1
            );
        }
    }
    if progress {
        eprintln!();
    }
    let message = format!("Import {count} memories");
    let (hash, date) = if count == 0 {
        (None, None)
    } else {
        let sig = ctx.signature(&args.write);
        let (id, date) = commit_to(&repo, &target, edits, &sig, &message)?;
        (Some(id.to_hex()), Some(date))
    };
    drop(repo);
    let line = match &hash {
        Some(h) => ctx
            .style
            .ok(&format!("Imported {count} memories (commit {})", &h[..8])),
        None => ctx.style.info("Nothing to import"),
    };
    Ok(Report::new(json!({
        "success": true,
        "imported": count,
        "branch": target.branch,
        "commit_hash": hash,
        "commit_date": date,
        "message": if count == 0 { "Nothing to import".to_string() } else { message },
    }))
    .line(line))
}
