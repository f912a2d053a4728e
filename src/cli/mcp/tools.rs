//! The MCP tools, free of any protocol library: each tool's arguments (a serde struct whose
//! JSON Schema is the tool's input schema), the mapping onto the command's `Args`, and the
//! call of the command's `run`. The answer is the command's [`Report`] JSON (exactly what
//! `memoir --json` prints) plus a short text rendering; a failure carries the CLI's message
//! and exit code.
//!
//! Every call runs a command as one CLI invocation does; the store it opens comes from a
//! `StoreHold` that keeps it open while calls keep coming and closes it (releasing the
//! LOCK) when idle. Calls of one server are serialised by a mutex; other processes wait on
//! the LOCK with the usual `--lock-timeout`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use memoir::app::{Memoir, Options};
use memoir::memory::MergePolicy;

use super::super::context::{AtArg, BranchArg, Ctx, WriteArgs};
use super::super::output::{error_json, exit, CliError, Report};
use super::super::{
    branch, checkout, forget, get, history, merge, recall, remember, search, status, summarize,
};

/// What the server tells the host about using it.
pub const INSTRUCTIONS: &str = "\
memoir is a versioned memory store: memories live under dot-path keys (preferences.coding.testing) \
in namespaces, and every change is a commit. The cheap way to recall: call memoir_summarize with \
depth 3 to see the key taxonomy with counts, pick at most 7 keys that matter, then read them all \
with ONE memoir_get call (keys list). Use memoir_recall or memoir_search only when the taxonomy \
does not tell where to look. For provenance use memoir_blame (who wrote a key, when) and \
memoir_diff; to answer questions about the past pass `at` (a revision such as HEAD~3 or \
main@{yesterday}). Store with memoir_remember and an explicit path; never store secrets. \
Every tool takes an optional `branch` where it makes sense, without moving HEAD.";

/// One tool's description for the host.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Tool name (`memoir_...`).
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Map<String, Value>,
    /// Reads only.
    pub read_only: bool,
    /// May delete or overwrite (forget).
    pub destructive: bool,
    /// Calling twice with the same arguments has no further effect.
    pub idempotent: bool,
}

/// A tool's answer: the structured content (the CLI's JSON), a short text, and whether it is
/// a tool error.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The command's JSON (with `code` added when the command failed or reported a partial
    /// failure).
    pub structured: Value,
    /// Short human rendering.
    pub text: String,
    /// Whether the call failed (non-zero exit code in CLI terms).
    pub is_error: bool,
}

/// The tools of one store.
pub struct Tools {
    ctx: Ctx,
    gate: Arc<Mutex<()>>,
}

fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::schema_for!(T);
    let mut v = match serde_json::to_value(&schema) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    v.remove("$schema");
    v.remove("title");
    v.insert("type".into(), Value::String("object".into()));
    v
}

// ---- arguments -------------------------------------------------------------------------

/// Arguments of memoir_summarize.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummarizeParams {
    /// Count keys by their first N segments (N >= 1; 3 is a good start)
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs (`*` crosses dots, `?`, `[seq]`)
    #[serde(default)]
    pub keys: Vec<String>,
    /// Read at this revision (commit id, branch, HEAD~2, main@{yesterday})
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_get.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// Keys to read (`path` or `ns:path`), all in one call
    pub keys: Vec<String>,
    /// Namespace of bare paths (default: default)
    pub namespace: Option<String>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// How recall chooses.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecallMode {
    /// Ranked lexical search, no model
    Lexical,
    /// One LLM call over the keys
    Single,
    /// LLM picks prefixes, then keys
    Tiered,
}

/// Arguments of memoir_recall.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The question
    pub query: String,
    /// Most memories returned (default 10)
    pub limit: Option<usize>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// lexical (no model; the default without an LLM), single or tiered
    pub mode: Option<RecallMode>,
    /// Drop memories scoring below this
    pub threshold: Option<f64>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Order of search hits.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchSort {
    /// Best score first
    Relevance,
    /// Newest first
    Recency,
}

/// Arguments of memoir_search.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// The words to look for
    pub query: String,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs
    #[serde(default)]
    pub keys: Vec<String>,
    /// Most hits (default 10)
    pub limit: Option<usize>,
    /// Only records at or after this date (ISO date, yesterday, 2.days.ago)
    pub since: Option<String>,
    /// Only records at or before this date
    pub until: Option<String>,
    /// relevance (default) or recency
    pub sort: Option<SearchSort>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_log.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// Revision, or range A..B (default HEAD)
    pub rev: Option<String>,
    /// Most commits listed
    pub limit: Option<usize>,
    /// Only commits that changed keys matching these globs
    #[serde(default)]
    pub keys: Vec<String>,
    /// Only commits that changed keys in this namespace
    pub namespace: Option<String>,
    /// Log of this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_blame.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlameParams {
    /// Key (`path` or `ns:path`)
    pub key: String,
    /// Namespace of a bare path
    pub namespace: Option<String>,
    /// Most entries listed
    pub limit: Option<usize>,
    /// Attribute each line of the content to a commit
    #[serde(default)]
    pub lines: bool,
    /// Blame as of this revision
    pub at: Option<String>,
    /// Blame on this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_diff.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffParams {
    /// Old revision, or A..B (default HEAD~1)
    pub from: Option<String>,
    /// New revision (default HEAD)
    pub to: Option<String>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys matching these globs
    #[serde(default)]
    pub keys: Vec<String>,
    /// Count changes and changed lines
    #[serde(default)]
    pub stat: bool,
    /// Include a unified diff of each record's content
    #[serde(default)]
    pub patch: bool,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Merge policy names.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PolicyParam {
    /// Add an entry
    Append,
    /// Supersede the existing entries
    Replace,
    /// Replace only if at least as confident
    ConfidenceGated,
    /// LLM merge (append without an LLM)
    LlmMerge,
    /// Append; the reader projects
    MergeOnRead,
    /// Refuse to touch an existing key (a conflict, code 4)
    Reject,
}

impl PolicyParam {
    fn policy(self) -> MergePolicy {
        match self {
            PolicyParam::Append => MergePolicy::Append,
            PolicyParam::Replace => MergePolicy::Replace,
            PolicyParam::ConfidenceGated => MergePolicy::ConfidenceGated,
            PolicyParam::LlmMerge => MergePolicy::LlmMerge,
            PolicyParam::MergeOnRead => MergePolicy::MergeOnRead,
            PolicyParam::Reject => MergePolicy::Reject,
        }
    }
}

/// Arguments of memoir_remember.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// The memory's text (credentials are refused)
    pub content: String,
    /// Key path (`a.b.c` or `ns:a.b.c`); omit path and paths to let the configured LLM choose
    pub path: Option<String>,
    /// Several key paths (the same content under each, one commit)
    #[serde(default)]
    pub paths: Vec<String>,
    /// Namespace (default: default)
    pub namespace: Option<String>,
    /// How to combine with an existing memory (default: by key prefix)
    pub merge_policy: Option<PolicyParam>,
    /// Confidence, 0.0 to 1.0 (default 1.0)
    pub confidence: Option<f64>,
    /// Write to this branch (created from HEAD if missing) without moving HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_forget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// Key (`path` or `ns:path`)
    pub key: String,
    /// Namespace of a bare path
    pub namespace: Option<String>,
    /// Forget on this branch without moving HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_checkout.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutParams {
    /// Branch name, or a revision to detach at
    pub target: String,
    /// Create the branch at HEAD first
    #[serde(default)]
    pub create: bool,
}

/// Merge conflict strategy.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StrategyParam {
    /// Keep the destination's value
    Ours,
    /// Same as ours
    Skip,
    /// Take the source's value
    Theirs,
    /// Union of both records' entries
    Union,
}

/// Arguments of memoir_merge.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeParams {
    /// Branch or revision to merge
    pub source: String,
    /// Branch to merge into (default: the current branch)
    pub into: Option<String>,
    /// Conflict strategy; without one, conflicts are listed and nothing is committed (code 4)
    pub strategy: Option<StrategyParam>,
    /// Refuse anything but a fast-forward (code 6)
    #[serde(default)]
    pub ff_only: bool,
}

// ---- the tool table --------------------------------------------------------------------

/// Read-only, destructive, idempotent.
type Hints = (bool, bool, bool);
const READ: Hints = (true, false, true);
const WRITE: Hints = (false, false, false);
const DESTROY: Hints = (false, true, false);
const MOVE: Hints = (false, false, true);

fn spec<T: JsonSchema>(name: &'static str, description: &'static str, h: Hints) -> Spec {
    Spec {
        name,
        description,
        input_schema: schema_of::<T>(),
        read_only: h.0,
        destructive: h.1,
        idempotent: h.2,
    }
}

/// Every tool, in a fixed order.
pub fn specs() -> Vec<Spec> {
    vec![
        spec::<SummarizeParams>(
            "memoir_summarize",
            "Count memories by namespace and key prefix (depth), or list the keys matching globs. \
             Start here: depth 3 shows the taxonomy cheaply.",
            READ,
        ),
        spec::<GetParams>(
            "memoir_get",
            "Read memories by key, several in one call (in the order given; missing keys are found: false).",
            READ,
        ),
        spec::<RecallParams>(
            "memoir_recall",
            "Find the memories that answer a question (LLM picker when configured, else lexical; \
             falls back to lexical and says so).",
            READ,
        ),
        spec::<SearchParams>(
            "memoir_search",
            "Ranked lexical search over keys and contents.",
            READ,
        ),
        spec::<LogParams>(
            "memoir_log",
            "List commits, newest first (optionally only those that changed matching keys).",
            READ,
        ),
        spec::<BlameParams>(
            "memoir_blame",
            "Who changed a memory, and when: every commit where the key's value changed, newest first.",
            READ,
        ),
        spec::<DiffParams>(
            "memoir_diff",
            "What changed between two revisions (default HEAD~1 against HEAD).",
            READ,
        ),
        spec::<NoParams>(
            "memoir_status",
            "The store's path, current branch, commit and memory counts, namespaces.",
            READ,
        ),
        spec::<NoParams>(
            "memoir_branches",
            "List branches and the current one.",
            READ,
        ),
        spec::<RememberParams>(
            "memoir_remember",
            "Store a memory under one or more keys (one commit), combining with an existing memory \
             by merge policy. Without a path, the configured LLM chooses one (an error if none is \
             configured). Refuses content that looks like a credential.",
            WRITE,
        ),
        spec::<ForgetParams>(
            "memoir_forget",
            "Remove the memory at a key (a new commit; history keeps the old value).",
            DESTROY,
        ),
        spec::<CheckoutParams>(
            "memoir_checkout",
            "Switch HEAD to a branch (create it with create: true) or detach at a revision.",
            MOVE,
        ),
        spec::<MergeParams>(
            "memoir_merge",
            "Merge a branch into another (default the current branch).",
            WRITE,
        ),
    ]
}

fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, CliError> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| CliError::new(exit::USAGE, format!("invalid arguments for {tool}: {e}")))
}

fn branch(b: Option<String>) -> BranchArg {
    BranchArg { branch: b }
}

fn at(a: Option<String>) -> AtArg {
    AtArg { at: a }
}

/// Provenance of writes made through the server: the server's environment, as the CLI.
fn write_args() -> WriteArgs {
    use super::super::context::env_var;
    WriteArgs {
        author: None,
        source: env_var("MEMOIR_SOURCE"),
        actor: env_var("MEMOIR_ACTOR"),
    }
}

impl Tools {
    /// The tools of the store `ctx` names. The store is kept open while calls keep coming
    /// and closed by a background thread once no call ran for `StoreHold::IDLE` (or it
    /// was held for `StoreHold::MAX_HOLD`), which releases the LOCK for other processes.
    pub fn new(mut ctx: Ctx) -> Self {
        let app = Arc::new(Memoir::open(
            &ctx.store_path,
            Options {
                keep_open: true,
                ..ctx.app.options().clone()
            },
        ));
        ctx.app = Arc::clone(&app);
        let gate = Arc::new(Mutex::new(()));
        let g = Arc::clone(&gate);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(10));
            // Only between calls: a running call holds the gate.
            if let Ok(_idle) = g.try_lock() {
                app.release_if_idle();
            }
        });
        Tools { ctx, gate }
    }

    /// Closes the store if it is open (when the server stops).
    pub fn close(&self) {
        let _turn = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        self.ctx.app.release();
    }

    /// Runs one tool call to completion (blocking: call it off the async executor).
    pub fn call(&self, name: &str, args: Map<String, Value>) -> Answer {
        let _turn = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        let answer = answer(self.dispatch(name, args));
        // Calls arriving back to back leave the background thread little room between them:
        // a store held for its longest turn (or last opened longer ago than the idle delay)
        // is given up here, before the next call, so other processes get the LOCK.
        self.ctx.app.release_if_idle();
        answer
    }

    fn dispatch(&self, name: &str, args: Map<String, Value>) -> Result<Report, CliError> {
        let ctx = &self.ctx;
        match name {
            "memoir_summarize" => {
                let p: SummarizeParams = parse(name, args)?;
                if p.depth == Some(0) {
                    return Err(CliError::new(exit::USAGE, "depth must be at least 1"));
                }
                summarize::run(
                    ctx,
                    summarize::Args {
                        kind: summarize::Kind::All,
                        namespace: p.namespace,
                        keys: p.keys,
                        depth: p.depth,
                        branch: branch(p.branch),
                        at: at(p.at),
                    },
                )
            }
            "memoir_get" => {
                let p: GetParams = parse(name, args)?;
                if p.keys.is_empty() {
                    return Err(CliError::new(
                        exit::USAGE,
                        "keys must name at least one key",
                    ));
                }
                get::run(
                    ctx,
                    get::Args {
                        keys: p.keys,
                        namespace: p.namespace,
                        branch: branch(p.branch),
                        at: at(p.at),
                    },
                )
            }
            "memoir_recall" => {
                let p: RecallParams = parse(name, args)?;
                recall::run(
                    ctx,
                    recall::Args {
                        query: p.query,
                        namespace: p.namespace,
                        limit: p.limit.unwrap_or(10),
                        mode: p.mode.map(|m| match m {
                            RecallMode::Lexical => recall::ModeArg::Lexical,
                            RecallMode::Single => recall::ModeArg::Single,
                            RecallMode::Tiered => recall::ModeArg::Tiered,
                        }),
                        model: None,
                        threshold: p.threshold,
                        at: at(p.at),
                        branch: branch(p.branch),
                    },
                )
            }
            "memoir_search" => {
                let p: SearchParams = parse(name, args)?;
                search::run(
                    ctx,
                    search::Args {
                        query: p.query,
                        namespace: p.namespace,
                        keys: p.keys,
                        limit: p.limit.unwrap_or(10),
                        at: at(p.at),
                        since: p.since,
                        until: p.until,
                        sort: match p.sort {
                            Some(SearchSort::Recency) => search::SortArg::Recency,
                            _ => search::SortArg::Relevance,
                        },
                        branch: branch(p.branch),
                    },
                )
            }
            "memoir_log" => {
                let p: LogParams = parse(name, args)?;
                history::log(
                    ctx,
                    history::LogArgs {
                        rev: p.rev,
                        limit: p.limit,
                        keys: p.keys,
                        namespace: p.namespace,
                        branch: branch(p.branch),
                    },
                )
            }
            "memoir_blame" => {
                let p: BlameParams = parse(name, args)?;
                history::blame(
                    ctx,
                    history::BlameArgs {
                        key: p.key,
                        namespace: p.namespace,
                        limit: p.limit,
                        lines: p.lines,
                        at: at(p.at),
                        branch: branch(p.branch),
                    },
                )
            }
            "memoir_diff" => {
                let p: DiffParams = parse(name, args)?;
                history::diff(
                    ctx,
                    history::DiffArgs {
                        from: p.from,
                        to: p.to,
                        namespace: p.namespace,
                        keys: p.keys,
                        stat: p.stat,
                        patch: p.patch,
                    },
                )
            }
            "memoir_status" => {
                let _: NoParams = parse(name, args)?;
                status::run(ctx, status::Args {})
            }
            "memoir_branches" => {
                let _: NoParams = parse(name, args)?;
                branch::run(
                    ctx,
                    branch::Args {
                        name: None,
                        from: None,
                        delete: None,
                        force_delete: None,
                    },
                )
            }
            "memoir_remember" => {
                let p: RememberParams = parse(name, args)?;
                let mut paths: Vec<String> = p.path.into_iter().collect();
                paths.extend(p.paths);
                // No path: the same rule as the CLI (the configured LLM chooses; without one,
                // an error and nothing stored). Content that looks like a credential is refused
                // by the application, with no way around it here.
                remember::run(
                    ctx,
                    remember::Args {
                        content: p.content,
                        paths,
                        namespace: p.namespace,
                        merge_policy: p.merge_policy.map(PolicyParam::policy),
                        replace: false,
                        confidence: p.confidence,
                        model: None,
                        allow_secrets: false,
                        branch: branch(p.branch),
                        write: write_args(),
                    },
                )
            }
            "memoir_forget" => {
                let p: ForgetParams = parse(name, args)?;
                forget::run(
                    ctx,
                    forget::Args {
                        key: p.key,
                        namespace: p.namespace,
                        force: true,
                        purge: false,
                        branch: branch(p.branch),
                        write: write_args(),
                    },
                )
            }
            "memoir_checkout" => {
                let p: CheckoutParams = parse(name, args)?;
                checkout::run(
                    ctx,
                    checkout::Args {
                        target: p.target,
                        create: p.create,
                    },
                )
            }
            "memoir_merge" => {
                let p: MergeParams = parse(name, args)?;
                merge::run(
                    ctx,
                    merge::Args {
                        from: p.source,
                        into: p.into,
                        strategy: p.strategy.map(|s| match s {
                            StrategyParam::Ours => merge::StrategyArg::Ours,
                            StrategyParam::Skip => merge::StrategyArg::Skip,
                            StrategyParam::Theirs => merge::StrategyArg::Theirs,
                            StrategyParam::Union => merge::StrategyArg::Union,
                        }),
                        ff_only: p.ff_only,
                        write: write_args(),
                    },
                )
            }
            other => Err(CliError::new(
                exit::USAGE,
                format!("unknown tool '{other}'"),
            )),
        }
    }
}

/// The answer of a command's result.
pub fn answer(result: Result<Report, CliError>) -> Answer {
    match result {
        Ok(r) => {
            let mut text: Vec<String> = r.lines.clone();
            text.extend(r.warnings.iter().cloned());
            let mut structured = r.json;
            let is_error = r.code != exit::OK;
            if is_error {
                if let Value::Object(m) = &mut structured {
                    m.insert("code".into(), Value::from(r.code));
                }
            }
            let mut text = text.join("\n");
            if text.is_empty() {
                text = if is_error {
                    format!("failed (code {})", r.code)
                } else {
                    "ok".to_string()
                };
            }
            Answer {
                structured,
                text,
                is_error,
            }
        }
        Err(e) => Answer {
            structured: error_json(&e),
            text: format!("error (code {}): {}", e.code, e.message),
            is_error: true,
        },
    }
}
