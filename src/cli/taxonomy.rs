//! `memoir taxonomy init|load FILE|list|show ID|prompt-snippet`: the categories the store
//! files memories under, kept in the store itself (namespace `memoir:taxonomy`, versioned
//! like every memory). The work is [`memoir::Memoir`]'s `taxonomy_*` methods; this reads the
//! file and renders the outcomes.

use memoir::app::{
    read_text, TaxonomyListOutcome, TaxonomyShowOutcome, TaxonomySnippetOutcome,
    TaxonomyWriteOutcome,
};
use memoir::memory::taxonomy::MAX_DOCUMENT_BYTES;

use super::context::{read_point, AtArg, BranchArg, Ctx, WriteArgs};
use super::output::{esc, esc_line, CliError, Report};

const HELP: &str = "\
Examples:
  memoir taxonomy init                      # write the built-in general taxonomy
  memoir taxonomy load ./my-taxonomy.md     # make a document's taxonomy the store's
  memoir taxonomy list
  memoir taxonomy show debugging
  memoir taxonomy prompt-snippet            # the block the classifier and capture show a model
  memoir blame -n memoir:taxonomy debugging # who changed a category, and when

The taxonomy lives in the store as ordinary records in the namespace memoir:taxonomy (one per
category, plus _taxonomy with its name), so --at, log, diff and blame work on it. A new store
has none: until `init` or `load`, `remember` without -p prompts as before, and `capture` uses
the built-in taxonomy without storing it (list, show and prompt-snippet then show the built-in
one, with \"stored\": false). Its document format is in docs/commands.md (\"Taxonomy\").";

/// The store's taxonomy: write the built-in one, load one, list, show, print its prompt block
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with the taxonomy.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Write the built-in general taxonomy into the store (one commit)
    Init {
        /// Replace a different taxonomy the store already has
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        branch: BranchArg,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Make the taxonomy of a markdown document the store's (one commit; `-` reads stdin)
    Load {
        /// The document (markdown with front matter, at most 64 KiB)
        #[arg(value_name = "FILE")]
        file: String,
        #[command(flatten)]
        branch: BranchArg,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// List the categories of the taxonomy in effect
    List {
        #[command(flatten)]
        at: AtArg,
        #[command(flatten)]
        branch: BranchArg,
    },
    /// Show one category in full: description, topics, examples
    Show {
        /// The category id
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        at: AtArg,
        #[command(flatten)]
        branch: BranchArg,
    },
    /// Print the block the classifier and capture show a model
    PromptSnippet {
        #[command(flatten)]
        at: AtArg,
        #[command(flatten)]
        branch: BranchArg,
    },
}

/// Runs `taxonomy`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    match args.action {
        Action::Init {
            force,
            branch,
            write,
        } => {
            let out = ctx
                .app
                .taxonomy_init(force, &ctx.write_as(&write, &branch))?;
            Ok(written(ctx, &out))
        }
        Action::Load {
            file,
            branch,
            write,
        } => {
            let text = if file == "-" {
                read_text(
                    std::io::stdin(),
                    MAX_DOCUMENT_BYTES,
                    "the taxonomy from stdin",
                )?
            } else {
                let f = std::fs::File::open(&file)
                    .map_err(|e| CliError::input_file(&format!("taxonomy file {file}"), &e))?;
                read_text(f, MAX_DOCUMENT_BYTES, &format!("taxonomy file {file}"))?
            };
            let out = ctx
                .app
                .taxonomy_load(&text, &ctx.write_as(&write, &branch))?;
            Ok(written(ctx, &out))
        }
        Action::List { at, branch } => Ok(list(
            ctx,
            &ctx.app.taxonomy_list(&read_point(&at, &branch))?,
        )),
        Action::Show { id, at, branch } => Ok(show(
            ctx,
            &ctx.app.taxonomy_show(&id, &read_point(&at, &branch))?,
        )),
        Action::PromptSnippet { at, branch } => Ok(snippet(
            ctx,
            &ctx.app.taxonomy_snippet(&read_point(&at, &branch))?,
        )),
    }
}

fn written(ctx: &Ctx, out: &TaxonomyWriteOutcome) -> Report {
    let s = &ctx.style;
    match &out.commit_hash {
        Some(id) => {
            ctx.report(out)
                .line(s.ok(&format!("{} (commit {})", esc(&out.message), &id[..8])))
        }
        None => ctx.report(out).line(s.info(&esc(&out.message))),
    }
}

fn origin(stored: bool) -> &'static str {
    if stored {
        "stored in the store"
    } else {
        "built in, not stored: `memoir taxonomy init` writes it"
    }
}

/// Renders `taxonomy list`.
pub fn list(ctx: &Ctx, out: &TaxonomyListOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out).line(s.bold(&format!(
        "Taxonomy {} ({})",
        esc(&out.name),
        origin(out.stored)
    )));
    r.data = true;
    let width = out.categories.iter().map(|c| c.id.len()).max().unwrap_or(0);
    for c in &out.categories {
        r.lines.push(format!(
            "  {:<width$}  {}",
            esc(&c.id),
            esc_line(&c.description)
        ));
    }
    r
}

/// Renders `taxonomy show`.
pub fn show(ctx: &Ctx, out: &TaxonomyShowOutcome) -> Report {
    let c = &out.category;
    let mut r = ctx.report(out).line(ctx.style.bold(&format!(
        "{} (taxonomy {}, {})",
        esc(&c.id),
        esc(&out.taxonomy),
        origin(out.stored)
    )));
    r.data = true;
    r.lines.push(esc_line(&c.description));
    if !c.topics.is_empty() {
        r.lines.push(String::new());
        r.lines.push("Topics:".into());
        for t in &c.topics {
            r.lines
                .push(format!("- {}: {}", esc(&t.name), esc_line(&t.description)));
        }
    }
    if !c.examples.is_empty() {
        r.lines.push(String::new());
        r.lines.push("Examples:".into());
        for e in &c.examples {
            r.lines
                .push(format!("- {}: {}", esc(&e.path), esc_line(&e.text)));
        }
    }
    r
}

fn snippet(ctx: &Ctx, out: &TaxonomySnippetOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    r.lines = out.snippet.lines().map(esc_line).collect();
    r
}
