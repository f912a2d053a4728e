//! The tools agent hosts expect beyond the command-line ones: `memoir_capture`,
//! `memoir_taxonomy`, `memoir_sync_branch`, `memoir_memory` (Anthropic's memory tool,
//! `memory_20250818`, over the store), and `search` and `fetch` in the shapes ChatGPT
//! connectors and deep-research clients require: `search` answers one text item holding
//! `{"results": [{"id", "title", "url"}]}`, `fetch` one holding `{"id", "title", "text",
//! "url", "metadata"}`. Ids are full keys (`ns:path`); urls are the memories' resource URIs
//! ([`super::resources`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use memoir::app::{
    CaptureRequest, MemoryCommand, Profile, ReadPoint, SearchRequest, Sort, SyncBranchRequest,
    SYNC_DEFAULT_TARGET,
};

use super::super::context::Ctx;
use super::super::output::{exit, CliError, Report};
use super::super::{capture, taxonomy};
use super::params::{flag, integer, integers};
use super::resources::uri_of;
use super::tools::{parse, spec, Hints, Spec, Tools};

/// Reads only, in the store.
const READ: Hints = Hints::new(true, false, true, false);

/// Arguments of memoir_capture.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureParams {
    /// The conversation turn: plain text, or JSON ({"user": ..., "assistant": ...} or a
    /// list of messages)
    pub turn: String,
    /// What kind of agent the turn comes from: coding (default) or assistant
    pub profile: Option<String>,
    /// Namespace the facts go to (default: default)
    pub namespace: Option<String>,
    /// Say what would be stored; store nothing
    #[serde(default, deserialize_with = "flag")]
    pub dry_run: bool,
    /// Write to this branch (created from HEAD if missing) without moving HEAD
    pub branch: Option<String>,
}

/// What memoir_taxonomy does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaxonomyAction {
    /// List the categories
    List,
    /// Show one category in full (needs id)
    Show,
}

/// Arguments of memoir_taxonomy.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxonomyParams {
    /// list (default) or show
    pub action: Option<TaxonomyAction>,
    /// The category id, for show
    pub id: Option<String>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_sync_branch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBranchParams {
    /// The branch whose default-namespace memories are promoted
    pub source: String,
    /// The branch they go to (default: main)
    pub into: Option<String>,
    /// Say what would be promoted; write nothing
    #[serde(default, deserialize_with = "flag")]
    pub dry_run: bool,
}

/// Arguments of memoir_memory: one command of Anthropic's memory tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryParams {
    /// view, create, str_replace, insert, delete or rename
    pub command: MemoryCommandName,
    /// The path, under /memories (every command but rename)
    pub path: Option<String>,
    /// view of a file: [first line, last line] (from 1; -1 for the end)
    #[serde(default, deserialize_with = "integers")]
    pub view_range: Option<Vec<i64>>,
    /// create: the file's text
    pub file_text: Option<String>,
    /// str_replace: text that occurs exactly once in the file
    pub old_str: Option<String>,
    /// str_replace: its replacement
    pub new_str: Option<String>,
    /// insert: lines kept above the new text (0: at the top)
    #[serde(default, deserialize_with = "integer")]
    pub insert_line: Option<i64>,
    /// insert: the text inserted
    pub insert_text: Option<String>,
    /// rename: where it is
    pub old_path: Option<String>,
    /// rename: where it goes
    pub new_path: Option<String>,
    /// Namespace of the files (default: default)
    pub namespace: Option<String>,
    /// Work on this branch (created from HEAD if missing) without moving HEAD
    pub branch: Option<String>,
}

/// The commands of the memory tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryCommandName {
    /// A directory's listing or a file's numbered lines
    View,
    /// A new file
    Create,
    /// Replace a unique text in a file
    StrReplace,
    /// Insert a line
    Insert,
    /// Delete a file or directory
    Delete,
    /// Move a file or directory
    Rename,
}

/// Arguments of search.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConnectorSearchParams {
    /// What to look for, in words
    pub query: String,
}

/// Arguments of fetch.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConnectorFetchParams {
    /// A result id from search (a full key, `ns:path`)
    pub id: String,
}

/// The names of this module's tools.
const NAMES: [&str; 6] = [
    "memoir_capture",
    "memoir_taxonomy",
    "memoir_sync_branch",
    "memoir_memory",
    "search",
    "fetch",
];

/// The tools of this module, in a fixed order.
pub fn specs() -> Vec<Spec> {
    vec![
        spec::<CaptureParams>(
            "memoir_capture",
            "Store the durable facts of one conversation turn: the configured model picks them \
             out, facts already known are skipped, the rest are written in one commit. Needs a \
             configured model.",
            Hints::new(false, false, false, true),
        ),
        spec::<TaxonomyParams>(
            "memoir_taxonomy",
            "The categories memories are filed under: list them, or show one (action show, id).",
            READ,
        ),
        spec::<SyncBranchParams>(
            "memoir_sync_branch",
            "Promote a branch's default-namespace memories into another branch (default main) \
             in one commit: new keys are added, changed ones updated, nothing is deleted.",
            Hints::new(false, true, true, false),
        ),
        spec::<MemoryParams>(
            "memoir_memory",
            "Anthropic's memory tool (memory_20250818) over the store: files under /memories \
             are memories, directories are key prefixes. Commands: view, create, str_replace, \
             insert, delete, rename; each change is one commit.",
            Hints::new(false, true, false, false),
        ),
        spec::<ConnectorSearchParams>(
            "search",
            "Search the memories by words. Answers {\"results\": [{\"id\", \"title\", \"url\"}]}; \
             pass an id to fetch for the full text.",
            READ,
        ),
        spec::<ConnectorFetchParams>(
            "fetch",
            "Read one memory by the id search gave. Answers {\"id\", \"title\", \"text\", \"url\", \
             \"metadata\"}.",
            READ,
        ),
    ]
}

/// A report whose text and structured content are both `value` (the connector shapes).
fn json_report(value: Value) -> Report {
    Report {
        lines: vec![value.to_string()],
        json: value,
        ..Report::default()
    }
}

fn required(tool: &str, what: &str, v: Option<String>) -> Result<String, CliError> {
    v.ok_or_else(|| CliError::new(exit::USAGE, format!("{tool} needs {what}")))
}

fn memory_command(p: MemoryParams) -> Result<MemoryCommand, CliError> {
    const T: &str = "memoir_memory";
    let path = |v: Option<String>| required(T, "path", v);
    Ok(match p.command {
        MemoryCommandName::View => MemoryCommand::View {
            path: path(p.path)?,
            view_range: p.view_range,
        },
        MemoryCommandName::Create => MemoryCommand::Create {
            path: path(p.path)?,
            file_text: required(T, "file_text", p.file_text)?,
        },
        MemoryCommandName::StrReplace => MemoryCommand::StrReplace {
            path: path(p.path)?,
            old_str: required(T, "old_str", p.old_str)?,
            new_str: p.new_str.unwrap_or_default(),
        },
        MemoryCommandName::Insert => MemoryCommand::Insert {
            path: path(p.path)?,
            insert_line: p
                .insert_line
                .ok_or_else(|| CliError::new(exit::USAGE, format!("{T} needs insert_line")))?,
            insert_text: required(T, "insert_text", p.insert_text)?,
        },
        MemoryCommandName::Delete => MemoryCommand::Delete {
            path: path(p.path)?,
        },
        MemoryCommandName::Rename => MemoryCommand::Rename {
            old_path: required(T, "old_path", p.old_path)?,
            new_path: required(T, "new_path", p.new_path)?,
        },
    })
}

/// Runs one of this module's tools; `None` when `name` is not one of them.
pub fn dispatch(
    tools: &Tools,
    ctx: &Ctx,
    name: &str,
    args: Map<String, Value>,
) -> Option<Result<Report, CliError>> {
    let app = &ctx.app;
    let run = || -> Result<Report, CliError> {
        match name {
            "memoir_capture" => {
                let p: CaptureParams = parse(name, args)?;
                let profile: Profile = match &p.profile {
                    Some(s) => s
                        .parse()
                        .map_err(|e: String| CliError::new(exit::USAGE, e))?,
                    None => Profile::default(),
                };
                let req = CaptureRequest {
                    turn: p.turn,
                    profile,
                    namespace: p.namespace,
                    dry_run: p.dry_run,
                    model: None,
                    allow_secrets: false,
                };
                let out = app.capture(&req, &tools.write_as(p.branch))?;
                Ok(capture::render(ctx, &out))
            }
            "memoir_taxonomy" => {
                let p: TaxonomyParams = parse(name, args)?;
                let at = ReadPoint {
                    at: p.at,
                    branch: p.branch,
                };
                match p.action.unwrap_or(TaxonomyAction::List) {
                    TaxonomyAction::List => Ok(taxonomy::list(ctx, &app.taxonomy_list(&at)?)),
                    TaxonomyAction::Show => {
                        let id = required(name, "id (the category to show)", p.id)?;
                        Ok(taxonomy::show(ctx, &app.taxonomy_show(&id, &at)?))
                    }
                }
            }
            "memoir_sync_branch" => {
                let p: SyncBranchParams = parse(name, args)?;
                let req = SyncBranchRequest {
                    source: p.source,
                    into: p.into.unwrap_or_else(|| SYNC_DEFAULT_TARGET.to_string()),
                    dry_run: p.dry_run,
                };
                let out = app.sync_branch(&req, &tools.write_as(None))?;
                let mut r = ctx.report(&out);
                r.lines.push(out.message.clone());
                Ok(r)
            }
            "memoir_memory" => {
                let p: MemoryParams = parse(name, args)?;
                let (namespace, branch) = (p.namespace.clone(), p.branch.clone());
                let command = memory_command(p)?;
                let mut who = tools.write_as(branch);
                who.source.get_or_insert_with(|| "memory-tool".to_string());
                let out = app.memory_files(&command, namespace.as_deref(), &who)?;
                let mut r = ctx.report(&out);
                r.lines.push(out.text.clone());
                Ok(r)
            }
            "search" => {
                let p: ConnectorSearchParams = parse(name, args)?;
                let req = SearchRequest {
                    query: p.query,
                    namespace: None,
                    keys: Vec::new(),
                    limit: 20,
                    since: None,
                    until: None,
                    sort: Sort::default(),
                    explain: false,
                };
                let out = app.search(&req, &ReadPoint::head())?;
                let results: Vec<Value> = out
                    .hits
                    .iter()
                    .map(|h| {
                        json!({
                            "id": format!("{}:{}", h.namespace, h.key),
                            "title": h.key,
                            "url": uri_of(&h.namespace, &h.key, None),
                        })
                    })
                    .collect();
                Ok(json_report(json!({ "results": results })))
            }
            "fetch" => {
                let p: ConnectorFetchParams = parse(name, args)?;
                let out = app.get(std::slice::from_ref(&p.id), None, &ReadPoint::head())?;
                let item = out.items.into_iter().next();
                let Some((item, record)) = item.and_then(|i| i.record.clone().map(|r| (i, r)))
                else {
                    return Err(CliError::new(
                        exit::NOT_FOUND,
                        format!("no memory with id '{}'", p.id),
                    ));
                };
                Ok(json_report(json!({
                    "id": item.full_key,
                    "title": item.key,
                    "text": record.content(),
                    "url": uri_of(&item.namespace, &item.key, None),
                    "metadata": {
                        "namespace": item.namespace,
                        "key": item.key,
                        "confidence": record.confidence,
                        "timestamp": record.timestamp,
                        "entries": record.entries.len(),
                        "related_keys": record.all_related().collect::<Vec<_>>(),
                    },
                })))
            }
            _ => unreachable!("only this module's tools are dispatched here"),
        }
    };
    NAMES.contains(&name).then(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_numbers_come_as_numbers_or_numeric_strings() {
        let p: MemoryParams = serde_json::from_value(json!({
            "command": "insert", "path": "/memories/a", "insert_line": "2", "insert_text": "x"
        }))
        .expect("string line");
        assert_eq!(p.insert_line, Some(2));
        let p: MemoryParams = serde_json::from_value(json!({
            "command": "view", "path": "/memories/a", "view_range": [1, "-1"]
        }))
        .expect("mixed range");
        assert_eq!(p.view_range, Some(vec![1, -1]));
        assert!(serde_json::from_value::<MemoryParams>(
            json!({"command": "view", "path": "/m", "view_range": ["x"]})
        )
        .is_err());
    }
}
