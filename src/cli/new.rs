//! `memoir new PATH`: create a store and its first commit.

use std::path::PathBuf;

use serde_json::{json, Value};

use memoir::app::read_text;
use memoir::memory::taxonomy::MAX_DOCUMENT_BYTES;
use memoir::Memoir;

use super::context::{expand_home, BranchArg, Ctx, WriteArgs};
use super::output::{esc, CliError, Report};

/// Create a store (refuses a non-empty directory that is not a store)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir new ./memory\n  memoir --json new ~/.memoir/agent-1\n  memoir new ./memory --taxonomy-builtin -t team.md\n\nThe store's directory also gets an empty git repository (.git), which host plugins\nlook for; memoir never reads it. --taxonomy-builtin writes the built-in taxonomy, -t loads\na taxonomy document (several: the last is the store's), each in a commit after the first;\nJSON `taxonomy_loaded` says what was loaded."
)]
pub struct Args {
    /// Directory to create the store in (created if missing; must be empty; a leading `~/` is
    /// the home directory)
    #[arg(value_parser = |s: &str| Ok::<_, String>(expand_home(s)))]
    pub path: PathBuf,
    /// Write the built-in taxonomy into the new store
    #[arg(long)]
    pub taxonomy_builtin: bool,
    /// Load a taxonomy document (markdown) into the new store; repeatable
    #[arg(short = 't', long = "taxonomy", value_name = "FILE")]
    pub taxonomy: Vec<PathBuf>,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `new`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let who = ctx.write_as(&args.write, &BranchArg::default());
    // The documents are read first: a missing one (exit 2) leaves no store behind.
    let mut documents = Vec::new();
    for file in &args.taxonomy {
        let what = format!("taxonomy file {}", file.display());
        let f = std::fs::File::open(file).map_err(|e| CliError::input_file(&what, &e))?;
        documents.push((file, read_text(f, MAX_DOCUMENT_BYTES, &what)?));
    }
    let (app, out) = Memoir::create(&args.path, ctx.app.options().clone(), &who)?;
    let line = ctx
        .style
        .ok(&format!("{} (commit {})", out.message, out.commit.short(8)));
    let mut report = ctx.report(&out).line(line);
    if !args.taxonomy_builtin && documents.is_empty() {
        return Ok(report);
    }
    let mut files = Vec::new();
    let mut name = None;
    if args.taxonomy_builtin {
        let t = app.taxonomy_init(true, &who)?;
        report.lines.push(ctx.style.info(&esc(&t.message)));
        name = Some(t.name);
    }
    for (file, text) in &documents {
        let t = app.taxonomy_load(text, &who)?;
        report.lines.push(ctx.style.info(&esc(&t.message)));
        files.push(file.display().to_string());
        name = Some(t.name);
    }
    if let Value::Object(m) = &mut report.json {
        m.insert(
            "taxonomy_loaded".into(),
            json!({"builtin": args.taxonomy_builtin, "files": files, "taxonomy": name}),
        );
    }
    Ok(report)
}
