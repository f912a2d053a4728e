//! Reading the history: `log` (commits, newest first), `blame` (who changed a memory, and
//! when), `diff` (what changed between two revisions); and `time-travel` (a new branch at a
//! past revision, checked out).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::glob::KeyGlobs;
use crate::key::validate_namespace;
use crate::memory::{read_record, read_record_with_sets, Record};
use crate::object::ObjectId;
use crate::repo::revision::format_iso8601;
use crate::repo::{
    line_stat, unified_diff, Commit, Head, KeyChange, KeyFilter, Op, RefUpdate, Repo, RepoResult,
};

use super::ids::{hex, hex_vec, record_opt};
use super::status::require_namespace;
use super::{parse_key, Memoir, MemoirResult, Outcome, ReadPoint};

/// Which keys `log` and `diff` look at: those of `namespace` (every namespace when none)
/// whose bare path matches one of `keys` (globs; none: every path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyScope {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only paths matching one of these globs.
    pub keys: Vec<String>,
}

impl KeyScope {
    /// The repository filter, or none when every key is in scope (a bad namespace or glob:
    /// exit 1).
    pub(crate) fn filter(&self) -> MemoirResult<Option<KeyFilter>> {
        if let Some(ns) = &self.namespace {
            validate_namespace(ns)?;
        }
        let globs = KeyGlobs::new(&self.keys)?;
        if self.namespace.is_none() && globs.is_all() {
            return Ok(None);
        }
        Ok(Some(KeyFilter::new(self.namespace.as_deref(), globs)))
    }
}

/// Which commits `log` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    /// A revision, or a range `A..B` (reachable from B but not from A); none: the tip of
    /// `branch`, else HEAD.
    pub rev: Option<String>,
    /// The branch listed when no `rev` is given (it must exist).
    pub branch: Option<String>,
    /// Most commits listed.
    pub limit: Option<usize>,
    /// With a namespace or globs, only commits that changed keys in scope.
    pub scope: KeyScope,
}

/// One commit, as `log` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// The commit.
    #[serde(rename = "hash", serialize_with = "hex")]
    pub id: ObjectId,
    /// Its first 8 hex digits.
    pub short_hash: String,
    /// Commit message.
    pub message: String,
    /// Author.
    pub author: String,
    /// Unix seconds.
    pub timestamp: i64,
    /// ISO 8601 (UTC).
    pub date: String,
    /// Parent commits (two for a merge).
    #[serde(serialize_with = "hex_vec")]
    pub parents: Vec<ObjectId>,
    /// Provenance (`actor`, `source`, ...).
    pub metadata: BTreeMap<String, String>,
}

impl LogEntry {
    pub(crate) fn new(id: ObjectId, c: Commit) -> LogEntry {
        LogEntry {
            id,
            short_hash: id.short(8),
            date: format_iso8601(c.timestamp),
            message: c.message,
            author: c.author,
            timestamp: c.timestamp,
            parents: c.parents,
            metadata: c.metadata,
        }
    }

    /// The first line of the message.
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }
}

/// What `log` listed.
#[derive(Debug, Clone, Serialize)]
pub struct LogOutcome {
    /// Always true.
    pub success: bool,
    /// The commits, newest first.
    pub commits: Vec<LogEntry>,
    /// How many.
    pub count: usize,
}

impl Outcome for LogOutcome {
    crate::outcome_json!();
}

/// One commit that changed a memory.
#[derive(Debug, Clone, Serialize)]
pub struct BlameItem {
    /// The commit.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// Its first 8 hex digits.
    pub short_commit: String,
    /// Author.
    pub author: String,
    /// ISO 8601 (UTC).
    pub date: String,
    /// Unix seconds.
    pub timestamp: i64,
    /// Commit message.
    pub message: String,
    /// `added`, `modified` or `removed`.
    pub operation: &'static str,
    /// The commit's `source`, if recorded.
    pub source: Option<String>,
    /// The commit's `actor`, if recorded.
    pub actor: Option<String>,
}

/// One line of a memory's current content and the commit that introduced it.
#[derive(Debug, Clone, Serialize)]
pub struct BlameLine {
    /// The line.
    pub line: String,
    /// The commit that introduced it.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// That commit's author.
    pub author: String,
    /// That commit's date, ISO 8601 (UTC).
    pub date: String,
    /// That commit's `source`, if recorded.
    pub source: Option<String>,
    /// That commit's `actor` (the agent), if recorded.
    pub actor: Option<String>,
}

/// What `blame` found.
#[derive(Debug, Clone, Serialize)]
pub struct BlameOutcome {
    /// Always true (a key never written has no entries).
    pub success: bool,
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// `ns:path`.
    #[serde(skip)]
    pub full_key: String,
    /// Every commit where the value changed, newest first.
    pub entries: Vec<BlameItem>,
    /// With lines asked for: each line of the current content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<BlameLine>>,
}

impl Outcome for BlameOutcome {
    crate::outcome_json!();
}

/// What `diff` compares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffQuery {
    /// The old revision, or a range `A..B` (an empty side is HEAD) [default: `HEAD~1`].
    pub from: Option<String>,
    /// The new revision [default: HEAD].
    pub to: Option<String>,
    /// Only keys in scope.
    pub scope: KeyScope,
    /// Count changes and changed lines.
    pub stat: bool,
    /// A unified diff of each record's content.
    pub patch: bool,
    /// Only which keys changed and how, for a listing that shows no content: the records
    /// are not read, and each change's `old` and `new` are `None` (unless `stat` or `patch`
    /// needs them).
    pub names_only: bool,
}

/// One changed key. Members are declared in sorted order (see [`Outcome::MEMBERS_SORTED`]).
#[derive(Debug, Clone, Serialize)]
pub struct DiffEntry {
    /// The key's path.
    pub key: String,
    /// With stat: lines only in the new content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_added: Option<usize>,
    /// With stat: lines only in the old content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_removed: Option<usize>,
    /// The key's namespace.
    pub namespace: String,
    /// The record after (null when removed). Boxed, as is `old`: a large diff holds
    /// thousands of entries, mostly with one record of the two.
    #[serde(serialize_with = "record_opt")]
    pub new: Option<Box<Record>>,
    /// The record before (null when added).
    #[serde(serialize_with = "record_opt")]
    pub old: Option<Box<Record>>,
    /// `added`, `modified` or `removed`.
    pub operation: &'static str,
    /// With patch: a unified diff of the contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Added, modified or removed.
    #[serde(skip)]
    pub op: Op,
}

impl DiffEntry {
    /// `ns:path`.
    pub fn full_key(&self) -> String {
        format!("{}:{}", self.namespace, self.key)
    }
}

/// The counts of a diff with stat. Members are declared in sorted order.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct DiffStats {
    /// Keys added.
    pub added: u64,
    /// Lines added over every change.
    pub lines_added: u64,
    /// Lines removed over every change.
    pub lines_removed: u64,
    /// Keys modified.
    pub modified: u64,
    /// Keys removed.
    pub removed: u64,
}

/// What `diff` found. Members are declared in sorted order.
#[derive(Debug, Clone, Serialize)]
pub struct DiffOutcome {
    /// The changed keys, in key order.
    pub changes: Vec<DiffEntry>,
    /// How many.
    pub count: usize,
    /// The old commit.
    #[serde(serialize_with = "hex")]
    pub from: ObjectId,
    /// The old revision as given (or its default).
    pub from_rev: String,
    /// With stat: the counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<DiffStats>,
    /// Always true.
    pub success: bool,
    /// The new commit.
    #[serde(serialize_with = "hex")]
    pub to: ObjectId,
    /// The new revision as given (or its default).
    pub to_rev: String,
}

impl Outcome for DiffOutcome {
    crate::outcome_json!();

    const MEMBERS_SORTED: bool = true;
}

/// What `time-travel` did.
#[derive(Debug, Clone, Serialize)]
pub struct TimeTravelOutcome {
    /// Always true.
    pub success: bool,
    /// The new branch, now checked out.
    pub branch: String,
    /// The commit it starts at.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The revision as given.
    pub revision: String,
    /// `Switched to new branch '<name>' at <id8>`.
    pub message: String,
}

impl Outcome for TimeTravelOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// The commits reachable from a revision (or in a range), newest first; with a key
    /// scope, only those that changed keys in it. An unknown revision is exit 2.
    pub fn log(&self, q: &LogQuery) -> MemoirResult<LogOutcome> {
        let filter = q.scope.filter()?;
        self.reading(|repo| {
            let (exclude, include) = match &q.rev {
                Some(r) => repo.resolve_range(r, self.clock().now_secs())?,
                None => (
                    None,
                    self.read_commit(
                        repo,
                        &ReadPoint {
                            at: None,
                            branch: q.branch.clone(),
                        },
                    )?
                    .1,
                ),
            };
            let exclude: Vec<ObjectId> = exclude.into_iter().collect();
            let commits: Vec<LogEntry> = repo
                .log(&[include], &exclude, filter.as_ref(), q.limit)?
                .into_iter()
                .map(|(id, c)| LogEntry::new(id, c))
                .collect();
            // Commits listed prove the namespace exists: only an empty answer looks it up.
            if let Some(ns) = q.scope.namespace.as_ref().filter(|_| commits.is_empty()) {
                require_namespace(repo, &repo.root_of(&include)?, ns)?;
            }
            Ok(LogOutcome {
                success: true,
                count: commits.len(),
                commits,
            })
        })
    }

    /// Every commit where the memory at `key` (`path` or `ns:path`) changed, newest first,
    /// up to `limit`, from a read point; with `lines`, also each line of its content there
    /// and the commit that introduced it. A key never written has no entries (not an error).
    pub fn blame(
        &self,
        key: &str,
        namespace: Option<&str>,
        at: &ReadPoint,
        limit: Option<usize>,
        lines: bool,
    ) -> MemoirResult<BlameOutcome> {
        let key = parse_key(key, namespace)?;
        self.reading(|repo| {
            let (_, at) = self.read_commit(repo, at)?;
            // Without a limit, the entries and the lines come from one walk of the history.
            let (entries, blamed) = match (lines, limit) {
                (true, None) => {
                    let (e, l) = repo.blame_and_lines(&at, &key, &mut |id| content_of(repo, id))?;
                    (e, Some(l))
                }
                (true, Some(_)) => (
                    repo.blame(&at, &key, limit)?,
                    Some(repo.blame_lines(&at, &key, &mut |id| content_of(repo, id))?),
                ),
                (false, _) => (repo.blame(&at, &key, limit)?, None),
            };
            // Entries prove the namespace exists: only an empty answer looks it up.
            if let Some(ns) = namespace.filter(|_| entries.is_empty()) {
                require_namespace(repo, &repo.root_of(&at)?, ns)?;
            }
            let entries = entries
                .into_iter()
                .map(|e| BlameItem {
                    commit: e.commit,
                    short_commit: e.commit.short(8),
                    author: e.info.author,
                    date: format_iso8601(e.info.timestamp),
                    timestamp: e.info.timestamp,
                    message: e.info.message,
                    operation: e.change.as_str(),
                    source: e.info.metadata.get("source").cloned(),
                    actor: e.info.metadata.get("actor").cloned(),
                })
                .collect();
            let lines = if let Some(blamed) = blamed {
                let mut commits: HashMap<ObjectId, Commit> = HashMap::new();
                let mut out = Vec::with_capacity(blamed.len());
                for l in blamed {
                    let c = match commits.entry(l.commit) {
                        Entry::Occupied(e) => e.into_mut(),
                        Entry::Vacant(v) => v.insert(repo.read_commit(&l.commit)?),
                    };
                    out.push(BlameLine {
                        line: l.line,
                        commit: l.commit,
                        author: c.author.clone(),
                        date: format_iso8601(c.timestamp),
                        source: c.metadata.get("source").cloned(),
                        actor: c.metadata.get("actor").cloned(),
                    });
                }
                Some(out)
            } else {
                None
            };
            Ok(BlameOutcome {
                success: true,
                key: key.path().to_string(),
                namespace: key.namespace().to_string(),
                full_key: key.to_string(),
                entries,
                lines,
            })
        })
    }

    /// The keys whose memories differ between two revisions, in key order, with the records
    /// before and after; optionally line counts and unified diffs of the contents. Defaults:
    /// `HEAD~1` against `HEAD`; one revision is compared against HEAD; `A..B` compares A with
    /// B (an empty side is HEAD). An unknown revision is exit 2.
    pub fn diff(&self, q: &DiffQuery) -> MemoirResult<DiffOutcome> {
        let filter = q.scope.filter()?;
        let records = !q.names_only || q.stat || q.patch;
        let (from_rev, to_rev) = diff_revisions(q.from.as_deref(), q.to.as_deref());
        self.reading(|repo| {
            let from = self.resolve_rev(repo, &from_rev)?;
            let to = self.resolve_rev(repo, &to_rev)?;
            let (from_root, to_root) = (repo.root_of(&from)?, repo.root_of(&to)?);
            // Each change's records are read, and its stat and patch made, on the thread
            // that found it.
            let out = repo.diff_each(&from_root, &to_root, filter.as_ref(), &|c| {
                diff_entry(repo, c, records, q.stat, q.patch)
            })?;
            // Changes prove the namespace exists; with none, it must be known on a side.
            if let Some(ns) = q.scope.namespace.as_ref().filter(|_| out.is_empty()) {
                require_namespace(repo, &to_root, ns)
                    .or_else(|e| require_namespace(repo, &from_root, ns).map_err(|_| e))?;
            }
            let mut stats = DiffStats::default();
            for e in &out {
                match e.op {
                    Op::Added => stats.added += 1,
                    Op::Modified => stats.modified += 1,
                    Op::Removed => stats.removed += 1,
                }
                stats.lines_added += e.lines_added.unwrap_or(0) as u64;
                stats.lines_removed += e.lines_removed.unwrap_or(0) as u64;
            }
            Ok(DiffOutcome {
                success: true,
                from,
                to,
                from_rev: from_rev.clone(),
                to_rev: to_rev.clone(),
                count: out.len(),
                changes: out,
                stats: q.stat.then_some(stats),
            })
        })
    }

    /// Creates branch `name` (default `time-travel-<id8>`) at a revision and checks it out.
    pub fn time_travel(&self, rev: &str, name: Option<&str>) -> MemoirResult<TimeTravelOutcome> {
        let repo = self.open_repo()?;
        let at = self.resolve_rev(&repo, rev)?;
        let name = name.map_or_else(|| format!("time-travel-{}", at.short(8)), str::to_string);
        let mut update = RefUpdate::logged_as(format!("time travel: {name} at {}", at.short(8)));
        update.create_branch(&name, at);
        repo.update_refs(update.set_head(Head::Branch(name.clone())))?;
        Ok(TimeTravelOutcome {
            success: true,
            message: format!("Switched to new branch '{name}' at {}", at.short(8)),
            branch: name,
            commit: at,
            revision: rev.to_string(),
        })
    }
}

/// One change as `diff` reports it: its records before and after, and with `stat` or
/// `patch`, its line counts or unified diff.
pub(crate) fn diff_entry(
    repo: &Repo,
    c: KeyChange,
    records: bool,
    stat: bool,
    with_patch: bool,
) -> MemoirResult<DiffEntry> {
    let read = |id: Option<&ObjectId>| -> MemoirResult<Option<Box<Record>>> {
        if records {
            Ok(record_at(repo, id)?.map(Box::new))
        } else {
            Ok(None)
        }
    };
    let old = read(c.old.as_ref())?;
    let new = read(c.new.as_ref())?;
    let op = c.op();
    let (mut lines_added, mut lines_removed, mut patch) = (None, None, None);
    if stat || with_patch {
        let old_text = old.as_ref().map(|r| r.content()).unwrap_or_default();
        let new_text = new.as_ref().map(|r| r.content()).unwrap_or_default();
        if stat {
            let st = line_stat(&old_text, &new_text);
            lines_added = Some(st.added);
            lines_removed = Some(st.removed);
        }
        if with_patch {
            patch = Some(unified_diff(
                &old_text,
                &new_text,
                &format!("a/{}", c.key),
                &format!("b/{}", c.key),
            ));
        }
    }
    let (namespace, key) = c.key.into_parts();
    Ok(DiffEntry {
        namespace,
        key,
        op,
        operation: op.as_str(),
        old,
        new,
        lines_added,
        lines_removed,
        patch,
    })
}

/// The two revisions a diff compares, from what was given: none (`HEAD~1`, `HEAD`), one
/// (it and `HEAD`), a range `A..B` (an empty side is `HEAD`), or two.
fn diff_revisions(from: Option<&str>, to: Option<&str>) -> (String, String) {
    let or_head = |s: &str| if s.is_empty() { "HEAD" } else { s }.to_string();
    match (from, to) {
        (Some(a), None) if a.contains("..") => {
            let (x, y) = a.split_once("..").expect("checked");
            (or_head(x), or_head(y))
        }
        (Some(a), Some(b)) => (a.to_string(), b.to_string()),
        (Some(a), None) => (a.to_string(), "HEAD".to_string()),
        (None, _) => ("HEAD~1".to_string(), "HEAD".to_string()),
    }
}

fn content_of(repo: &Repo, id: &ObjectId) -> RepoResult<String> {
    Ok(read_record(repo.objects(), id)?.content())
}

/// The record with id `id`, if there is an id.
pub(crate) fn record_at(repo: &Repo, id: Option<&ObjectId>) -> MemoirResult<Option<Record>> {
    Ok(id
        .map(|i| read_record_with_sets(repo.objects(), i))
        .transpose()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_revision_defaults() {
        let d = |a: Option<&str>, b: Option<&str>| diff_revisions(a, b);
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(d(None, None), pair("HEAD~1", "HEAD"));
        assert_eq!(d(Some("x"), None), pair("x", "HEAD"));
        assert_eq!(d(Some("x"), Some("y")), pair("x", "y"));
        assert_eq!(d(Some("x..y"), None), pair("x", "y"));
        assert_eq!(d(Some("..y"), None), pair("HEAD", "y"));
        assert_eq!(d(Some("x.."), None), pair("x", "HEAD"));
    }
}
