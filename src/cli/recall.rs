//! `memoir recall QUERY`: the memories that answer a question, picked by an LLM (`single`,
//! `tiered`) or ranked lexically (`lexical`, the default when no LLM is configured). Whatever
//! ran is stamped on the result; when the LLM fails, recall falls back to lexical and says so.

use clap::ValueEnum;

use memoir::app::{MemoirError, RecallMode, RecallOutcome, RecallRequest};
use memoir::key::validate_namespace;

use super::context::{
    embed_config_from_env, llm_config_from_env, read_point, AtArg, BranchArg, Ctx,
};
use super::output::{esc, CliError, Report};
use super::search::{hit_lines, print_notes};

const HELP: &str = "\
Examples:
  memoir recall 'what database do we use?'
  memoir --json recall 'testing preferences' -l 5 --mode lexical
  MEMOIR_LLM_BASE_URL=http://127.0.0.1:8080/v1 memoir recall 'deploy steps' --mode tiered

Modes: lexical (no model), single (one LLM call over the keys), tiered (prefixes, then keys),
semantic (the cosine of embeddings), hybrid (words and meaning fused; see `search --help`).
Default: single when an LLM is configured, else hybrid when an embedding model is
(MEMOIR_EMBED_MODEL), else lexical. Without the model a mode needs, recall is lexical and
names `fellback_from`. LLM configuration:
  MEMOIR_LLM_PROVIDER=openai|anthropic|command (else inferred, in this order:)
  MEMOIR_LLM_COMMAND='claude -p'   prompt on stdin, answer on stdout
  MEMOIR_LLM_BASE_URL, OPENAI_BASE_URL, OPENAI_API_KEY   OpenAI-compatible chat completions
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   Anthropic messages
  --model / MEMOIR_LLM_MODEL, MEMOIR_LLM_TIMEOUT (seconds, default 30)
MEMOIR_LLM_BASE_URL wins over OPENAI_BASE_URL and ANTHROPIC_BASE_URL; base URLs work with or
without /v1; without an API key none is sent (local servers). `memoir status` and `-v` say
which model is used and why.
The model must answer with the JSON object the prompt asks for; if it fails or answers
anything else, recall answers lexically and the result names `fellback_from` and why.";

/// How recall chooses memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Ranked lexical search, no model
    Lexical,
    /// One LLM call over the keys
    Single,
    /// LLM picks prefixes, then keys
    Tiered,
    /// Ranked by meaning (an embedding model)
    Semantic,
    /// Ranked by words and meaning, fused (an embedding model)
    Hybrid,
}

/// Find the memories that answer a question
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The question
    pub query: String,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Most memories returned
    #[arg(short = 'l', long = "limit", default_value_t = 10)]
    pub limit: usize,
    /// How to choose
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// LLM model name
    #[arg(long)]
    pub model: Option<String>,
    /// Drop memories scoring below this
    #[arg(long)]
    pub threshold: Option<f64>,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

impl From<ModeArg> for RecallMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Lexical => RecallMode::Lexical,
            ModeArg::Single => RecallMode::Single,
            ModeArg::Tiered => RecallMode::Tiered,
            ModeArg::Semantic => RecallMode::Semantic,
            ModeArg::Hybrid => RecallMode::Hybrid,
        }
    }
}

/// What recall checks before reading: the namespace, and the model settings (a malformed
/// one fails recall; the handle was given only what parsed).
pub fn check(namespace: Option<&str>) -> Result<(), CliError> {
    if let Some(ns) = namespace {
        validate_namespace(ns).map_err(MemoirError::from)?;
    }
    llm_config_from_env()?;
    embed_config_from_env()?;
    Ok(())
}

/// Runs `recall`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    check(args.namespace.as_deref())?;
    let req = RecallRequest {
        query: args.query,
        namespace: args.namespace,
        limit: args.limit,
        mode: args.mode.map(RecallMode::from),
        model: args.model,
        threshold: args.threshold,
    };
    let out = ctx.app.recall(&req, &read_point(&args.at, &args.branch))?;
    Ok(render(ctx, &out))
}

/// The report of a recall (`-v` notes go to stderr).
pub fn render(ctx: &Ctx, out: &RecallOutcome) -> Report {
    print_notes(ctx, &out.notes);
    let s = &ctx.style;
    let mut lines = Vec::new();
    if let Some(reason) = &out.metadata.fallback_reason {
        lines.push(s.warn(&format!(
            "LLM recall unavailable ({}); answered lexically",
            esc(reason)
        )));
    }
    for m in &out.memories {
        let score = m.relevance_score;
        hit_lines(ctx, &mut lines, &m.namespace, &m.path, score, &m.content);
    }
    if out.memories.is_empty() {
        lines.push(s.warn(&format!(
            "no memories found ({} recall)",
            out.metadata.mode.name()
        )));
    }
    let mut r = ctx.report(out);
    r.lines = lines;
    r.data = true;
    r
}
