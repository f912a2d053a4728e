//! History commands: `log`, `blame`, `diff` and `time-travel`.

use serde_json::{json, Value};

use memoir::glob::KeyGlobs;
use memoir::key::validate_namespace;
use memoir::memory::{read_record, Record};
use memoir::object::ObjectId;
use memoir::repo::revision::format_iso8601;
use memoir::repo::{line_stat, unified_diff, Commit, Head, KeyFilter, Op, Repo, RepoError};

use super::context::{parse_key, read_at, resolve_rev, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

/// JSON of one commit, as `log` lists it.
fn commit_json(id: &ObjectId, c: &Commit) -> Value {
    json!({
        "hash": id.to_hex(),
        "short_hash": id.short(8),
        "message": c.message,
        "author": c.author,
        "timestamp": c.timestamp,
        "date": format_iso8601(c.timestamp),
        "parents": c.parents.iter().map(|p| p.to_hex()).collect::<Vec<_>>(),
        "metadata": c.metadata,
    })
}

fn filter_of(namespace: Option<&str>, keys: &[String]) -> Result<Option<KeyFilter>, CliError> {
    if let Some(ns) = namespace {
        validate_namespace(ns)?;
    }
    let globs = KeyGlobs::new(keys)?;
    if namespace.is_none() && globs.is_all() {
        return Ok(None);
    }
    Ok(Some(KeyFilter::new(namespace, globs)))
}

/// Show commits, newest first
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir log\n  memoir --json log -n 20\n  memoir log main..agent-1\n  memoir log --keys 'preferences.*' -n 5\n\nWith --keys or --namespace, only commits that changed matching keys are listed."
)]
pub struct LogArgs {
    /// Revision, or range A..B (commits reachable from B but not A) [default: HEAD]
    #[arg(value_name = "REV")]
    pub rev: Option<String>,
    /// Most commits listed
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub limit: Option<usize>,
    /// Only commits that changed keys whose path matches (repeatable)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Only commits that changed keys in this namespace
    #[arg(long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `log`.
pub fn log(ctx: &Ctx, args: LogArgs) -> Result<Report, CliError> {
    let filter = filter_of(args.namespace.as_deref(), &args.keys)?;
    let repo = ctx.open_repo()?;
    let (exclude, include) = match &args.rev {
        Some(r) => repo.resolve_range(r, ctx.clock.now_secs())?,
        None => (
            None,
            read_at(ctx, &repo, None, args.branch.branch.as_deref())?,
        ),
    };
    let exclude: Vec<ObjectId> = exclude.into_iter().collect();
    let commits = repo.log(&[include], &exclude, filter.as_ref(), args.limit)?;
    drop(repo);
    let mut r = Report::new(json!({
        "success": true,
        "commits": commits.iter().map(|(id, c)| commit_json(id, c)).collect::<Vec<_>>(),
        "count": commits.len(),
    }));
    r.data = true;
    let s = &ctx.style;
    for (id, c) in &commits {
        let merge = if c.parents.len() > 1 { " (merge)" } else { "" };
        r.lines.push(format!(
            "{} {}{}",
            s.bold(&id.short(8)),
            esc(c.message.lines().next().unwrap_or("")),
            merge
        ));
        r.lines.push(format!(
            "  {} · {}",
            esc(&c.author),
            format_iso8601(c.timestamp)
        ));
    }
    if commits.is_empty() {
        r.lines.push(s.warn("no commits"));
    }
    Ok(r)
}

/// Who changed a memory, and when
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir blame preferences.coding.testing\n  memoir --json blame work:infra.database -l 50\n  memoir blame infra.database --lines\n  memoir blame infra.database --at main~10\n\nEvery commit where the key's value changed, newest first, following both sides of merges\n(a change made on a branch and merged is attributed to the branch commit). A key never\nwritten has no entries (exit 0)."
)]
pub struct BlameArgs {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Most entries listed
    #[arg(short = 'l', long = "limit", value_name = "N")]
    pub limit: Option<usize>,
    /// Attribute each line of the current content to the commit that introduced it
    #[arg(long)]
    pub lines: bool,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

fn content_of(repo: &Repo, id: &ObjectId) -> Result<String, RepoError> {
    Ok(read_record(repo.objects(), id)?.content())
}

/// Runs `blame`.
pub fn blame(ctx: &Ctx, args: BlameArgs) -> Result<Report, CliError> {
    let key = parse_key(&args.key, args.namespace.as_deref())?;
    let repo = ctx.open_repo()?;
    let at = read_at(
        ctx,
        &repo,
        args.at.at.as_deref(),
        args.branch.branch.as_deref(),
    )?;
    let entries = repo.blame(&at, &key, args.limit)?;
    let lines = if args.lines {
        Some(repo.blame_lines(&at, &key, &mut |id| content_of(&repo, id))?)
    } else {
        None
    };
    let mut infos = std::collections::HashMap::new();
    if let Some(ls) = &lines {
        for l in ls {
            if let std::collections::hash_map::Entry::Vacant(v) = infos.entry(l.commit) {
                v.insert(repo.read_commit(&l.commit)?);
            }
        }
    }
    drop(repo);
    let s = &ctx.style;
    let mut out_lines = Vec::new();
    let json_entries: Vec<Value> = entries
        .iter()
        .map(|e| {
            out_lines.push(format!(
                "{} {:<8} {} · {} · {}",
                s.bold(&e.commit.short(8)),
                e.change.as_str(),
                format_iso8601(e.info.timestamp),
                esc(&e.info.author),
                esc(e.info.message.lines().next().unwrap_or(""))
            ));
            json!({
                "commit": e.commit.to_hex(),
                "short_commit": e.commit.short(8),
                "author": e.info.author,
                "date": format_iso8601(e.info.timestamp),
                "timestamp": e.info.timestamp,
                "message": e.info.message,
                "operation": e.change.as_str(),
                "source": e.info.metadata.get("source"),
                "actor": e.info.metadata.get("actor"),
            })
        })
        .collect();
    if entries.is_empty() {
        out_lines.push(s.warn(&format!("{} has no history", esc(&key.to_string()))));
    }
    let mut json = json!({
        "success": true,
        "key": key.path(),
        "namespace": key.namespace(),
        "entries": json_entries,
    });
    if let Some(ls) = lines {
        out_lines.push(String::new());
        let mut arr = Vec::new();
        for l in &ls {
            let c = &infos[&l.commit];
            out_lines.push(format!(
                "{} {} │ {}",
                s.bold(&l.commit.short(8)),
                format_iso8601(c.timestamp),
                esc(&l.line)
            ));
            arr.push(json!({
                "line": l.line,
                "commit": l.commit.to_hex(),
                "author": c.author,
                "date": format_iso8601(c.timestamp),
            }));
        }
        json["lines"] = Value::Array(arr);
    }
    let mut r = Report::new(json);
    r.lines = out_lines;
    r.data = true;
    Ok(r)
}

/// What changed between two revisions
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir diff                 # HEAD~1 against HEAD\n  memoir diff main~5          # main~5 against HEAD\n  memoir --json diff main agent-1 --patch\n  memoir diff main..agent-1 --stat -n work --keys 'infra.*'"
)]
pub struct DiffArgs {
    /// Old revision (or A..B) [default: HEAD~1]
    #[arg(value_name = "A")]
    pub from: Option<String>,
    /// New revision [default: HEAD]
    #[arg(value_name = "B")]
    pub to: Option<String>,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Only keys whose path matches (repeatable)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Count changes and changed lines
    #[arg(long)]
    pub stat: bool,
    /// Show a unified diff of each record's content
    #[arg(long)]
    pub patch: bool,
}

fn record_at(repo: &Repo, id: Option<&ObjectId>) -> Result<Option<Record>, CliError> {
    id.map(|i| read_record(repo.objects(), i))
        .transpose()
        .map_err(CliError::from)
}

/// Runs `diff`.
pub fn diff(ctx: &Ctx, args: DiffArgs) -> Result<Report, CliError> {
    let filter = filter_of(args.namespace.as_deref(), &args.keys)?;
    let repo = ctx.open_repo()?;
    let (from_text, to_text) = match (&args.from, &args.to) {
        (Some(a), None) if a.contains("..") => {
            let (x, y) = a.split_once("..").expect("checked");
            (
                if x.is_empty() {
                    "HEAD".to_string()
                } else {
                    x.to_string()
                },
                if y.is_empty() {
                    "HEAD".to_string()
                } else {
                    y.to_string()
                },
            )
        }
        (Some(a), Some(b)) => (a.clone(), b.clone()),
        (Some(a), None) => (a.clone(), "HEAD".to_string()),
        (None, _) => ("HEAD~1".to_string(), "HEAD".to_string()),
    };
    let from = resolve_rev(ctx, &repo, &from_text)?;
    let to = resolve_rev(ctx, &repo, &to_text)?;
    let changes = repo.diff(&repo.root_of(&from)?, &repo.root_of(&to)?, filter.as_ref())?;
    let s = &ctx.style;
    let mut lines = Vec::new();
    let mut out = Vec::new();
    let (mut added, mut modified, mut removed) = (0u64, 0u64, 0u64);
    let (mut lines_added, mut lines_removed) = (0u64, 0u64);
    for c in &changes {
        let old = record_at(&repo, c.old.as_ref())?;
        let new = record_at(&repo, c.new.as_ref())?;
        let op = c.op();
        match op {
            Op::Added => added += 1,
            Op::Modified => modified += 1,
            Op::Removed => removed += 1,
        }
        let old_text = old.as_ref().map(|r| r.content()).unwrap_or_default();
        let new_text = new.as_ref().map(|r| r.content()).unwrap_or_default();
        let mark = match op {
            Op::Added => "+",
            Op::Modified => "~",
            Op::Removed => "-",
        };
        let mut entry = json!({
            "namespace": c.key.namespace(),
            "key": c.key.path(),
            "operation": op.as_str(),
            "old": old.as_ref().map_or(Value::Null, |r| r.to_json()),
            "new": new.as_ref().map_or(Value::Null, |r| r.to_json()),
        });
        let mut head = format!("{mark} {}", esc(&c.key.to_string()));
        if args.stat {
            let st = line_stat(&old_text, &new_text);
            lines_added += st.added as u64;
            lines_removed += st.removed as u64;
            entry["lines_added"] = json!(st.added);
            entry["lines_removed"] = json!(st.removed);
            head.push_str(&format!(" (+{} -{})", st.added, st.removed));
        }
        lines.push(head);
        if args.patch {
            let p = unified_diff(
                &old_text,
                &new_text,
                &format!("a/{}", c.key),
                &format!("b/{}", c.key),
            );
            for l in p.lines() {
                lines.push(format!("  {}", esc(l)));
            }
            entry["patch"] = json!(p);
        }
        out.push(entry);
    }
    drop(repo);
    if changes.is_empty() {
        lines.push(s.info("no changes"));
    } else if args.stat {
        lines.push(s.info(&format!(
            "{} changed: {added} added, {modified} modified, {removed} removed; {lines_added} lines added, {lines_removed} removed",
            changes.len()
        )));
    }
    let mut json = json!({
        "success": true,
        "from": from.to_hex(),
        "to": to.to_hex(),
        "from_rev": from_text,
        "to_rev": to_text,
        "changes": out,
        "count": changes.len(),
    });
    if args.stat {
        json["stats"] = json!({
            "added": added, "modified": modified, "removed": removed,
            "lines_added": lines_added, "lines_removed": lines_removed,
        });
    }
    let mut r = Report::new(json);
    r.lines = lines;
    r.data = true;
    Ok(r)
}

/// Check out a past revision on a new branch
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir time-travel HEAD~3\n  memoir time-travel 'main@{2 days ago}' -b before-migration\n\nCreates `time-travel-<id8>` (or NAME) at REV and checks it out. To only read the past,\nuse --at REV on get, summarize, search, recall, blame or export."
)]
pub struct TimeTravelArgs {
    /// Revision to go back to
    #[arg(value_name = "REV")]
    pub rev: String,
    /// Name of the new branch [default: time-travel-<id8>]
    #[arg(short = 'b', long = "branch", value_name = "NAME")]
    pub name: Option<String>,
}

/// Runs `time-travel`.
pub fn time_travel(ctx: &Ctx, args: TimeTravelArgs) -> Result<Report, CliError> {
    let repo = ctx.open_repo()?;
    let at = resolve_rev(ctx, &repo, &args.rev)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("time-travel-{}", at.short(8)));
    repo.create_branch(&name, &at)?;
    repo.set_head(&Head::Branch(name.clone()))?;
    drop(repo);
    let message = format!("Switched to new branch '{name}' at {}", at.short(8));
    Ok(Report::new(json!({
        "success": true,
        "branch": name,
        "commit": at.to_hex(),
        "revision": args.rev,
        "message": message,
    }))
    .line(ctx.style.ok(&esc(&message))))
}
