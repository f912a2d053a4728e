//! The MCP tools, free of any protocol library: the tool table (names, descriptions, the
//! input schemas of [`super::params`]) and, per tool, one `Memoir` call whose outcome is
//! rendered by the command's own `render`. The answer is the outcome's JSON (exactly what
//! `memoir --json` prints) plus the command's human lines as text; a failure carries the
//! CLI's message and exit code.
//!
//! The server's `Memoir` keeps the store open while calls keep coming and closes it
//! (releasing the LOCK) when idle. Calls of one server are serialised by a mutex; other processes wait on
//! the LOCK with the usual `--lock-timeout`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use memoir::app::{
    DiffQuery, ForgetRequest, KeyScope, LogQuery, Memoir, MergeRequest, Options, ReadPoint,
    RecallRequest, RememberRequest, SearchRequest, SummarizeRequest, SummaryKind, WriteAs,
};

use super::super::context::{env_var, BranchArg, Ctx, WriteArgs};
use super::super::output::{error_json, exit, CliError, Report};
use super::super::{
    branch, checkout, forget, get, history, merge, recall, remember, search, status, summarize,
};
use super::agent_tools;
use super::params::{
    BlameParams, CheckoutParams, DiffParams, ForgetParams, GetParams, LogParams, MergeParams,
    NoParams, RecallParams, RememberParams, SearchParams, SummarizeParams,
};
use super::schema::flatten;

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
    /// Reaches beyond the store (a model).
    pub open_world: bool,
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
    flatten(v)
}

// ---- the tool table --------------------------------------------------------------------

/// A tool's annotations: read-only, destructive, idempotent, open-world.
#[derive(Debug, Clone, Copy)]
pub struct Hints(bool, bool, bool, bool);

impl Hints {
    /// The hints `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
    pub const fn new(
        read_only: bool,
        destructive: bool,
        idempotent: bool,
        open_world: bool,
    ) -> Self {
        Hints(read_only, destructive, idempotent, open_world)
    }
}

const READ: Hints = Hints::new(true, false, true, false);
const WRITE: Hints = Hints::new(false, false, false, false);
const DESTROY: Hints = Hints::new(false, true, false, false);
const MOVE: Hints = Hints::new(false, false, true, false);

/// A tool whose arguments are `T`.
pub fn spec<T: JsonSchema>(name: &'static str, description: &'static str, h: Hints) -> Spec {
    Spec {
        name,
        description,
        input_schema: schema_of::<T>(),
        read_only: h.0,
        destructive: h.1,
        idempotent: h.2,
        open_world: h.3,
    }
}

/// Every tool, in a fixed order: the command line's, then those of [`agent_tools`].
pub fn specs() -> Vec<Spec> {
    let mut all = command_specs();
    all.extend(agent_tools::specs());
    all
}

/// The tools that are commands of the command line.
fn command_specs() -> Vec<Spec> {
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
            "Ranked search over keys and contents, by words, meaning (an embedding model) or both.",
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

/// The arguments of a call to `tool`, or a usage error naming what is wrong.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, CliError> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| CliError::new(exit::USAGE, format!("invalid arguments for {tool}: {e}")))
}

impl Tools {
    /// The tools of the store `ctx` names. The store is kept open while calls keep coming
    /// and closed by a background thread once no call ran for `KeptOpenStore::IDLE` (or it
    /// was held for `KeptOpenStore::MAX_HOLD`), which releases the LOCK for other processes.
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

    /// Runs `work` on the server's context as one call (serialised with tool calls; the
    /// store stays open for the next one as after a tool call). Blocking.
    pub fn run<T>(&self, work: impl FnOnce(&Ctx) -> T) -> T {
        let _turn = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        let out = work(&self.ctx);
        self.ctx.app.operation_done();
        out
    }

    /// Runs one tool call to completion (blocking: call it off the async executor).
    pub fn call(&self, name: &str, args: Map<String, Value>) -> Answer {
        let _turn = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        let mut answer = answer(self.dispatch(name, args));
        if answer.is_error && name == "memoir_memory" {
            // The model sees the memory tool's own error text, as the tool defines it.
            if let Some(e) = answer.structured.get("error").and_then(Value::as_str) {
                answer.text = e.to_string();
            }
        }
        // Calls arriving back to back leave the background thread little room between them:
        // a store held for its longest turn is given up here, before the next call, so other
        // processes get the LOCK; else it stays open for the idle delay from now.
        self.ctx.app.operation_done();
        answer
    }

    fn dispatch(&self, name: &str, args: Map<String, Value>) -> Result<Report, CliError> {
        let ctx = &self.ctx;
        let app = &ctx.app;
        let read = |at: Option<String>, branch: Option<String>| ReadPoint { at, branch };
        match name {
            "memoir_summarize" => {
                let p: SummarizeParams = parse(name, args)?;
                if p.depth == Some(0) {
                    return Err(CliError::new(exit::USAGE, "depth must be at least 1"));
                }
                let req = SummarizeRequest {
                    kind: SummaryKind::All,
                    namespace: p.namespace,
                    keys: p.keys,
                    depth: p.depth.map(|d| d as usize),
                };
                Ok(summarize::render(
                    ctx,
                    &app.summarize(&req, &read(p.at, p.branch))?,
                ))
            }
            "memoir_get" => {
                let p: GetParams = parse(name, args)?;
                if p.keys.is_empty() {
                    return Err(CliError::new(
                        exit::USAGE,
                        "keys must name at least one key",
                    ));
                }
                let out = app.get(&p.keys, p.namespace.as_deref(), &read(p.at, p.branch))?;
                Ok(get::render(ctx, &out))
            }
            "memoir_recall" => {
                let p: RecallParams = parse(name, args)?;
                recall::check(p.namespace.as_deref())?;
                let req = RecallRequest {
                    query: p.query,
                    namespace: p.namespace,
                    limit: p.limit.unwrap_or(10),
                    mode: p.mode,
                    model: None,
                    threshold: p.threshold,
                };
                Ok(recall::render(
                    ctx,
                    &app.recall(&req, &read(p.at, p.branch))?,
                ))
            }
            "memoir_search" => {
                let p: SearchParams = parse(name, args)?;
                let req = SearchRequest {
                    query: p.query,
                    namespace: p.namespace,
                    keys: p.keys,
                    limit: p.limit.unwrap_or(10),
                    since: p.since,
                    until: p.until,
                    sort: p.sort.unwrap_or_default(),
                    explain: false,
                };
                Ok(search::render(
                    ctx,
                    &app.search_in(p.mode, &req, &read(p.at, p.branch))?,
                ))
            }
            "memoir_log" => {
                let p: LogParams = parse(name, args)?;
                let out = app.log(&LogQuery {
                    rev: p.rev,
                    branch: p.branch,
                    limit: p.limit,
                    scope: KeyScope {
                        namespace: p.namespace,
                        keys: p.keys,
                    },
                })?;
                Ok(history::render_log(ctx, &out))
            }
            "memoir_blame" => {
                let p: BlameParams = parse(name, args)?;
                let out = app.blame(
                    &p.key,
                    p.namespace.as_deref(),
                    &read(p.at, p.branch),
                    p.limit,
                    p.lines,
                )?;
                Ok(history::render_blame(ctx, &out))
            }
            "memoir_diff" => {
                let p: DiffParams = parse(name, args)?;
                let out = app.diff(&DiffQuery {
                    from: p.from,
                    to: p.to,
                    scope: KeyScope {
                        namespace: p.namespace,
                        keys: p.keys,
                    },
                    stat: p.stat,
                    patch: p.patch,
                    names_only: false,
                })?;
                Ok(history::render_diff(ctx, &out))
            }
            "memoir_status" => {
                let _: NoParams = parse(name, args)?;
                Ok(status::render(ctx, &app.status()?))
            }
            "memoir_branches" => {
                let _: NoParams = parse(name, args)?;
                Ok(branch::render_list(ctx, &app.branches()?))
            }
            "memoir_remember" => {
                let p: RememberParams = parse(name, args)?;
                let mut paths: Vec<String> = p.path.into_iter().collect();
                paths.extend(p.paths);
                // No path: the same rule as the CLI (the configured LLM chooses; without one,
                // an error and nothing stored). Content that looks like a credential is refused
                // by the application, with no way around it here.
                let req = RememberRequest {
                    content: p.content,
                    paths,
                    namespace: p.namespace,
                    merge_policy: p.merge_policy,
                    replace: false,
                    confidence: p.confidence,
                    model: None,
                    allow_secrets: false,
                    event_time: None,
                };
                remember::check(ctx, &req)?;
                let out = app.remember(&req, &self.write_as(p.branch))?;
                Ok(remember::render(ctx, &out))
            }
            "memoir_forget" => {
                let p: ForgetParams = parse(name, args)?;
                let req = ForgetRequest {
                    key: p.key,
                    namespace: p.namespace,
                    purge: false,
                    dry_run: false,
                };
                Ok(forget::render(
                    ctx,
                    &app.forget(&req, &self.write_as(p.branch))?,
                ))
            }
            "memoir_checkout" => {
                let p: CheckoutParams = parse(name, args)?;
                Ok(checkout::render(ctx, &app.checkout(&p.target, p.create)?))
            }
            "memoir_merge" => {
                let p: MergeParams = parse(name, args)?;
                let req = MergeRequest {
                    source: p.source,
                    into: p.into,
                    strategy: p.strategy,
                    ff_only: p.ff_only,
                };
                Ok(merge::render(ctx, &app.merge(&req, &self.write_as(None))?))
            }
            other => agent_tools::dispatch(self, ctx, other, args).unwrap_or_else(|| {
                Err(CliError::new(
                    exit::USAGE,
                    format!("unknown tool '{other}'"),
                ))
            }),
        }
    }

    /// Provenance of writes made through the server: the author and source of the
    /// server's environment, as the CLI resolves them.
    pub(super) fn write_as(&self, branch: Option<String>) -> WriteAs {
        let write = WriteArgs {
            author: None,
            source: env_var("MEMOIR_SOURCE"),
            actor: env_var("MEMOIR_ACTOR"),
        };
        self.ctx.write_as(&write, &BranchArg { branch })
    }
}

/// The answer of a command's result.
pub fn answer(result: Result<Report, CliError>) -> Answer {
    match result {
        Ok(r) => {
            let mut text: Vec<String> = r.lines.clone();
            text.extend(r.warnings.iter().cloned());
            // A partly failed outcome's JSON already carries `success: false`, `error` and
            // `code`.
            let structured = r.json;
            let is_error = r.code != exit::OK;
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
