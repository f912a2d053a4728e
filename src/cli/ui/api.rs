//! The JSON API under `/api/`: one route per `Memoir` operation a view uses. Every answer is
//! the operation's outcome JSON (what `memoir --json` prints), or `{success: false, error,
//! code}` with the contract's exit code, served with the HTTP status that code maps to
//! ([`http_status`]). GET routes only read; POST routes (writes, and operations that may
//! call a model or read the whole store) are checked for the launch token by the server
//! before they get here.

use serde_json::Value;

use memoir::app::{
    exit, ChangesQuery, DiffQuery, ForgetRequest, GraphRequest, HistoryFilter, KeyScope, LogQuery,
    MergePolicy, MergeRequest, MergeStrategy, Outcome, ReadPoint, RecallMode, RecallRequest,
    RememberRequest, SearchMode, SearchRequest, SummarizeRequest, TreeRequest, WriteAs,
};

use super::params::{Body, Query};
use crate::cli::context::{env_var, BranchArg, Ctx, WriteArgs};
use crate::cli::output::{error_json, CliError};

/// An answer: HTTP status and JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Value,
}

/// The HTTP status of an exit code: 0 is 200; bad input 400; not found (and usage) 404;
/// conflicts and non-fast-forward 409; a busy store 503; the rest 500.
pub fn http_status(code: u8) -> u16 {
    match code {
        exit::OK => 200,
        exit::ERROR => 400,
        exit::NOT_FOUND => 404,
        exit::CONFLICT | exit::NON_FAST_FORWARD => 409,
        exit::BUSY => 503,
        _ => 500,
    }
}

/// The reply of an operation's result.
pub fn reply<O: Outcome>(result: Result<O, CliError>) -> Reply {
    match result {
        Ok(o) => Reply {
            status: http_status(o.exit_code()),
            body: o.to_json(),
        },
        Err(e) => failure(&e),
    }
}

/// The reply of a failure.
pub fn failure(e: &CliError) -> Reply {
    Reply {
        status: http_status(e.code),
        body: error_json(e),
    }
}

fn not_found(method: &str, path: &str) -> Reply {
    failure(&CliError::new(
        exit::NOT_FOUND,
        format!("no API route {method} {path}"),
    ))
}

/// The read point of a request: `at` (any revision) and `branch`.
fn read_point(at: Option<String>, branch: Option<String>) -> ReadPoint {
    ReadPoint { at, branch }
}

/// The history a log or history request asks for: `rev`, `branch`, `limit` (200 unless
/// given), `ns` and `keys`.
fn log_query(q: &Query) -> Result<LogQuery, CliError> {
    Ok(LogQuery {
        rev: q.get("rev"),
        branch: q.get("branch"),
        limit: Some(q.number("limit")?.unwrap_or(200)),
        scope: KeyScope {
            namespace: q.get("ns"),
            keys: q.all("keys"),
        },
    })
}

fn query_point(q: &Query) -> ReadPoint {
    read_point(q.get("at"), q.get("branch"))
}

fn body_point(b: &Body) -> Result<ReadPoint, CliError> {
    Ok(read_point(b.text("at")?, b.text("branch")?))
}

/// Whether `path` names a GET route.
pub fn is_get_route(path: &str) -> bool {
    GET_ROUTES.contains(&path)
}

/// Whether `path` names a POST route.
pub fn is_post_route(path: &str) -> bool {
    POST_ROUTES.contains(&path)
}

/// The GET routes.
pub const GET_ROUTES: [&str; 21] = [
    "/api/status",
    "/api/history",
    "/api/agents",
    "/api/changes",
    "/api/change-counts",
    "/api/change",
    "/api/tree",
    "/api/summarize",
    "/api/memory",
    "/api/blame",
    "/api/log",
    "/api/diff",
    "/api/branches",
    "/api/remotes",
    "/api/merge-preview",
    "/api/search",
    "/api/stats",
    "/api/proof",
    "/api/graph",
    "/api/timeline",
    "/api/watch",
];

/// The POST routes.
pub const POST_ROUTES: [&str; 10] = [
    "/api/remember",
    "/api/forget",
    "/api/branch",
    "/api/branch/delete",
    "/api/checkout",
    "/api/merge",
    "/api/recall",
    "/api/fsck",
    "/api/gc",
    "/api/verify",
];

/// Answers a GET route (read only).
pub fn get(ctx: &Ctx, path: &str, q: &Query) -> Reply {
    let app = &ctx.app;
    match path {
        "/api/status" => reply(app.status().map_err(CliError::from)),
        "/api/tree" => reply((|| {
            let req = TreeRequest {
                namespace: q.get("ns"),
                prefix: q.get("prefix"),
                keys: q.all("keys"),
                limit: q.number("limit")?,
                offset: q.number("offset")?.unwrap_or(0),
                previews: q.flag("previews"),
            };
            Ok(app.tree(&req, &query_point(q))?)
        })()),
        "/api/summarize" => reply((|| {
            let req = SummarizeRequest {
                namespace: q.get("ns"),
                keys: q.all("keys"),
                depth: q.number("depth")?,
                ..SummarizeRequest::default()
            };
            Ok(app.summarize(&req, &query_point(q))?)
        })()),
        "/api/memory" => reply((|| {
            let key = q.required("key")?;
            Ok(app.get(&[key], q.get("ns").as_deref(), &query_point(q))?)
        })()),
        "/api/blame" => reply((|| {
            let key = q.required("key")?;
            Ok(app.blame(
                &key,
                q.get("ns").as_deref(),
                &query_point(q),
                q.number("limit")?,
                q.flag("lines"),
            )?)
        })()),
        "/api/log" => reply((|| Ok(app.log(&log_query(q)?)?))()),
        "/api/history" => reply((|| {
            let query = log_query(q)?;
            let filter = HistoryFilter {
                actor: q.get("actor"),
                since: q.get("since"),
                until: q.get("until"),
                all_branches: q.flag("all"),
            };
            Ok(app.history(&query, &filter)?)
        })()),
        "/api/agents" => reply(app.agents().map_err(CliError::from)),
        "/api/changes" => reply((|| {
            Ok(app.changes(
                &changes_query(q),
                q.get("after").as_deref(),
                q.number("limit")?,
            )?)
        })()),
        "/api/change-counts" => reply((|| Ok(app.change_counts(&changes_query(q))?))()),
        "/api/change" => reply((|| {
            let key = q.required("key")?;
            Ok(app.change(&changes_query(q), &key, q.get("ns").as_deref())?)
        })()),
        "/api/diff" => reply((|| {
            let query = DiffQuery {
                from: q.get("from"),
                to: q.get("to"),
                scope: KeyScope {
                    namespace: q.get("ns"),
                    keys: q.all("keys"),
                },
                stat: q.flag("stat"),
                patch: q.flag("patch"),
                names_only: false,
            };
            Ok(app.diff(&query)?)
        })()),
        "/api/branches" => reply(app.branches().map_err(CliError::from)),
        "/api/remotes" => reply(app.remote_list().map_err(CliError::from)),
        "/api/merge-preview" => reply((|| {
            let source = q.required("source")?;
            Ok(app.merge_preview(&source, q.get("into").as_deref())?)
        })()),
        "/api/search" => reply((|| {
            let req = SearchRequest {
                query: q.required("q")?,
                namespace: q.get("ns"),
                keys: q.all("keys"),
                limit: q.number("limit")?.unwrap_or(20),
                since: q.get("since"),
                until: q.get("until"),
                ..SearchRequest::default()
            };
            let mode = match q.get("mode").as_deref() {
                None | Some("") => None,
                Some("lexical") => Some(SearchMode::Lexical),
                Some("semantic") => Some(SearchMode::Semantic),
                Some("hybrid") => Some(SearchMode::Hybrid),
                Some(other) => {
                    return Err(CliError::invalid(format!(
                        "mode {other:?}: expected lexical, semantic or hybrid"
                    )))
                }
            };
            match q.get("actor") {
                Some(actor) => Ok(app.search_by_agent(&req, &actor, &query_point(q))?),
                None => Ok(app.search_in(mode, &req, &query_point(q))?),
            }
        })()),
        "/api/stats" => reply((|| Ok(app.stats(&query_point(q), q.number("points")?)?))()),
        "/api/proof" => reply((|| {
            let key = q.required("key")?;
            Ok(app.proof(&key, q.get("ns").as_deref(), &query_point(q))?)
        })()),
        "/api/graph" => reply((|| {
            let req = GraphRequest {
                key: q.required("key")?,
                namespace: q.get("ns"),
                depth: q.number("depth")?,
                limit: q.number("limit")?,
            };
            Ok(app.graph(&req, &query_point(q))?)
        })()),
        "/api/timeline" => reply(app.timeline().map_err(CliError::from)),
        "/api/watch" => reply((|| Ok(app.watch_status(&query_point(q))?))()),
        _ => not_found("GET", path),
    }
}

/// The two sides of a paged diff: `from`, `to`, `base=1` (from their merge base), and the
/// key scope (`ns`, `keys`).
fn changes_query(q: &Query) -> ChangesQuery {
    ChangesQuery {
        from: q.get("from"),
        to: q.get("to"),
        since_base: q.flag("base"),
        scope: KeyScope {
            namespace: q.get("ns"),
            keys: q.all("keys"),
        },
    }
}

/// Provenance of writes made from the page: the author and source of the server's
/// environment, as the command line resolves them, on `branch` (none: HEAD's branch).
fn write_as(ctx: &Ctx, branch: Option<String>) -> WriteAs {
    let write = WriteArgs {
        author: None,
        source: env_var("MEMOIR_SOURCE"),
        actor: env_var("MEMOIR_ACTOR"),
    };
    ctx.write_as(&write, &BranchArg { branch })
}

fn merge_policy(b: &Body) -> Result<Option<MergePolicy>, CliError> {
    b.text("merge_policy")?
        .map(|p| {
            p.parse::<MergePolicy>()
                .map_err(|e| CliError::invalid(e.to_string()))
        })
        .transpose()
}

fn parse_named<T: serde::de::DeserializeOwned>(
    b: &Body,
    name: &str,
    choices: &str,
) -> Result<Option<T>, CliError> {
    b.text(name)?
        .map(|v| {
            serde_json::from_value(Value::String(v.clone())).map_err(|_| {
                CliError::invalid(format!("'{name}' must be one of {choices}, not {v:?}"))
            })
        })
        .transpose()
}

/// Answers a POST route.
pub fn post(ctx: &Ctx, path: &str, b: &Body) -> Reply {
    let app = &ctx.app;
    match path {
        "/api/remember" => reply((|| {
            let req = RememberRequest {
                content: b.required("content")?,
                paths: b.list("paths")?,
                namespace: b.text("namespace")?,
                merge_policy: merge_policy(b)?,
                replace: b.flag("replace")?,
                confidence: b.number("confidence")?,
                model: b.text("model")?,
                allow_secrets: false,
                event_time: None,
            };
            crate::cli::remember::check(ctx, &req)?;
            Ok(app.remember(&req, &write_as(ctx, b.text("branch")?))?)
        })()),
        "/api/forget" => reply((|| {
            let req = ForgetRequest {
                key: b.required("key")?,
                namespace: b.text("namespace")?,
                purge: b.flag("purge")?,
                dry_run: false,
            };
            Ok(app.forget(&req, &write_as(ctx, b.text("branch")?))?)
        })()),
        "/api/branch" => reply((|| {
            let name = b.required("name")?;
            Ok(app.create_branch(&name, b.text("from")?.as_deref())?)
        })()),
        "/api/branch/delete" => reply((|| {
            let name = b.required("name")?;
            Ok(app.delete_branch(&name, b.flag("force")?)?)
        })()),
        "/api/checkout" => reply((|| {
            let target = b.required("target")?;
            Ok(app.checkout(&target, b.flag("create")?)?)
        })()),
        "/api/merge" => reply((|| {
            let req = MergeRequest {
                source: b.required("source")?,
                into: b.text("into")?,
                strategy: parse_named::<MergeStrategy>(b, "strategy", "ours, skip, theirs, union")?,
                ff_only: b.flag("ff_only")?,
            };
            Ok(app.merge(&req, &write_as(ctx, None))?)
        })()),
        "/api/recall" => reply((|| {
            let limit = b.number("limit")?.unwrap_or(10.0);
            if !((1.0..=1000.0).contains(&limit) && limit.fract() == 0.0) {
                return Err(CliError::invalid(
                    "'limit' must be a whole number from 1 to 1000",
                ));
            }
            let req = RecallRequest {
                query: b.required("query")?,
                namespace: b.text("namespace")?,
                limit: limit as usize,
                mode: parse_named::<RecallMode>(b, "mode", "lexical, single, tiered")?,
                model: b.text("model")?,
                threshold: b.number("threshold")?,
            };
            Ok(app.recall(&req, &body_point(b)?)?)
        })()),
        "/api/fsck" => reply(app.fsck().map_err(CliError::from)),
        "/api/gc" => reply(app.gc().map_err(CliError::from)),
        "/api/verify" => reply((|| {
            let key = b.required("key")?;
            let proof = b.required("proof")?;
            Ok(app.verify(
                &key,
                b.text("namespace")?.as_deref(),
                &proof,
                b.text("root")?.as_deref(),
                &body_point(b)?,
            )?)
        })()),
        _ => not_found("POST", path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(http_status(exit::OK), 200);
        assert_eq!(http_status(exit::ERROR), 400);
        assert_eq!(http_status(exit::NOT_FOUND), 404);
        assert_eq!(http_status(exit::NOT_A_STORE), 500);
        assert_eq!(http_status(exit::CONFLICT), 409);
        assert_eq!(http_status(exit::CORRUPT), 500);
        assert_eq!(http_status(exit::NON_FAST_FORWARD), 409);
        assert_eq!(http_status(exit::BUSY), 503);
    }

    #[test]
    fn every_route_is_listed_once() {
        for r in GET_ROUTES {
            assert!(is_get_route(r) && !is_post_route(r), "{r}");
        }
        for r in POST_ROUTES {
            assert!(is_post_route(r) && !is_get_route(r), "{r}");
        }
    }
}
