//! `memoir capture`: read one conversation turn on stdin, let the model pick out its durable
//! facts, and store them as one commit. The work is [`memoir::Memoir::capture`]; this reads
//! stdin (bounded), checks the model settings and renders the outcome.

use std::io::IsTerminal;

use memoir::app::{read_text, CaptureOutcome, CaptureRequest, Profile, MAX_CONTENT_BYTES};

use super::context::{llm_config_from_env, BranchArg, Ctx, WriteArgs};
use super::output::{esc, esc_line, CliError, Report};

const HELP: &str = "\
Examples:
  printf '[Human] We deploy with make release\\n[Assistant] Noted.' | memoir capture
  echo '[{\"role\":\"user\",\"content\":\"Use pytest\"},{\"role\":\"assistant\",\"content\":\"OK\"}]' \\
    | memoir --json capture --dry-run
  memoir capture --profile assistant < turn.txt

The turn on stdin (at most 16 MiB) is '[Human] ... [Assistant] ...' text, or JSON: a message
{\"role\", \"content\"}, a list of messages, {\"messages\": [...]}, an agent host's transcript
line {\"type\", \"message\"}, or JSON Lines of those (the last turn is taken). The model is
asked once for at most 6 lines 'path<TAB>fact' (or NONE); a reply in any other form stores
nothing (exit 1). Paths must be three plain segments beginning with a category of the store's
taxonomy (else the built-in one, see `memoir taxonomy`); fragments are dropped; facts a stored
memory already says are skipped. What is left is one commit with source `capture`, each fact
at confidence 0.8, appended to a record already at its key (replacing it under
context.current and metrics.turn). Nothing worth keeping is exit 0 with \"captured\": [].
No model configured is exit 1. A turn that looks like it holds a credential is refused (exit
1, the model is not asked) unless --allow-secrets. LLM configuration: as for recall.";

/// Store the durable facts of one conversation turn read on stdin (one commit)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// What kind of agent the turn comes from: coding or assistant
    #[arg(long, value_name = "PROFILE", default_value = "coding", value_parser = parse_profile)]
    pub profile: Profile,
    /// Print what would be stored; store nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Namespace [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// LLM model name
    #[arg(long)]
    pub model: Option<String>,
    /// Capture a turn even if it looks like it holds a credential (refused by default)
    #[arg(long)]
    pub allow_secrets: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    /// Commit author [default: MEMOIR_AUTHOR, GIT_AUTHOR_NAME/EMAIL, git config, USER]
    #[arg(long, value_name = "NAME")]
    pub author: Option<String>,
    /// Who writes it, e.g. an agent id (recorded in the commit and the entries; the source is `capture`)
    #[arg(long, env = "MEMOIR_ACTOR", value_name = "ACTOR")]
    pub actor: Option<String>,
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

/// Runs `capture`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(CliError::invalid(
            "capture reads the turn on stdin; pipe it in (see memoir capture --help)",
        ));
    }
    let turn = read_text(stdin, MAX_CONTENT_BYTES, "the turn from stdin")?;
    llm_config_from_env()?;
    let req = CaptureRequest {
        turn,
        profile: args.profile,
        namespace: args.namespace,
        dry_run: args.dry_run,
        model: args.model,
        allow_secrets: args.allow_secrets,
    };
    let write = WriteArgs {
        author: args.author,
        source: None,
        actor: args.actor,
    };
    let out = ctx.app.capture(&req, &ctx.write_as(&write, &args.branch))?;
    Ok(render(ctx, &out))
}

/// Renders capture's outcome (also the MCP tool's answer).
pub fn render(ctx: &Ctx, out: &CaptureOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out);
    let verb = if out.dry_run {
        "Would capture"
    } else {
        "Captured"
    };
    for f in &out.captured {
        r.lines.push(s.ok(&format!(
            "{verb} {}:{}: {}",
            esc(&out.namespace),
            esc(&f.key),
            esc_line(&f.content)
        )));
    }
    for f in &out.skipped {
        r.lines.push(s.info(&format!(
            "Skipped {}: {} ({})",
            esc(&f.key),
            esc(&f.reason),
            esc(&f.duplicate_of)
        )));
    }
    for d in &out.dropped {
        r.warnings.push(ctx.printer.err.warn(&format!(
            "Dropped {}: {}",
            esc(&d.path),
            esc(&d.reason)
        )));
    }
    if out.captured.is_empty() {
        r.lines
            .push(s.info("Nothing new worth remembering in this turn; nothing stored"));
    }
    if let Some(id) = &out.commit_hash {
        r.lines
            .push(s.info(&format!("Commit {} on {}", &id[..8], esc(&out.branch))));
    }
    r
}
