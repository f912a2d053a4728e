//! `memoir search QUERY`: ranked lexical search over keys and record contents, no model.

use clap::ValueEnum;
use serde_json::{json, Value};

use memoir::glob::KeyGlobs;
use memoir::key::validate_namespace;
use memoir::object::ObjectId;
use memoir::recall::{cache_path, load_cache, sync_loaded, Hit, LexicalIndex, Query, Sort};
use memoir::repo::revision::parse_date;
use memoir::repo::{Head, Repo};

use super::context::{open_read, AtArg, BranchArg, Ctx};
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
an empty result (exit 0).";

/// Order of search hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Best score first
    Relevance,
    /// Newest record first
    Recency,
}

/// Ranked lexical search over keys and contents
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
    #[command(flatten)]
    pub branch: BranchArg,
}

/// What a lexical search needs besides the query text.
pub struct Scope {
    pub namespace: Option<String>,
    pub globs: KeyGlobs,
    pub since: Option<f64>,
    pub until: Option<f64>,
    pub sort: Sort,
}

/// `index` (as loaded from the cache) brought to `root`, synced and cached as a side effect
/// outside the hashed state.
fn synced(
    ctx: &Ctx,
    repo: &Repo,
    root: &ObjectId,
    index: LexicalIndex,
) -> Result<LexicalIndex, CliError> {
    let (index, _stats, save_error) = sync_loaded(
        index,
        &ctx.abs_store_path(),
        repo.tree(),
        repo.objects(),
        root,
    )?;
    if let (Some(e), true) = (save_error, ctx.verbose) {
        eprintln!("memoir: index cache not saved: {e}");
    }
    Ok(index)
}

/// The cached index, and whether it reflects HEAD as of the store's last close (see
/// `Repo::resting_head`): a read at HEAD then needs neither the store nor its lock. Not at
/// rest when that is not known, or the read is at another revision or branch.
fn cached(ctx: &Ctx, at: &AtArg, branch: &BranchArg) -> (LexicalIndex, bool) {
    let index = load_cache(&cache_path(&ctx.abs_store_path()));
    if ctx.holds() || at.at.is_some() {
        return (index, false);
    }
    let at_rest = Repo::resting_head(&ctx.abs_store_path()).is_some_and(|rest| {
        branch
            .branch
            .as_ref()
            .is_none_or(|b| rest.head == Head::Branch(b.clone()))
            && index.root() == Some(&rest.root)
    });
    (index, at_rest)
}

/// The lexical index at the revision a read looks at (`--at`, `--branch`, else HEAD): the
/// cached one when it reflects HEAD at rest, else brought there from the store (whose handle
/// is dropped before this returns). Each hit carries its record's content.
pub fn index_for_read(ctx: &Ctx, at: &AtArg, branch: &BranchArg) -> Result<LexicalIndex, CliError> {
    let (index, at_rest) = cached(ctx, at, branch);
    if at_rest {
        if ctx.verbose {
            eprintln!("memoir: answered from the index of HEAD as of the store's last close");
        }
        return Ok(index);
    }
    let (repo, _, root) = open_read(ctx, at, branch)?;
    synced(ctx, &repo, &root, index)
}

/// Runs a lexical search on `index`.
pub fn lexical(index: &LexicalIndex, text: &str, scope: &Scope, limit: usize) -> Vec<Hit> {
    index.search(&Query {
        text,
        namespace: scope.namespace.as_deref(),
        globs: (!scope.globs.is_all()).then_some(&scope.globs),
        since: scope.since,
        until: scope.until,
        limit,
        sort: scope.sort,
    })
}

/// Rounds a score for output (stable text, no float noise).
pub fn round_score(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

/// Runs `search`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let timer = ctx.clock.timer();
    if let Some(ns) = &args.namespace {
        validate_namespace(ns)?;
    }
    let now = ctx.clock.now_secs();
    let since = args
        .since
        .as_deref()
        .map(|d| parse_date(d, now))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|d| parse_date(d, now))
        .transpose()?;
    let scope = Scope {
        namespace: args.namespace.clone(),
        globs: KeyGlobs::new(&args.keys)?,
        since: since.map(|t| t as f64),
        until: until.map(|t| t as f64),
        sort: match args.sort {
            SortArg::Relevance => Sort::Relevance,
            SortArg::Recency => Sort::Recency,
        },
    };
    let index = index_for_read(ctx, &args.at, &args.branch)?;
    let hits = lexical(&index, &args.query, &scope, args.limit);
    let mut out = Vec::with_capacity(hits.len());
    let mut lines = Vec::new();
    for h in &hits {
        let content = &h.content;
        lines.push(ctx.style.info(&format!(
            "{}:{} ({:.3})",
            esc(&h.namespace),
            esc(&h.path),
            h.score
        )));
        for l in content.lines().take(3) {
            lines.push(format!("  {}", esc(l)));
        }
        out.push(json!({
            "key": h.path,
            "namespace": h.namespace,
            "score": round_score(h.score),
            "content": content,
        }));
    }
    if hits.is_empty() {
        lines.push(ctx.style.warn("no memories match"));
    }
    let json = json!({
        "success": true,
        "query": args.query,
        "mode": "lexical",
        "hits": Value::Array(out),
        "count": hits.len(),
        "timing_ms": timer.ms(),
    });
    let mut r = Report::new(json);
    r.lines = lines;
    r.data = true;
    Ok(r)
}
