//! `memoir remember CONTENT [-p PATH ...]`: store a memory under one or more keys, in one
//! commit, combining with existing records by merge policy; without `-p` the configured LLM
//! chooses the keys. The work is [`memoir::Memoir::remember`]; this reads the content from
//! stdin when it is `-`, checks the settings the operation depends on, and renders the outcome.

use memoir::app::{read_text, KeyAction, RememberOutcome, RememberRequest, MAX_CONTENT_BYTES};
use memoir::memory::MergePolicy;

use super::context::{
    facet_cap_from_env, llm_config_from_env, merge_policy_from_env, BranchArg, Ctx, WriteArgs,
};
use super::output::{esc, esc_line, exit, CliError, Report};

const HELP: &str = "\
Examples:
  memoir remember \"prefers pytest over unittest\" -p preferences.coding.testing
  memoir remember \"uses tabs\" -p style.indent -p style.tabs -n codebase
  memoir remember \"deploy on fridays\" -p workflow.deploy --merge-policy append
  memoir --json remember \"x\" -p a.b --merge-policy reject   # exit 4 if a.b exists
  MEMOIR_LLM_BASE_URL=http://127.0.0.1:8080/v1 memoir remember \"prefers dark mode\"

All keys of one command are in one namespace: -n, else the one `ns:` prefix of a -p (bare
paths take it too, and stderr says so), else `default`. Prefixes that disagree with each other
or with -n are an error (exit 1).

Without -p, the configured LLM chooses 1 or 2 three-level paths (it is shown the store's
existing depth-3 paths so it reuses them); the record's confidence and the output's
`confidence` and `reasoning` are the model's (-c overrides the confidence). Its paths are
validated: exactly three lower-case segments of a-z, 0-9, '_', '-' (or an existing path as
it is), in the target namespace. With no LLM configured, or when the model fails or names
no valid path, nothing is stored and the exit code is 1. LLM configuration: as for recall
(see `memoir recall --help`).

Merge policy: --merge-policy, else MEMOIR_MERGE_POLICY, else by key prefix (context.current and
metrics.turn replace; metrics.code and experience append; workflow and behavior llm_merge;
others confidence_gated). llm_merge asks the LLM to merge the existing and new contents: the
merged text becomes the one active entry, earlier entries are kept as superseded. Without an
LLM, or if the model fails, llm_merge appends instead and says so (a warning, and the reason
in `reasoning`); the memory is always stored. Appends keep at most
MEMOIR_FACET_MAX_ENTRIES (default 50; 0 or none = no cap) newest entries.

Content or a key that looks like a credential (an API key or token, a private key,
password=..., a password in a URL) is refused with exit 1, naming the rule that matched, and
nothing is stored: history keeps every version, even after forget. --allow-secrets stores it
on purpose. Content read from stdin (-) is at most 16 MiB.";

/// Store CONTENT under the keys given with -p, or chosen by the LLM (one commit)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The memory's text (`-` reads it from stdin)
    pub content: String,
    /// Key path (`a.b.c` or `ns:a.b.c`); repeat for several keys, all in one namespace; omit to let the LLM choose
    #[arg(short = 'p', long = "path", value_name = "PATH")]
    pub paths: Vec<String>,
    /// Namespace [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// How to combine with an existing memory at the key
    #[arg(long, value_name = "POLICY", value_parser = parse_policy)]
    pub merge_policy: Option<MergePolicy>,
    /// Same as --merge-policy replace
    #[arg(long)]
    pub replace: bool,
    /// Confidence of this memory, 0.0 to 1.0 [default: 1.0 with -p, else the LLM's]
    #[arg(short = 'c', long, value_name = "X")]
    pub confidence: Option<f64>,
    /// LLM model name (for choosing keys and llm_merge)
    #[arg(long)]
    pub model: Option<String>,
    /// Store the content even if it looks like a credential (refused by default)
    #[arg(long)]
    pub allow_secrets: bool,
    /// When what it says happened (ISO date, `yesterday`, `2.days.ago`, ...): the record's
    /// timestamp, which search reads as its event time [default: now]
    #[arg(long, value_name = "DATE")]
    pub event_time: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

fn parse_policy(s: &str) -> Result<MergePolicy, String> {
    s.parse()
        .map_err(|e: memoir::memory::UnknownPolicy| e.to_string())
}

/// Runs `remember`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let mut content = args.content;
    if content == "-" {
        content = read_text(
            std::io::stdin(),
            MAX_CONTENT_BYTES,
            "the content from stdin",
        )?;
    }
    let req = RememberRequest {
        content,
        paths: args.paths,
        namespace: args.namespace,
        merge_policy: args.merge_policy,
        replace: args.replace,
        confidence: args.confidence,
        model: args.model,
        allow_secrets: args.allow_secrets,
        event_time: args.event_time,
    };
    check(ctx, &req)?;
    let out = ctx
        .app
        .remember(&req, &ctx.write_as(&args.write, &args.branch))?;
    Ok(render(ctx, &out))
}

/// The request's own rules first, then the environment settings it depends on (a malformed
/// one fails the write before anything is read).
pub fn check(ctx: &Ctx, req: &RememberRequest) -> Result<(), CliError> {
    req.validate()?;
    merge_policy_from_env()?;
    facet_cap_from_env()?;
    if ctx.app.remember_needs_model(req) {
        llm_config_from_env()?;
    }
    Ok(())
}

/// The report of a write.
pub fn render(ctx: &Ctx, out: &RememberOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out);
    if let Some(c) = &out.classification {
        r.lines.push(s.info(&format!(
            "{} chose {} (confidence {}): {}",
            esc(&c.model),
            esc(&c.paths.join(", ")),
            c.confidence,
            esc_line(&c.reasoning)
        )));
    }
    for k in &out.results {
        let key = esc(&k.key.to_string());
        r.lines.push(match &k.action {
            KeyAction::Stored => s.ok(&format!("Stored {key}")),
            KeyAction::Kept => s.info(&esc(&k.reason)),
            KeyAction::Conflict(c) => s.warn(&format!(
                "Conflict at {key}: it holds {:?} (confidence {}); nothing written there",
                esc_line(&c.existing_content),
                c.existing_confidence
            )),
        });
    }
    if let Some(id) = &out.commit {
        r.lines
            .push(s.info(&format!("Commit {} on {}", id.short(8), esc(&out.branch))));
    }
    for w in &out.warnings {
        r.warnings.push(ctx.printer.err.warn(&esc(w)));
    }
    if r.code == exit::CONFLICT {
        r.warnings.push(ctx.printer.err.warn(&format!(
            "{} key(s) left unchanged by --merge-policy reject",
            out.conflicts.len()
        )));
    }
    r
}
