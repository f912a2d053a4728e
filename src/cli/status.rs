//! `memoir status`: where the store is, which branch, how many commits and memories, and
//! which model is configured.

use memoir::app::{LlmInfo, StatusOutcome};

use super::context::{llm_config_from_env, Ctx};
use super::output::{esc, CliError, Report};

/// Show the store's path, branch, commit and memory counts, namespaces, and the configured LLM
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir -s ./memory status\n  memoir -s ./memory --json status")]
pub struct Args {}

/// The configured model in one line (`status`, `-v`): provider, model, endpoint, whether a
/// key is sent, and how it was chosen.
pub fn llm_line(llm: Option<&LlmInfo>) -> String {
    let Some(l) = llm else {
        return "none (recall is lexical; remember needs -p)".to_string();
    };
    let mut line = if l.provider == "command" {
        format!("command `{}`", l.endpoint)
    } else {
        format!(
            "{} {} at {}, {}",
            l.provider,
            l.model,
            l.endpoint,
            if l.api_key_set {
                "with an API key"
            } else {
                "without an API key"
            }
        )
    };
    if !l.origin.is_empty() {
        line.push_str(&format!(" ({})", l.origin));
    }
    esc(&line)
}

/// Runs `status`.
pub fn run(ctx: &Ctx, _args: Args) -> Result<Report, CliError> {
    Ok(render(ctx, &ctx.app.status()?))
}

/// The report of a status.
pub fn render(ctx: &Ctx, out: &StatusOutcome) -> Report {
    let path = &out.path;
    let s = &ctx.style;
    let mut r = ctx.report(out);
    // A model setting that does not parse is not used; say why.
    if let Err(e) = llm_config_from_env() {
        r.warnings.push(
            ctx.printer
                .err
                .warn(&format!("LLM not configured: {}", esc(&e.message))),
        );
    }
    let llm = format!("  LLM: {}", llm_line(out.llm.as_ref()));
    let Some(head) = out.head else {
        r.lines = vec![s.info(&format!("Store at {path} has no history")), llm];
        return r;
    };
    r.data = true;
    r.lines = vec![
        s.info(&format!("Store: {}", esc(path))),
        format!(
            "  Branch: {}",
            out.branch
                .clone()
                .unwrap_or_else(|| format!("(detached at {})", head.short(8)))
        ),
        format!("  Commits: {}", out.commit_count),
        format!("  Memories: {}", out.memory_count),
        format!(
            "  Namespaces: {}",
            if out.namespaces.is_empty() {
                "(none)".to_string()
            } else {
                out.namespaces.join(", ")
            }
        ),
        llm,
    ];
    r
}
