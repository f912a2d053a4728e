//! `memoir search QUERY`: ranked search over keys and record contents, by words, by meaning
//! (an embedding model) or both.

use clap::ValueEnum;

use memoir::app::{SearchMode, SearchOutcome, SearchRequest, Sort};

use super::context::{embed_config_from_env, read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

const HELP: &str = "\
Examples:
  memoir search 'postgres migration'
  memoir --json search testing -n work -k 5
  memoir search deploy --keys 'infra.*' --since 2.weeks.ago --sort recency
  memoir search 'release plan' --at main~3

Words are matched after splitting camelCase, snake_case and kebab-case, lower-casing and
stemming; a word of 4+ letters also matches longer words it starts, and one of 5+ letters that
matches nothing also matches near misses. Key segments weigh more than content. No match is
an empty result (exit 0).

Ranked by relevance, the best hits by words are scored again with what records say besides
their words: a conversation turn (`Name: text`) whose speaker the query names counts more, a
turn that asks (ends with `?`) less; a question about time (`when ...`, `what year`, `how
long`) favours records that name a time; a date or month in the query (`in May 2023`,
`2023-05-08`) favours records whose event time falls in it. --explain shows each term.

By meaning: with an embedding model (MEMOIR_EMBED_MODEL: a sentence-transformers directory,
or openai:NAME with MEMOIR_EMBED_BASE_URL), --mode semantic ranks by the cosine of the
query's and each memory's embedding, and --mode hybrid (the default then) adds the two scores:
0.7 x the lexical score over the query's best, 0.3 x the cosine. Memories are embedded on the
first search that needs them; their vectors are kept in the store's cache/.";

/// Order of search hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Best score first
    Relevance,
    /// Newest record first
    Recency,
}

/// How search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// By words (BM25F); needs no model
    Lexical,
    /// By meaning: the cosine of embeddings
    Semantic,
    /// Both, fused (the default with an embedding model)
    Hybrid,
}

impl From<ModeArg> for SearchMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Lexical => SearchMode::Lexical,
            ModeArg::Semantic => SearchMode::Semantic,
            ModeArg::Hybrid => SearchMode::Hybrid,
        }
    }
}

/// Ranked search over keys and contents, by words or meaning
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The words to look for
    pub query: String,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Only keys whose path matches (repeatable; a union)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Most hits
    #[arg(
        short = 'k',
        long = "limit",
        visible_alias = "top",
        default_value_t = 10
    )]
    pub limit: usize,
    #[command(flatten)]
    pub at: AtArg,
    /// Only records at or after this date (ISO date, `yesterday`, `2.days.ago`, ...)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only records at or before this date
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Order of the hits
    #[arg(long, value_enum, default_value_t = SortArg::Relevance)]
    pub sort: SortArg,
    /// Show the terms of each hit's score (lexical, speaker, time, date, question)
    #[arg(long)]
    pub explain: bool,
    /// How to rank [default: hybrid with an embedding model, else lexical]
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[command(flatten)]
    pub branch: BranchArg,
}

impl From<SortArg> for Sort {
    fn from(s: SortArg) -> Self {
        match s {
            SortArg::Relevance => Sort::Relevance,
            SortArg::Recency => Sort::Recency,
        }
    }
}

/// Prints the application's diagnostics on stderr with `-v`.
pub fn print_notes(ctx: &Ctx, notes: &[String]) {
    if ctx.verbose {
        for n in notes {
            eprintln!("memoir: {n}");
        }
    }
}

/// The lines of one hit of `search` or `recall`: `namespace:key (score)`, then the first
/// three lines of its content, indented.
pub fn hit_lines(
    ctx: &Ctx,
    lines: &mut Vec<String>,
    namespace: &str,
    key: &str,
    score: f64,
    content: &str,
) {
    let head = format!("{}:{} ({score:.3})", esc(namespace), esc(key));
    lines.push(ctx.style.info(&head));
    lines.extend(content.lines().take(3).map(|l| format!("  {}", esc(l))));
}

/// Runs `search`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let req = SearchRequest {
        query: args.query,
        namespace: args.namespace,
        keys: args.keys,
        limit: args.limit,
        since: args.since,
        until: args.until,
        sort: args.sort.into(),
        explain: args.explain,
    };
    // A malformed embedding setting fails search (the handle was given only what parsed).
    embed_config_from_env()?;
    let mode = args.mode.map(SearchMode::from);
    let out = ctx
        .app
        .search_in(mode, &req, &read_point(&args.at, &args.branch))?;
    Ok(render(ctx, &out))
}

/// The report of a search (`-v` notes go to stderr).
pub fn render(ctx: &Ctx, out: &SearchOutcome) -> Report {
    print_notes(ctx, &out.notes);
    if let Some(why) = &out.fallback {
        eprintln!("memoir: {}", esc(why));
    }
    let mut lines = Vec::new();
    for h in &out.hits {
        hit_lines(ctx, &mut lines, &h.namespace, &h.key, h.score, &h.content);
        if let Some(e) = &h.explain {
            let parts = match (e.words, e.siblings, e.window, e.parent, e.feedback) {
                (Some(w), Some(s), Some(x), Some(p), Some(f)) => {
                    // Rounded as JSON rounds them: a part that rounds to zero from below is 0.
                    let [w, s, x, p, f] = [w, s, x, p, f].map(|v| (v * 1e6).round() / 1e6 + 0.0);
                    format!(
                        " (words {w:.6} + siblings {s:.6} + window {x:.6} + parent {p:.6} + \
                         feedback {f:.6})"
                    )
                }
                _ => String::new(),
            };
            lines.push(format!(
                "  = lexical {:.6}{parts} x speaker {} x time {} x date {} x question {}",
                e.lexical, e.speaker, e.time, e.date, e.question
            ));
        }
    }
    if out.hits.is_empty() {
        lines.push(ctx.style.warn("no memories match"));
    }
    let mut r = ctx.report(out);
    r.lines = lines;
    r.data = true;
    r
}
